"""Checking a judge-response file against :func:`parse_judge_verdict` before scoring."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from datbench_cli.batch.responses import iter_response_lines
from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict


@dataclass
class VerdictCounts:
    """How many verdicts parse to true and false, and which do not parse."""

    true: int = 0
    false: int = 0
    unparsed_ids: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.true + self.false + len(self.unparsed_ids)


def check_judge_file(path: Path) -> VerdictCounts:
    """Apply the verdict parser to each judged id (an errored batch line counts as unparsed).

    Several lines for one id: the last wins, except that an errored line never replaces an
    answer (a failed try before a successful retry, as ``datbench send`` appends). A last line
    cut off mid-write is ignored.
    """
    verdicts: dict[str, bool | None] = {}
    answered: set[str] = set()
    for line in iter_response_lines(path, "raw_judge_output", "verdict", on_torn_tail=_ignore):
        if line.error is not None:
            if line.id not in answered:
                verdicts[line.id] = None
            continue
        answered.add(line.id)
        verdicts[line.id] = parse_judge_verdict(line.parsed, line.text)
    counts = VerdictCounts()
    for ident, verdict in verdicts.items():
        if verdict is True:
            counts.true += 1
        elif verdict is False:
            counts.false += 1
        else:
            counts.unparsed_ids.append(ident)
    return counts


def _ignore(_: int) -> None:
    return None
