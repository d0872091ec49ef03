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
    """Temporary files and staging folders below ``root`` (there should be none)."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.name.endswith(".tmp") or p.name.startswith((".datbench-staging", ".datbench-old"))
    )
