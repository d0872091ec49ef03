"""In-process file-system faults: a disk that fills up after N bytes, a read-only file system.

Both patch the primitives the tool writes through (``os.fdopen`` files, ``Path.write_bytes``,
``os.write``, ``tempfile.mkstemp``, ``os.open`` with a write flag, ``Path.mkdir``), so a command
run in-process meets the fault wherever it happens to write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from unittest import mock

_REAL_FDOPEN = os.fdopen
_REAL_WRITE = os.write
_REAL_WRITE_BYTES = Path.write_bytes


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _MeteredFile:
    """A binary file whose writes draw on a :class:`FullDisk`'s budget."""

    def __init__(self, handle: IO[bytes], disk: FullDisk) -> None:
        self._handle = handle
        self._disk = disk

    def write(self, data: bytes) -> int:
        allowed = self._disk.take(len(data))
        self._handle.write(bytes(data[:allowed]))
        if allowed < len(data):
            self._handle.flush()
            raise _enospc()
        return allowed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _MeteredFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._handle.close()


class FullDisk:
    """A disk with ``budget`` bytes left (``None``: unlimited, only counting ``written``).

    Writes beyond the budget write what fits, then fail with ``ENOSPC``, as a real disk does.
    """

    def __init__(self, budget: int | None = None) -> None:
        self.budget = budget
        self.written = 0

    def take(self, size: int) -> int:
        """How many of ``size`` bytes fit; they are counted as written."""
        allowed = size if self.budget is None else max(0, min(size, self.budget - self.written))
        self.written += allowed
        return allowed

    def _fdopen(self, fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = _REAL_FDOPEN(fd, mode, *args, **kwargs)
        return _MeteredFile(handle, self) if "b" in mode and "r" not in mode else handle

    def _write_bytes(self, path: Path, data: bytes) -> int:
        allowed = self.take(len(data))
        _REAL_WRITE_BYTES(path, bytes(data[:allowed]))
        if allowed < len(data):
            raise _enospc()
        return allowed

    def _write(self, fd: int, data: Any) -> int:
        allowed = self.take(len(data))
        if allowed == 0 and len(data):
            raise _enospc()
        return _REAL_WRITE(fd, bytes(data[:allowed]))

    @contextlib.contextmanager
    def installed(self) -> Iterator[FullDisk]:
        """Patch the write primitives for the duration of the block."""

        def write_bytes(path: Path, data: bytes) -> int:  # a plain function: becomes a method
            return self._write_bytes(path, data)

        with (
            mock.patch("os.fdopen", self._fdopen),
            mock.patch("os.write", self._write),
            mock.patch.object(Path, "write_bytes", write_bytes),
        ):
            yield self


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


@contextlib.contextmanager
def read_only_file_system(root: Path) -> Iterator[None]:
    """Refuse, with ``EROFS``, every attempt to create, write, rename or delete a file or folder
    below ``root``."""
    real_open, real_mkstemp, real_mkdir = os.open, tempfile.mkstemp, Path.mkdir
    real_os_mkdir = os.mkdir
    root = root.resolve()

    def below(path: Any, dir_fd: Any = None) -> bool:
        if dir_fd is not None:  # relative to an open folder (shutil.rmtree): refuse to be safe
            return True
        try:
            return Path(os.fspath(path)).resolve().is_relative_to(root)
        except (TypeError, ValueError):
            return False

    def refuse(path: Any) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & _WRITE_FLAGS and below(path):
            raise refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def fake_mkstemp(*args: Any, dir: Any = None, **kwargs: Any) -> tuple[int, str]:
        if dir is not None and below(dir):
            raise refuse(dir)
        return real_mkstemp(*args, dir=dir, **kwargs)

    def fake_mkdir(path: Path, *args: Any, **kwargs: Any) -> None:
        if below(path) and not path.is_dir():
            raise refuse(path)
        real_mkdir(path, *args, **kwargs)

    def fake_os_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        # As Linux does: an existing name is EEXIST even on a read-only file system.
        if below(path, kwargs.get("dir_fd")) and not os.path.lexists(path):
            raise refuse(path)
        real_os_mkdir(path, *args, **kwargs)

    def fake_write_bytes(path: Path, data: bytes) -> int:
        if below(path):
            raise refuse(path)
        return _REAL_WRITE_BYTES(path, data)

    def guarded(real: Any, paths: int) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            for path in args[:paths]:
                if below(path, kwargs.get("dir_fd")):
                    raise refuse(path)
            return real(*args, **kwargs)

        return call

    with (
        mock.patch("os.open", fake_open),
        mock.patch("tempfile.mkstemp", fake_mkstemp),
        mock.patch.object(Path, "mkdir", fake_mkdir),
        mock.patch.object(Path, "write_bytes", fake_write_bytes),
        mock.patch("os.mkdir", fake_os_mkdir),
        mock.patch("os.unlink", guarded(os.unlink, 1)),
        mock.patch("os.remove", guarded(os.remove, 1)),
        mock.patch("os.rmdir", guarded(os.rmdir, 1)),
        mock.patch("os.replace", guarded(os.replace, 2)),
        mock.patch("os.rename", guarded(os.rename, 2)),
    ):
        yield


def temp_leftovers(root: Path) -> list[str]:
    """Temporary files and export folders below ``root`` (there should be none)."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.name.endswith(".tmp") or p.name.startswith(".datbench-export.")
    )


class Killed(BaseException):
    """The process "died" at a write point (:class:`KillAt`); never caught by the tool."""


class KillAt:
    """A process killed at its ``at``-th write point below ``root`` (``at=None``: never, only
    counting them).

    Every call that changes the file system below ``root`` is a write point: ``os.open`` with a
    write flag (and so ``tempfile.mkstemp``), ``os.write`` and writes to an ``os.fdopen`` file
    on a descriptor so opened, ``Path.write_bytes``, ``os.replace``, ``os.rename``,
    ``os.unlink``, ``os.remove``, ``os.mkdir``, ``os.rmdir``, ``os.chmod`` (a call relative to
    an open folder, as ``shutil.rmtree`` makes, counts). Writes elsewhere (a dataset cache)
    change nothing below ``root``, so a kill there is a kill at the point before. The
    ``at``-th point raises :class:`Killed` before it changes anything, and so does every later
    write anywhere, so no clean-up runs: what is on disk is what a SIGKILL at that moment
    leaves. Only the installing thread and the threads started while installed are the killed
    command: threads that were already running (left by earlier tests in one process, as
    ``python -m unittest`` runs them) are neither counted nor killed.
    """

    def __init__(self, root: Path, at: int | None = None) -> None:
        self.root = root.resolve()
        self.at = at
        self.points = 0
        self.dead = False
        self._fds: set[int] = set()
        self._foreign: set[threading.Thread] = set()

    def _below(self, path: Any, dir_fd: Any = None) -> bool:
        if dir_fd is not None:
            return True
        try:
            return Path(os.path.abspath(os.fspath(path))).is_relative_to(self.root)
        except TypeError:
            return False

    def _point(self, counted: bool = True) -> None:
        if threading.current_thread() in self._foreign:
            return
        if self.dead:
            raise Killed
        if not counted:
            return
        self.points += 1
        if self.at is not None and self.points >= self.at:
            self.dead = True
            raise Killed

    @contextlib.contextmanager
    def installed(self) -> Iterator[KillAt]:
        """Patch the write primitives for the duration of the block."""
        real_open = os.open
        kill = self
        self._foreign = set(threading.enumerate()) - {threading.current_thread()}

        def by_path(real: Any, paths: int) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                dir_fd = kwargs.get("dir_fd") or kwargs.get("src_dir_fd")
                kill._point(any(kill._below(p, dir_fd) for p in args[:paths]))
                return real(*args, **kwargs)

            return call

        def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            below = kill._below(path, kwargs.get("dir_fd"))
            if flags & _WRITE_FLAGS:
                kill._point(below)
            fd = real_open(path, flags, *args, **kwargs)
            if below and flags & _WRITE_FLAGS:
                kill._fds.add(fd)
            else:
                kill._fds.discard(fd)
            return fd

        def fake_write(fd: int, data: Any) -> int:
            kill._point(fd in kill._fds)
            return _REAL_WRITE(fd, data)

        class File:
            def __init__(self, handle: IO[bytes], fd: int) -> None:
                self._handle = handle
                self._fd = fd
                self._counted = fd in kill._fds

            def write(self, data: bytes) -> int:
                # Buffered: what reaches the disk between two writes is a prefix of the file,
                # so its first write is a write point, and its close (the final flush).
                kill._point(self._counted)
                self._counted = False
                return self._handle.write(data)

            def close(self) -> None:
                kill._point(self._handle.closed is False and self._fd in kill._fds)
                self._handle.close()

            def __getattr__(self, name: str) -> Any:
                return getattr(self._handle, name)

            def __enter__(self) -> Any:
                return self

            def __exit__(self, *exc: Any) -> None:
                self.close()

        def fake_fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = _REAL_FDOPEN(fd, mode, *args, **kwargs)
            return File(handle, fd) if "r" not in mode else handle

        def write_bytes(path: Path, data: bytes) -> int:
            kill._point(kill._below(path))
            return _REAL_WRITE_BYTES(path, data)

        one = ("unlink", "remove", "mkdir", "rmdir", "chmod")
        patches = [mock.patch(f"os.{name}", by_path(getattr(os, name), 1)) for name in one]
        patches += [
            mock.patch(f"os.{name}", by_path(getattr(os, name), 2))
            for name in ("replace", "rename")
        ]
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            stack.enter_context(mock.patch("os.open", fake_open))
            stack.enter_context(mock.patch("os.write", fake_write))
            stack.enter_context(mock.patch("os.fdopen", fake_fdopen))
            stack.enter_context(mock.patch.object(Path, "write_bytes", write_bytes))
            yield self


class WritePoints:
    """Every state of the folder ``root`` that a SIGKILL could leave while a command runs
    in-process, recorded at each of its write points.

    A write point is a call, concerning a path below ``root``, of a primitive that changes files:
    ``os.write``, ``os.open`` with a write flag, ``os.replace``/``rename``/``unlink``/``remove``/
    ``rmdir``/``mkdir``/``ftruncate``, ``tempfile.mkstemp``, ``Path.mkdir``/``write_bytes``, the
    writes, flushes and closes of ``os.fdopen`` files. The tree is recorded before and
    after each; an ``os.write`` of ``n`` bytes also records the file holding only its first
    ``n // 2`` of them (the kernel may stop a killed write between pages). :attr:`states` holds
    each distinct state once, in order, with the point that first showed it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.states: list[tuple[str, dict[str, bytes | None]]] = []
        self.points = 0
        self._seen: set[tuple[tuple[str, bytes | None], ...]] = set()
        self._busy = False
        self._lock = threading.RLock()

    def snapshot(self) -> dict[str, bytes | None]:
        """Every file (its bytes) and folder (``None``) below ``root``, by relative path."""
        tree: dict[str, bytes | None] = {}
        if not self.root.is_dir():
            return tree
        for path in sorted(self.root.rglob("*")):
            rel = str(path.relative_to(self.root))
            if path.is_symlink():
                tree[rel] = b"symlink -> " + os.fsencode(os.readlink(path))
            elif path.is_dir():
                tree[rel] = None
            else:
                with contextlib.suppress(FileNotFoundError):
                    tree[rel] = path.read_bytes()
        return tree

    def _record(self, label: str, tree: dict[str, bytes | None] | None = None) -> None:
        state = self.snapshot() if tree is None else tree
        key = tuple(sorted(state.items()))
        if key not in self._seen:
            self._seen.add(key)
            self.states.append((label, state))

    def _below(self, path: Any) -> bool:
        try:
            return Path(os.path.abspath(os.fspath(path))).is_relative_to(self.root)
        except (TypeError, ValueError):
            return False

    def _fd_path(self, fd: int) -> str | None:
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if self._below(target):
                return str(Path(target).relative_to(self.root))
        return None

    def _point(self, name: str, concerns: bool, call: Any) -> Any:
        if not concerns:
            return call()
        with self._lock:  # one write point at a time, whichever thread makes it
            if self._busy:
                return call()
            self._busy = True
            try:
                self.points += 1
                self._record(f"before {name} (point {self.points})")
                result = call()
                self._record(f"after {name} (point {self.points})")
                return result
            finally:
                self._busy = False

    @contextlib.contextmanager
    def recording(self) -> Iterator[WritePoints]:
        """Record the states at every write point below ``root`` during the block."""
        real = {
            name: getattr(os, name)
            for name in ("open", "replace", "rename", "unlink", "remove", "rmdir", "mkdir")
        }
        real_ftruncate, real_mkstemp, real_path_mkdir = os.ftruncate, tempfile.mkstemp, Path.mkdir
        points = self

        def path_call(name: str, paths: int) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                if name == "open" and not (args[1] & _WRITE_FLAGS):
                    return real[name](*args, **kwargs)
                concerns = kwargs.get("dir_fd") is not None or any(
                    self._below(p) for p in args[:paths]
                )
                return self._point(
                    f"os.{name} {args[0]}", concerns, lambda: real[name](*args, **kwargs)
                )

            return call

        def write(fd: int, data: Any) -> int:
            rel = None if self._busy else self._fd_path(fd)
            if rel is None:
                return _REAL_WRITE(fd, data)
            with self._lock:
                start = self.snapshot().get(rel)
                written = int(self._point(f"os.write {rel}", True, lambda: _REAL_WRITE(fd, data)))
                if start is not None and written > 1:  # a kill half-way through this write
                    after = self.snapshot()
                    done = after.get(rel)
                    if done is not None and len(done) >= len(start) + written:
                        half = {**after, rel: done[: len(start) + written // 2]}
                        self._record(f"inside os.write {rel} (point {self.points})", half)
                return written

        def ftruncate(fd: int, length: int) -> None:
            rel = self._fd_path(fd)
            self._point(f"os.ftruncate {rel}", rel is not None, lambda: real_ftruncate(fd, length))

        def mkstemp(*args: Any, dir: Any = None, **kwargs: Any) -> Any:
            concerns = dir is not None and self._below(dir)
            return self._point(
                f"mkstemp in {dir}", concerns, lambda: real_mkstemp(*args, dir=dir, **kwargs)
            )

        def path_mkdir(path: Path, *args: Any, **kwargs: Any) -> None:
            self._point(
                f"mkdir {path}", self._below(path), lambda: real_path_mkdir(path, *args, **kwargs)
            )

        def write_bytes(path: Path, data: bytes) -> int:
            return int(
                self._point(
                    f"write_bytes {path}", self._below(path), lambda: _REAL_WRITE_BYTES(path, data)
                )
            )

        class Recorded:
            """An ``os.fdopen`` file whose writes, flushes and closes are write points."""

            def __init__(self, handle: Any, rel: str | None) -> None:
                self._handle, self._rel = handle, rel

            def _call(self, method: str, *args: Any) -> Any:
                function = getattr(self._handle, method)
                return points._point(
                    f"{method} {self._rel}", self._rel is not None, lambda: function(*args)
                )

            def write(self, data: Any) -> Any:
                return self._call("write", data)

            def flush(self) -> None:
                self._call("flush")

            def close(self) -> None:
                self._call("close")

            def __getattr__(self, name: str) -> Any:
                return getattr(self._handle, name)

            def __enter__(self) -> Any:
                return self

            def __exit__(self, *exc: Any) -> None:
                self.close()

        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            rel = self._fd_path(fd)
            handle = _REAL_FDOPEN(fd, *args, **kwargs)
            mode = args[0] if args else kwargs.get("mode", "r")
            return Recorded(handle, rel) if rel is not None and "r" not in mode else handle

        with contextlib.ExitStack() as stack:
            for name, paths in (("open", 1), ("replace", 2), ("rename", 2), ("unlink", 1),
                                ("remove", 1), ("rmdir", 1), ("mkdir", 1)):  # fmt: skip
                stack.enter_context(mock.patch(f"os.{name}", path_call(name, paths)))
            stack.enter_context(mock.patch("os.write", write))
            stack.enter_context(mock.patch("os.ftruncate", ftruncate))
            stack.enter_context(mock.patch("os.fdopen", fdopen))
            stack.enter_context(mock.patch("tempfile.mkstemp", mkstemp))
            stack.enter_context(mock.patch.object(Path, "mkdir", path_mkdir))
            stack.enter_context(mock.patch.object(Path, "write_bytes", write_bytes))
            self._record("before the command")
            yield self
            self._record("after the command")


def dead_pid() -> int:
    """The id of a process that has ended (for the names a killed writer leaves)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def materialize(state: dict[str, bytes | None], root: Path, pid: int) -> None:
    """Make ``root`` hold exactly ``state``, as a process ``pid`` killed at that moment left it:
    this process's id in the names of temporary files and staging folders becomes ``pid``."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    mine = f"-{os.getpid()}."
    for rel, data in state.items():
        path = root / rel.replace(mine, f"-{pid}.")
        if data is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
