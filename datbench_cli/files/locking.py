"""The run directory's lock: one writing stage at a time, and a refusal that says who holds it.

The lock is an ``flock`` on the run directory itself (no lock file is left behind, and the
kernel drops it when its holder dies, so a killed stage never leaves a stale lock). Exclusive
for stages that replace a set of files, shared for ``score`` (one output renamed into place
whole). A stage that finds the lock taken stops at once with one sentence naming the holder
(its command line and process id, from ``/proc/locks``), never waits, never writes.
Whoever takes the lock first finishes or drops an export a kill interrupted
(:func:`datbench_cli.files.staging.settle`), under the exclusive lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from datbench_cli.errors import InputError
from datbench_cli.files import staging

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking
    fcntl = None  # type: ignore[assignment]


def _holders(directory_fd: int) -> list[int]:
    """Process ids holding an ``flock`` on the directory open as ``directory_fd`` (Linux)."""
    st = os.fstat(directory_fd)
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    with contextlib.suppress(OSError), open("/proc/locks", encoding="ascii") as table:
        for line in table:
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" ("->" marks a waiter).
            if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
                continue
            if fields[5] == inode and fields[4].isdigit():
                pids.append(int(fields[4]))
    return [pid for pid in dict.fromkeys(pids) if pid != os.getpid()]


def _describe(pid: int) -> str:
    """``datbench export-tasks ... (pid 123)`` from the holder's command line, if readable."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"another process (pid {pid})"
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    # "python -m datbench_cli score ..." or ".../datbench score ...": name the stage.
    for index, arg in enumerate(args):
        if arg in {"datbench_cli", "datbench"} or arg.endswith("/datbench"):
            stage = next((a for a in args[index + 1 :] if not a.startswith("-")), None)
            command = f"datbench {stage}" if stage else "datbench"
            return f"`{command}` (pid {pid})"
    return f"process {pid} ({' '.join(' '.join(args).split())[:60]})"


def _refusal(directory: Path, fd: int, stage: str) -> InputError:
    holders = [_describe(pid) for pid in _holders(fd)]
    who = ", ".join(holders) if holders else "another datbench stage"
    return InputError(
        f"this run directory is in use by {who}; {stage} did not start (wait for it to finish, "
        "or use another run directory)",
        directory,
    )


def _take(directory: Path, fd: int, stage: str, mode: int) -> None:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _refusal(directory, fd, stage) from None
    except OSError:
        pass  # a file system without flock (some network mounts): go on unlocked


@contextlib.contextmanager
def hold_lock(directory: Path, stage: str, *, shared: bool = False) -> Iterator[None]:
    """Hold ``directory``'s lock for the block, or raise :class:`InputError` naming the
    holder at once.

    An export a kill interrupted (its private folder left in ``directory``) is first finished
    or dropped under the exclusive lock (:func:`staging.settle`), so every stage starts on one
    whole export."""
    if fcntl is None:
        yield
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        exclusive = not shared or bool(staging.leftovers(directory))
        _take(directory, fd, stage, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        if exclusive:
            staging.settle(directory)
            if shared:
                _take(directory, fd, stage, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def settle(directory: Path) -> None:
    """Finish or drop an export a kill interrupted in ``directory`` (a stage that reads it
    without holding its lock calls this first); nothing to do costs one directory listing."""
    if staging.leftovers(directory):
        with hold_lock(directory, "this command", shared=True):
            pass
