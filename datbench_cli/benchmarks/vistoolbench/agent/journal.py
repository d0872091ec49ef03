"""Append-only JSONL files that survive a kill: whole lines, fsync-ed, torn tails repaired.

``trajectories.jsonl`` is the agent's commit log: a turn is done when its answered trajectory
line is on disk. Its answer line in ``responses.jsonl`` is appended right after; a kill between
the two is repaired on the next start (the answer is copied from the trajectory), so no turn is
lost once committed and none is ever run or written twice.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.errors import UsageError
from datbench_cli.files import jsonio


def repair_tail(path: Path) -> str | None:
    """Complete or drop a last line left without its line end; say what was done."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with jsonio.writing(path), path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return None
        handle.seek(0)
        data = handle.read()
        start = data.rfind(b"\n") + 1
        try:
            whole = isinstance(orjson.loads(data[start:]), dict)
        except orjson.JSONDecodeError:
            whole = False
        if whole:
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
            message = "completed its last line, which lacked a line end"
        else:
            handle.truncate(start)
            message = f"dropped an incomplete last line ({len(data) - start} bytes)"
        handle.flush()
        os.fsync(handle.fileno())
        return message


class Journal:
    """One append-only JSONL file, opened for the whole run (a context manager).

    ``lock``: take an exclusive lock, so two agents cannot write one run directory at once.
    """

    def __init__(self, path: Path, lock: bool = False) -> None:
        self.path = path
        self.lock = lock
        self.repaired: str | None = None
        self._fd = -1

    def __enter__(self) -> Journal:
        with jsonio.writing(self.path):
            if self.path.is_symlink():
                raise UsageError(f"{self.path} is a symbolic link; refusing to write through it")
            self._fd = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644
            )
        try:
            if self.lock:
                _lock(self._fd, self.path)
            self.repaired = repair_tail(self.path)
        except BaseException:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self._fd)

    def append(self, row: dict[str, Any]) -> None:
        """Add one line durably; a failed write leaves no partial line behind."""
        data = memoryview(jsonio.dumps(row) + b"\n")
        with jsonio.writing(self.path):
            size = os.fstat(self._fd).st_size
            try:
                while data:
                    data = data[os.write(self._fd, data) :]
                os.fsync(self._fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)
                raise


def _lock(fd: int, path: Path) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError(f"another datbench agent is writing to {path}") from None
