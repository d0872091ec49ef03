"""What the benchmarks' stages share: which judge tasks ``--skip-done`` skips."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from datbench_cli.benchmarks.base import Warn, ignore


def done_judge_ids(
    skip_done: Path | None, judged: Callable[[Path], set[str]], warn: Warn = ignore
) -> set[str]:
    """The judge-task ids ``--skip-done`` skips: ``judged(skip_done)``, the ids with a parsed
    verdict as the benchmark reads them (none without the option; a missing file means nothing
    is done yet)."""
    if skip_done is None:
        return set()
    if not skip_done.is_file():
        warn(f"{skip_done} does not exist yet; no judge task is skipped")
        return set()
    return judged(skip_done)
