"""A JSONL file held as the byte spans of its lines, each read back (``pread``) when needed.

:class:`LineSpans` is what :class:`~datbench_cli.benchmarks.datbench.references.ReferenceFile`,
:class:`~datbench_cli.batch.response_store.ResponseStore` and
:class:`~datbench_cli.batch.judge_store.JudgeStore` share: per line its id (an
:class:`~datbench_cli.files.id_table.IdTable`), number, offset, length and CRC-32
as read at the start, the open file, and the checks that a line read back is still the one read
then (a file rewritten in place while scoring is an input error, never a silently different
line). Use it as a context manager: the file stays open (also in forked workers) until it is
closed.
"""

from __future__ import annotations

import os
from array import array
from pathlib import Path
from typing import Any, Self

from datbench_cli.files import jsonio
from datbench_cli.files.codes import Ascending, UIntArray
from datbench_cli.files.id_table import IdTable


class LineSpans:
    """The spans of a file's lines, in the order added (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids = IdTable()
        self._numbers = Ascending()  # a few bytes a run of lines without a gap
        self._offsets = UIntArray()
        self._lengths = UIntArray()
        self._crcs = array("I")
        self._fd: int | None = None

    def _add_span(self, ident: str, number: int, offset: int, length: int, crc: int) -> None:
        self.ids.append(ident)
        self._numbers.append(number)
        self._offsets.append(offset)
        self._lengths.append(length)
        self._crcs.append(crc)

    def _open(self) -> None:
        """Every line is added: the ids become a lookup and the file is opened for reading."""
        self.ids.freeze()
        self._fd = os.open(self.path, os.O_RDONLY)

    def __len__(self) -> int:
        return len(self.ids)

    def forget_ids(self) -> None:
        """Drop the ids once every lookup by id is done (``score`` then reads lines by
        position; see :meth:`IdTable.forget`)."""
        self.ids.forget()

    def _same_id(self, index: int, ident: str) -> bool:
        """Whether a line read back at ``index`` still has its id (known while held; after
        :meth:`forget_ids` the CRC alone vouches for it)."""
        return not self.ids.held or ident == self.ids[index]

    def _read(self, index: int) -> Any:
        """The JSON value of span ``index``; ``None`` when its bytes are no longer those read
        at the start or cannot be read."""
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        try:
            return jsonio.read_span(
                self._fd, self._offsets[index], self._lengths[index], self._crcs[index]
            )
        except (OSError, ValueError):
            return None

    def _release_spans(self) -> None:
        self.ids = IdTable()
        self.ids.freeze()
        self._numbers, self._offsets, self._lengths = Ascending(), UIntArray(), UIntArray()
        self._crcs = array("I")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
