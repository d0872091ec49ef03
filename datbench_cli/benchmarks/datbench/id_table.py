"""Sample ids held compactly: one byte string of their UTF-8 and a few integer arrays.

A list of 200,000 ids plus a dict from id to its last index cost about 180 bytes a sample in
Python objects. :class:`IdTable` keeps each id's bytes in one buffer (about 35 bytes a sample
with its end offset, hash and sorted position) and answers "the last index of this id" exactly:
a lookup narrows to the entries whose hash matches (``bisect`` over the sorted hashes) and then
compares the ids' bytes, so two ids that share a hash are never confused.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence

import numpy as np


def _encode(ident: str) -> bytes:
    return ident.encode("utf-8", "surrogatepass")


class IdTable(Sequence[str]):
    """Ids in order (``table[i]``), built with :meth:`append` and then :meth:`freeze`."""

    def __init__(self) -> None:
        self._blob: bytearray | bytes = bytearray()
        self._ends = array("q")
        self._hashes = array("q")
        self._sorted: array | None = None  # the hashes, ascending
        self._order: array | None = None  # index of each sorted hash (ascending within a hash)
        self._later: array | None = None  # index -> the last index of its id (duplicates only)

    def append(self, ident: str) -> None:
        if not isinstance(self._blob, bytearray):
            raise ValueError("IdTable.append() after freeze()")
        self._blob += _encode(ident)
        self._ends.append(len(self._blob))
        self._hashes.append(hash(ident))

    def freeze(self) -> None:
        """Build the lookup (after the last :meth:`append`)."""
        self._blob = bytes(self._blob)  # slices are bytes from now on
        hashes = np.frombuffer(self._hashes, dtype=np.int64) if len(self._hashes) else None
        if hashes is None:
            self._sorted, self._order = array("q"), array("q")
            return
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        self._sorted = array("q", ordered.tobytes())
        self._order = array("q", order.astype(np.int64).tobytes())
        shared = np.flatnonzero(ordered[1:] == ordered[:-1])
        if len(shared):
            self._link_duplicates(shared.tolist())

    def _link_duplicates(self, shared: list[int]) -> None:
        """``_later`` for the ids that occur more than once (hash neighbours compared whole)."""
        assert self._sorted is not None
        later = array("q", range(len(self)))
        done: set[int] = set()
        for position in shared:
            value = self._sorted[position]
            if value in done:
                continue
            done.add(value)
            group = list(self._same_hash(value))  # ascending
            last = {self._bytes_at(index): index for index in group}
            for index in group:
                later[index] = last[self._bytes_at(index)]
        self._later = later

    def _same_hash(self, value: int, backwards: bool = False) -> Iterator[int]:
        assert self._sorted is not None and self._order is not None
        start = bisect_left(self._sorted, value)
        stop = bisect_right(self._sorted, value, start)
        positions = range(stop - 1, start - 1, -1) if backwards else range(start, stop)
        for position in positions:
            yield self._order[position]

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if index < 0:
            index += len(self._ends)
        start = self._ends[index - 1] if index else 0
        return self._blob[start : self._ends[index]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        for index in range(len(self._ends)):
            yield self[index]

    def _bytes_at(self, index: int) -> bytes:
        start = self._ends[index - 1] if index else 0
        return bytes(self._blob[start : self._ends[index]])

    def last_index(self, ident: str) -> int | None:
        """The index of the last entry equal to ``ident`` (``None``: not here)."""
        if self._sorted is None:
            raise ValueError("IdTable.freeze() was not called")
        if not isinstance(ident, str):
            return None
        encoded = None
        for index in self._same_hash(hash(ident), backwards=True):  # the last entry first
            if encoded is None:
                encoded = _encode(ident)
            if self._bytes_at(index) == encoded:
                return index
        return None

    def last_of(self, index: int) -> int:
        """The last index holding the same id as ``index``."""
        return index if self._later is None else self._later[index]
