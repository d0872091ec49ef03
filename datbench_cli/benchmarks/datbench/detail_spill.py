"""Byte blobs kept per group, in order, mostly on disk: the pickled score details ``score``
hands to each dataset's ``compute_metrics`` at the end of a run.

Holding them in memory cost about 260 bytes a sample (52 MB at 200,000 samples). Here each
group keeps at most one small chunk in memory; full chunks go to one unnamed temporary file
(in the run directory where possible; it vanishes with the process, whatever happens) and are
read back, one group at a time, when the group is aggregated (a large group one detail at a
time, on each pass its ``compute_metrics`` makes: the scorers only go through their details).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

#: Bytes of blobs a group keeps in memory before they go to the file.
CHUNK = 1 << 16
#: A dataset with more details than this gets them unpickled pass by pass (about 1 KB each
#: once unpickled: 1 MB at most held at once).
HELD = 1024
_FRAME = 8  # bytes of the length before each blob


class DetailSpill:
    """Blobs appended per group; :meth:`blobs` gives a group's back in the order added."""

    def __init__(self, directory: Path | None = None, chunk: int | None = None) -> None:
        self._directory = directory
        self._chunk = CHUNK if chunk is None else chunk
        self._buffers: dict[str, bytearray] = {}
        self._chunks: dict[str, list[tuple[int, int]]] = {}
        self._file: IO[bytes] | None = None
        self._end = 0

    def add(self, group: str, blob: bytes) -> None:
        """Append ``blob`` to ``group``."""
        buffer = self._buffers.get(group)
        if buffer is None:
            buffer = self._buffers[group] = bytearray()
        buffer += len(blob).to_bytes(_FRAME, "little")
        buffer += blob
        if len(buffer) >= self._chunk:
            self._write(group, buffer)

    def _write(self, group: str, buffer: bytearray) -> None:
        if self._file is None:
            try:
                self._file = tempfile.TemporaryFile(dir=self._directory, buffering=0)
            except OSError:
                self._file = tempfile.TemporaryFile(buffering=0)
        written = 0
        with memoryview(buffer) as view:
            while written < len(buffer):
                written += os.pwrite(self._file.fileno(), view[written:], self._end + written)
        self._chunks.setdefault(group, []).append((self._end, len(buffer)))
        self._end += len(buffer)
        buffer.clear()

    def blobs(self, group: str) -> Iterator[bytes]:
        """The blobs of ``group``, in the order they were added."""
        for offset, length in self._chunks.get(group, ()):
            assert self._file is not None
            yield from _frames(_read(self._file.fileno(), offset, length))
        yield from _frames(bytes(self._buffers.get(group, b"")))

    def unpickled(self, group: str, count: int, held: int | None = None) -> Sequence[Any]:
        """The ``count`` blobs of ``group``, unpickled, for a ``compute_metrics``: a list when
        there are at most ``held`` of them, else a sequence that unpickles them again on each
        pass, so one large dataset never has all its details in memory at once."""
        if count <= (HELD if held is None else held):
            return [pickle.loads(blob) for blob in self.blobs(group)]
        return _Unpickled(self, group, count)

    def close(self) -> None:
        self._buffers.clear()
        self._chunks.clear()
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


class _Unpickled(Sequence[Any]):
    """A group's blobs, unpickled as they are gone through (see :meth:`DetailSpill.unpickled`)."""

    def __init__(self, spill: DetailSpill, group: str, count: int) -> None:
        self._spill, self._group, self._count = spill, group, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        for blob in self._spill.blobs(self._group):
            yield pickle.loads(blob)

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]


def _read(fd: int, offset: int, length: int) -> bytes:
    parts = []
    while length:
        part = os.pread(fd, length, offset)
        if not part:
            raise OSError("the temporary file of score details ended early")
        parts.append(part)
        offset += len(part)
        length -= len(part)
    return b"".join(parts)


def _frames(data: bytes) -> Iterator[bytes]:
    at = 0
    while at < len(data):
        size = int.from_bytes(data[at : at + _FRAME], "little")
        at += _FRAME
        yield data[at : at + size]
        at += size
