"""Append-only JSONL files that survive a kill: whole lines, fsync-ed, torn tails repaired.

``trajectories.jsonl`` is the agent's commit log: a turn is done when its answered trajectory
line is on disk. Its answer line in ``responses.jsonl`` is appended right after; a kill between
the two is repaired on the next start (the answer is copied from the trajectory), so no turn is
lost once committed and none is ever run or written twice.
"""

from __future__ import annotations

from pathlib import Path

from datbench_cli.files.append_log import AppendLog


class Journal(AppendLog):
    """One of the agent's append-only files (no symlink followed); the agent holds the run
    directory's lock while it writes them."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, follow_links=False)
