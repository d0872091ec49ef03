"""Names as small integers, and per-sample arrays of them one byte wide while the codes fit.

A run has a handful of capabilities, eval modes and datasets, so a sample's codes fit in a
byte each; :class:`UIntArray` widens itself (to 2, then 4, then 8 bytes) only when a code
does not fit (a hostile file with thousands of dataset names). :class:`OptionalFloats` holds
a float per sample that most runs never have (an item's discrimination weight) and costs
nothing until the first one arrives. :class:`Ascending` holds increasing integers that mostly
step by one (line numbers, the places of the samples that have a response) as the runs where
they do, a few bytes a run instead of four a value.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import numpy as np

_WIDER = {"B": "H", "H": "I", "I": "Q"}
_LIMITS = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF, "Q": (1 << 64) - 1}
_DTYPES = {"B": np.uint8, "H": np.uint16, "I": np.uint32, "Q": np.uint64}


class Codes:
    """Names to small integers, in order of first appearance (a name that cannot be hashed,
    from a hostile line, gets a code of its own)."""

    def __init__(self) -> None:
        self.names: list[Any] = []
        self._index: dict[Any, int] = {}

    def code(self, name: Any) -> int:
        try:
            found = self._index.get(name)
        except TypeError:
            self.names.append(name)
            return len(self.names) - 1
        if found is None:
            found = self._index[name] = len(self.names)
            self.names.append(name)
        return found

    def get(self, name: Any, default: int = -1) -> int:
        """The code of ``name`` (``default``: never seen)."""
        try:
            return self._index.get(name, default)
        except TypeError:
            return default


class UIntArray:
    """Non-negative integers, appended in order, in the narrowest array that holds them (codes,
    and the offsets, lengths and places of a run's lines: 4 bytes each below 4 GiB)."""

    def __init__(self) -> None:
        self.values = array("B")

    def append(self, code: int) -> None:
        values = self.values
        while code > _LIMITS[values.typecode]:
            values = self.values = array(_WIDER[values.typecode], values)
        values.append(code)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: int) -> int:
        return self.values[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self.values)

    def numpy(self) -> np.ndarray:
        """The codes as a read-only numpy view."""
        dtype = _DTYPES[self.values.typecode]
        return np.frombuffer(self.values, dtype=dtype) if len(self.values) else np.zeros(0, dtype)


class Ascending:
    """Increasing integers, appended in order, held as runs that step by one: a value is its
    place plus the shift of the run it is in. Values that seldom skip (line numbers past the
    odd blank line, the samples that have a response) cost a few bytes a run; once runs are
    more than a quarter of the values, they are held one by one (:class:`UIntArray`) instead.
    """

    def __init__(self) -> None:
        self._length = 0
        self._starts = UIntArray()  # the place where each run starts
        self._shifts = UIntArray()  # value minus place, in that run
        self._plain: UIntArray | None = None  # every value, once runs do not pay

    def append(self, value: int) -> None:
        if value < 0:
            raise ValueError("Ascending holds non-negative integers")
        plain = self._plain
        if plain is not None:
            plain.append(value)
            self._length += 1
            return
        shifts = self._shifts
        shift = value - self._length
        if not len(shifts) or shift != shifts[-1] or shift < 0:
            if len(shifts) > 16 + self._length // 4 or shift < 0:
                plain = UIntArray()
                for index in range(self._length):
                    plain.append(self[index])
                plain.append(value)
                self._plain, self._starts, self._shifts = plain, UIntArray(), UIntArray()
                self._length += 1
                return
            self._starts.append(self._length)
            shifts.append(shift)
        self._length += 1

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> int:
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("Ascending index out of range")
        if self._plain is not None:
            return self._plain[index]
        shifts = self._shifts
        if len(shifts) == 1:
            return index + shifts[0]
        return index + shifts[bisect_right(self._starts.values, index) - 1]

    def __iter__(self) -> Iterator[int]:
        for index in range(self._length):
            yield self[index]


class OptionalFloats:
    """A float or ``None`` per sample (stored as NaN), allocated at the first float."""

    def __init__(self) -> None:
        self._length = 0
        self._values: array | None = None

    def append(self, value: float | None) -> None:
        if value is not None and self._values is None:
            self._values = array("d", [math.nan]) * self._length
        if self._values is not None:
            self._values.append(math.nan if value is None else value)
        self._length += 1

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> float:
        """The value at ``index``; NaN where there is none."""
        if self._values is None:
            if not -self._length <= index < self._length:
                raise IndexError("OptionalFloats index out of range")
            return math.nan
        return self._values[index]
