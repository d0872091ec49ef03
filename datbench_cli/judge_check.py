"""Checking a judge-response file against :func:`parse_judge_verdict` before scoring."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from datbench_cli.judge import parse_judge_verdict
from datbench_cli.responses import iter_response_lines


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
    """Apply the verdict parser to every line (an errored batch line counts as unparsed)."""
    counts = VerdictCounts()
    for line in iter_response_lines(path, "raw_judge_output", "verdict"):
        verdict = None if line.error else parse_judge_verdict(line.parsed, line.text)
        if verdict is True:
            counts.true += 1
        elif verdict is False:
            counts.false += 1
        else:
            counts.unparsed_ids.append(line.id)
    return counts
