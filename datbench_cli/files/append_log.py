"""Append-only JSONL files that survive a kill: whole lines, fsync-ed, a torn tail repaired.

Used where a long run commits its progress line by line (``datbench send``'s output,
``datbench agent``'s trajectories and responses): a rerun reads what is on disk and goes on.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any, Self

import orjson

from datbench_cli.errors import UsageError
from datbench_cli.files import jsonio
from datbench_cli.runtime import interrupt


def repair_tail(path: Path, held: int | None = None) -> str | None:
    """Complete or drop a last line left without its line end (by a kill); say what was done
    (``None``: nothing to repair). ``held``: a descriptor open on the file, which ``path``
    must still name (see :func:`_check_still_named`)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with jsonio.writing(path), path.open("rb+") as handle:
        if held is not None:
            _check_still_named(path, held, os.fstat(handle.fileno()))
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


class AppendLog:
    """One append-only JSONL file, held open for a whole run (a context manager).

    Opening repairs a torn last line (``repaired`` says how) and, with ``lock_holder``, takes an
    exclusive lock so two runs cannot write one file at once (the refusal names the holder).
    ``follow_links=False`` refuses a symlink at ``path`` (files inside a run directory), and
    anything there that is not a regular file (a pipe would block the open until a reader
    came: forever); ``make_parent`` creates the folder of a user-named output.
    """

    def __init__(
        self,
        path: Path,
        *,
        lock_holder: str | None = None,
        follow_links: bool = True,
        make_parent: bool = False,
    ) -> None:
        self.path = path
        self.lock_holder = lock_holder
        self.follow_links = follow_links
        self.make_parent = make_parent
        self.repaired: str | None = None
        self._fd = -1
        self._regular = True  # a pipe or device (-o /dev/stdout) is written, never fsync-ed

    def __enter__(self) -> Self:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        with jsonio.writing(self.path):
            if not self.follow_links:
                if self.path.is_symlink():
                    raise UsageError(
                        f"{self.path} is a symbolic link; refusing to write through it"
                    )
                # A pipe put there is opened without waiting for a reader, then refused below.
                flags |= os.O_NOFOLLOW | os.O_NONBLOCK
                _check_regular(self.path)
            if self.make_parent:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, flags, 0o644)
        try:
            self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
            if not self.follow_links and not self._regular:
                _check_regular(self.path, os.fstat(self._fd))
            if self.lock_holder is not None:
                _lock(self._fd, self.path, self.lock_holder)
            with jsonio.writing(self.path):
                _check_still_named(self.path, self._fd, os.stat(self.path))
            self.repaired = repair_tail(self.path, self._fd)
        except BaseException:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self._fd)

    def append(self, row: dict[str, Any]) -> None:
        """Add one line, durably; a failed write (disk full) leaves the file as it was."""
        interrupt.checkpoint()
        data = jsonio.dumps(row) + b"\n"
        with jsonio.writing(self.path):
            if not self._regular:  # a pipe or device: nothing to sync or cut back
                jsonio.write_all(self._fd, data)
                return
            size = os.fstat(self._fd).st_size
            try:
                jsonio.write_all(self._fd, data)
                os.fsync(self._fd)
            except OSError:
                # Drop the part of the line that made it to disk: no torn line is left behind.
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)
                raise


def _check_regular(path: Path, found: os.stat_result | None = None) -> None:
    """Refuse ``path`` (or the file open as ``found``) when it is there and is not a regular
    file: a pipe, device or folder in a run directory is never written in its place."""
    if found is None:
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            return
    if not stat.S_ISREG(found.st_mode):
        raise UsageError(
            f"{path} is not a regular file (a pipe, device or folder); datbench appends only "
            "to a regular file there: move it away"
        )


def _check_still_named(path: Path, held: int, named: os.stat_result) -> None:
    """Refuse to go on when ``path`` no longer names the file open as ``held``: a link or
    another file put there since the open would be repaired (truncated) in its place, and the
    lines appended to a file no folder holds any more."""
    if not os.path.samestat(os.fstat(held), named):
        raise UsageError(
            f"{path} was replaced while datbench opened it (by a link or another file); "
            "nothing was written: run the same command again"
        )


def _lock(fd: int, path: Path, holder: str) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError(f"another {holder} is writing to {path}") from None
