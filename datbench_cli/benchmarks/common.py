"""What the benchmarks' stages share: which judge tasks ``--skip-done`` skips, the response
texts the judge was asked about, the terminal cells of an accuracy with its error bar, and the
note of the answers counted as they are."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.batch.digests import DIGEST_FIELD, is_digest
from datbench_cli.benchmarks.base import Warn, ignore
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import same_file
from datbench_cli.files.rundir import JUDGE_DIGESTS, JUDGE_TASKS, RunDir


def done_judge_ids(
    skip_done: Path | None, judged: Callable[[Path], set[str]], warn: Warn = ignore
) -> set[str]:
    """The judge-task ids ``--skip-done`` skips: ``judged(skip_done)``, the ids with a parsed
    verdict as the benchmark reads them (none without the option; a missing file means nothing
    is done yet)."""
    if skip_done is None:
        return set()
    if not skip_done.exists():
        warn(f"{skip_done} does not exist yet; no judge task is skipped")
        return set()
    return judged(skip_done)


def judge_task_digests(path: Path) -> dict[str, str]:
    """``id -> response_digest`` of a judge-tasks file (empty when it does not exist)."""
    if not path.is_file():
        return {}
    digests: dict[str, str] = {}
    for _, line in jsonio.iter_jsonl(path):
        ident, digest = line.get("id"), line.get(DIGEST_FIELD)
        if isinstance(ident, str) and isinstance(digest, str) and is_digest(digest):
            digests[ident] = digest
    return digests


def asked_digests(run: RunDir) -> dict[str, str]:
    """``judge task id -> response_digest`` a native judge line without a digest is taken to
    have judged: the text the run's judge tasks last asked about for the id
    (``judge_digests.json``, which keeps the ids a later ``--skip-done`` round left out); a
    run from before that file: its judge_tasks.jsonl."""
    if run.optional_file(JUDGE_DIGESTS) is None:
        return judge_task_digests(run.path(JUDGE_TASKS))
    return _asked(run)


def record_asked(run: RunDir, out: Path, lines: Iterable[Mapping[str, Any]]) -> int:
    """Record the digests of judge task ``lines`` in ``judge_digests.json`` when ``out`` is
    the run's own judge_tasks.jsonl (tasks written elsewhere, another model's or a retry round,
    leave the record alone); the caller holds the run's lock and writes the tasks after. Ids
    not in ``lines`` keep theirs. Returns how many ids were asked about another text before."""
    if not same_file(out, run.path(JUDGE_TASKS)):
        return 0
    if run.optional_file(JUDGE_DIGESTS) is not None:
        asked = _asked(run)
    else:  # a run from before the file: what its judge tasks asked, when they can be read
        try:
            asked = judge_task_digests(run.path(JUDGE_TASKS))
        except InputError:
            asked = {}
    changed = 0
    for line in lines:
        ident, digest = line["id"], line[DIGEST_FIELD]
        changed += ident in asked and asked[ident] != digest
        asked[ident] = digest
    jsonio.write_bytes_atomic(run.path(JUDGE_DIGESTS), orjson.dumps(asked) + b"\n")
    return changed


def _asked(run: RunDir) -> dict[str, str]:
    path = run.path(JUDGE_DIGESTS)
    asked = jsonio.read_json(path)
    if not isinstance(asked, dict) or not all(is_digest(d) for d in asked.values()):
        raise InputError(
            "is not the map of judge task ids to response digests make-judge-tasks writes",
            path,
            hint="delete it to check verdicts without a digest against judge_tasks.jsonl",
        )
    return asked


def no_judge_lines(path: Path) -> InputError:
    """The error of a judge file ``check-judge`` reads outside a run directory that holds no
    line at all (empty, blank lines only): nothing to check is no passing check."""
    return InputError(
        "holds no judge response line: nothing to check",
        path,
        hint="an empty download of a judge batch? run the judge, then check its output file",
    )


def changed_note(changed: int) -> str | None:
    """What ``make-judge-tasks`` says when ``changed`` judge tasks ask about another response
    text than the run's judge tasks did before."""
    if not changed:
        return None
    return (
        f"{changed} judge task(s) ask about a response that changed since the judge was asked "
        "about it: from now on a native judge line without response_digest for one of them "
        "counts for the new text, so judge them again (send and batch runners carry the digest)"
    )


def bar_cell(value: float | None, count: int, entry: dict[str, Any] | None = None) -> str:
    """A terminal cell ``61.2 [59.8, 62.6]``: percent, with the 95% interval in percent when
    the ``summary.uncertainty`` entry knows it ("-" over nothing). The interval is the
    report's (continuity-corrected Wilson, within [0, 1]); it is not symmetric, so no ``±``."""
    if not count or value is None:
        return "-"
    ci = (entry or {}).get("ci95")
    if not isinstance(ci, list | tuple) or len(ci) != 2:
        return f"{value * 100:.1f}"
    low, high = (min(max(float(x), 0.0), 1.0) for x in ci)  # older reports: normal intervals
    return f"{value * 100:.1f} [{low * 100:.1f}, {high * 100:.1f}]"


def mdd_cell(entry: dict[str, Any] | None) -> str:
    """The minimum detectable difference at 80% power, in points ("-" when undefined)."""
    return mdd_points((entry or {}).get("mdd80"))


def mdd_points(value: float | None) -> str:
    """A minimum detectable difference in points: ">100" past the whole scale (a group of two
    samples: 140.1), where no difference at all is detectable; "-" when undefined."""
    if value is None:
        return "-"
    return ">100" if value > 1 else f"{value * 100:.1f}"


def as_is_note(statuses: Mapping[str, int], what: str) -> str | None:
    """The line under a table counting the answers taken as they are, by status (empty,
    refused, truncated): ``"<what>: 4 empty, 0 refused, 1 truncated"``; ``None`` when none."""
    counts = {status: statuses.get(status, 0) for status in ("empty", "refused", "truncated")}
    if not any(counts.values()):
        return None
    return f"{what}: " + ", ".join(f"{n} {status}" for status, n in counts.items())
