"""In-process file-system faults: a disk that fills up after N bytes, a read-only file system.

Both patch the primitives the tool writes through (``os.fdopen`` files, ``Path.write_bytes``,
``os.write``, ``tempfile.mkstemp``, ``os.open`` with a write flag, ``Path.mkdir``), so a command
run in-process meets the fault wherever it happens to write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
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
    leaves.
    """

    def __init__(self, root: Path, at: int | None = None) -> None:
        self.root = root.resolve()
        self.at = at
        self.points = 0
        self.dead = False
        self._fds: set[int] = set()

    def _below(self, path: Any, dir_fd: Any = None) -> bool:
        if dir_fd is not None:
            return True
        try:
            return Path(os.path.abspath(os.fspath(path))).is_relative_to(self.root)
        except TypeError:
            return False

    def _point(self, counted: bool = True) -> None:
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
