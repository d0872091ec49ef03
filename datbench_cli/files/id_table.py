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
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

_NARROW = 0xFFFFFFFF  # what an unsigned 32-bit entry holds


def _encode(ident: str) -> bytes:
    return ident.encode("utf-8", "surrogatepass")


class IdTable(Sequence[str]):
    """Ids in order (``table[i]``), built with :meth:`append` and then :meth:`freeze`."""

    def __init__(self) -> None:
        self._blob: bytearray | bytes = bytearray()
        self._ends = array("I")  # widened to 8 bytes past 4 GiB of ids
        self._hashes = array("q")
        self._sorted: array | None = None  # the hashes, ascending
        self._order: array | None = None  # index of each sorted hash (ascending within a hash)
        self._later: array | None = None  # index -> the last index of its id (duplicates only)
        self._duplicated = 0  # ids held more than once
        self._count: int | None = None  # the length, once the ids are forgotten

    def append(self, ident: str) -> None:
        if not isinstance(self._blob, bytearray):
            raise ValueError("IdTable.append() after freeze()")
        self._blob += _encode(ident)
        end = len(self._blob)
        if end > _NARROW and self._ends.typecode == "I":
            self._ends = array("q", self._ends)
        self._ends.append(end)
        self._hashes.append(hash(ident))

    def freeze(self) -> None:
        """Build the lookup (after the last :meth:`append`)."""
        self._blob = bytes(self._blob)  # slices are bytes from now on
        hashes = np.frombuffer(self._hashes, dtype=np.int64) if len(self._hashes) else None
        if hashes is None:
            self._sorted, self._order = array("q"), array("I")
            return
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        self._sorted = array("q", ordered.tobytes())
        wide = len(order) > _NARROW
        narrowed = order.astype(np.int64 if wide else np.uint32)
        self._order = array("q" if wide else "I", narrowed.tobytes())
        del hashes
        self._hashes = array("q")  # the sorted copy is all a lookup needs
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
            counts = Counter(self._bytes_at(index) for index in group)
            self._duplicated += sum(1 for n in counts.values() if n > 1)
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

    @property
    def held(self) -> bool:
        """Whether the ids are still here (see :meth:`forget`)."""
        return self._count is None

    def forget(self) -> None:
        """Drop the ids and their lookup, keeping the length and :meth:`last_of` (what a run
        needs once every id has been looked up); reading an id or looking one up is gone."""
        self._count = len(self._ends)
        self._blob, self._ends = b"", array("I")
        self._sorted, self._order = array("q"), array("I")

    def __len__(self) -> int:
        return len(self._ends) if self._count is None else self._count

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if self._count is not None:
            raise ValueError("the ids were forgotten")
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
        if self._count is not None:
            raise ValueError("the ids were forgotten")
        if not isinstance(ident, str):
            return None
        encoded = None
        for index in self._same_hash(hash(ident), backwards=True):  # the last entry first
            if encoded is None:
                encoded = _encode(ident)
            if self._bytes_at(index) == encoded:
                return index
        return None

    def __contains__(self, ident: object) -> bool:
        return isinstance(ident, str) and self.last_index(ident) is not None

    def count_absent_from(self, other: IdTable) -> int:
        """How many distinct ids of this table ``other`` does not hold (hashes compared in
        bulk, every hash match confirmed by comparing the ids' bytes)."""
        assert self._sorted is not None and self._order is not None
        assert other._sorted is not None and other._order is not None
        if not len(self._sorted):
            return 0
        mine = np.frombuffer(self._sorted, dtype=np.int64)
        theirs = np.frombuffer(other._sorted, dtype=np.int64) if len(other._sorted) else None
        if theirs is None:
            present = np.zeros(len(mine), dtype=bool)
        else:
            at = np.searchsorted(theirs, mine).clip(0, len(theirs) - 1)
            present = theirs[at] == mine
            first = at.tolist()
        absent = 0
        for position, index in enumerate(self._order):
            if self.last_of(index) != index:
                continue  # an id held several times counts once, at its last index
            if not present[position] or not other._holds_at(first[position], self._bytes_at(index)):
                absent += 1
        return absent

    def _holds_at(self, position: int, encoded: bytes) -> bool:
        """Whether an id of the hash at sorted ``position`` (its first) is ``encoded``."""
        assert self._sorted is not None and self._order is not None
        value = self._sorted[position]
        while position < len(self._sorted) and self._sorted[position] == value:
            if self._bytes_at(self._order[position]) == encoded:
                return True
            position += 1
        return False

    def duplicate_ids(self) -> int:
        """How many ids are held more than once."""
        return self._duplicated

    def last_of(self, index: int) -> int:
        """The last index holding the same id as ``index``."""
        return index if self._later is None else self._later[index]
