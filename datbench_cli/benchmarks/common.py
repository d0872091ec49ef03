"""What the benchmarks' stages share: which judge tasks ``--skip-done`` skips, the digests the
judge tasks recorded, the terminal cells of an accuracy with its error bar, and the note of the
answers counted as they are."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from datbench_cli.batch.digests import DIGEST_FIELD, is_digest
from datbench_cli.benchmarks.base import Warn, ignore
from datbench_cli.files import jsonio


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
    """``id -> response_digest`` of a judge-tasks file (empty when it does not exist): what a
    native judge line without a digest is matched against."""
    if not path.is_file():
        return {}
    digests: dict[str, str] = {}
    for _, line in jsonio.iter_jsonl(path):
        ident, digest = line.get("id"), line.get(DIGEST_FIELD)
        if isinstance(ident, str) and isinstance(digest, str) and is_digest(digest):
            digests[ident] = digest
    return digests


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
