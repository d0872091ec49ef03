"""The answered lines of a VLM response file, for scoring, without one object per line.

:class:`ResponseStore` (what ``score`` uses) reads the file once with the same rules as
:func:`~datbench_cli.batch.responses.load_vlm_responses` and keeps, per answered line, its id
(in an :class:`~datbench_cli.files.id_table.IdTable`), its status and the byte
span of the line; a response is parsed again from the file when it is scored, and a line
whose bytes are no longer those read at the start (CRC-32) is an input error, never a silently
different answer. :class:`HeldResponses` puts responses already in memory (the Python API)
behind the same questions. Both answer by *position*: the place of a line among the answered
lines, in file order; the last line of an id is the one that counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from datbench_cli.batch.answers import VLMResponse
from datbench_cli.batch.line_keys import RESPONSE_KEYS, UnknownKeys
from datbench_cli.batch.responses import (
    RESPONSE_STATUSES,
    LoadedResponses,
    ResponseLine,
    response_line,
)
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.line_spans import LineSpans

_STATUS_CODES = {status: code for code, status in enumerate(RESPONSE_STATUSES)}


class Responses(Protocol):
    """Answered response lines by position (see the module docstring)."""

    def __len__(self) -> int: ...

    def last(self, ident: str) -> int | None:
        """The position of the last answered line of ``ident`` (``None``: none)."""
        ...

    def response(self, position: int) -> VLMResponse:
        """The response of the line at ``position``."""
        ...

    def status(self, position: int) -> str | None:
        """The status of the line at ``position`` (``None``: not known, judge by its text)."""
        ...

    def size(self, position: int) -> int:
        """An upper bound of the length of the line's model output, in characters."""
        ...

    def duplicate_ids(self) -> int:
        """How many ids have more than one answered line."""
        ...

    def unmatched(self, matched: bytearray) -> int:
        """How many distinct ids have no position marked in ``matched``."""
        ...

    def get(self, ident: str) -> VLMResponse | None:
        """The response of the last answered line of ``ident``."""
        ...

    def forget_ids(self) -> None:
        """Drop what looks ids up (every sample has found its response): only reading by
        position is left."""
        ...

    def release(self) -> None:
        """Drop everything held per line (every sample is scored)."""
        ...


class HeldResponses:
    """Responses in memory behind :class:`Responses` (``statuses``: id -> status)."""

    def __init__(
        self, responses: Iterable[VLMResponse], statuses: Mapping[str, str] | None = None
    ) -> None:
        self._responses = list(responses)
        self._last = {r.id: i for i, r in enumerate(self._responses)}
        self._statuses = statuses or {}

    def __len__(self) -> int:
        return len(self._responses)

    def last(self, ident: str) -> int | None:
        return self._last.get(ident)

    def response(self, position: int) -> VLMResponse:
        return self._responses[position]

    def status(self, position: int) -> str | None:
        return self._statuses.get(self._responses[position].id)

    def size(self, position: int) -> int:
        return len(self._responses[position].model_output or "")

    def duplicate_ids(self) -> int:
        return sum(1 for n in Counter(r.id for r in self._responses).values() if n > 1)

    def unmatched(self, matched: bytearray) -> int:
        return sum(1 for position in self._last.values() if not matched[position])

    def get(self, ident: str) -> VLMResponse | None:
        position = self._last.get(ident)
        return None if position is None else self._responses[position]

    def forget_ids(self) -> None:
        return None  # the caller's responses: nothing of ours to drop

    def release(self) -> None:
        return None


class AnsweredLines(LineSpans):
    """The answered lines of a response or judge file: the last line of an id, and a line
    read back as a :class:`ResponseLine`, checked to be the one read at the start. What
    :class:`ResponseStore` and :class:`~datbench_cli.batch.judge_store.JudgeStore` share."""

    #: The text and parsed-answer fields of a native line.
    fields = ("raw_output", "parsed_answer")

    def last(self, ident: str) -> int | None:
        return self.ids.last_index(ident)

    def _line(self, position: int) -> ResponseLine:
        """The line at ``position``, parsed again; an input error naming it when its bytes (or,
        while held, its id) are no longer those read at the start."""
        number = self._numbers[position]
        obj = self._read(position)
        try:
            line = (
                response_line(obj, self.path, number, *self.fields)
                if isinstance(obj, dict)
                else None
            )
        except InputError:
            line = None
        # The CRC says the bytes are those read at the start; the id, while still held, too.
        if line is None or line.error is not None or not self._same_id(position, line.id):
            raise InputError("changed while it was being scored", self.path, number)
        return line


class ResponseStore(AnsweredLines):
    """A response file's answered lines as spans (see the module docstring); build it with
    :func:`load_response_store`, use it as a context manager (the file stays open for
    ``pread``, also in forked workers, until it is closed)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._statuses = bytearray()

    def _add(
        self, ident: str, status: str, number: int, offset: int, length: int, crc: int
    ) -> None:
        self._add_span(ident, number, offset, length, crc)
        self._statuses.append(_STATUS_CODES[status])

    def release(self) -> None:
        """Drop every column (after scoring): only :meth:`close` is left."""
        self._release_spans()
        self._statuses = bytearray()

    def response(self, position: int) -> VLMResponse:
        line = self._line(position)
        return VLMResponse(line.id, line.text or "", line.parsed)

    def status(self, position: int) -> str:
        return RESPONSE_STATUSES[self._statuses[position]]

    def size(self, position: int) -> int:
        # A line's bytes are at least as many as the characters of any text in it.
        return self._lengths[position]

    def duplicate_ids(self) -> int:
        return self.ids.duplicate_ids()

    def unmatched(self, matched: bytearray) -> int:
        return sum(
            1
            for position in range(len(self.ids))
            if not matched[position] and self.ids.last_of(position) == position
        )

    def get(self, ident: str) -> VLMResponse | None:
        position = self.last(ident)
        return None if position is None else self.response(position)


def load_response_store(path: Path) -> tuple[ResponseStore, LoadedResponses]:
    """The answered lines of a VLM response file as a :class:`ResponseStore`, and what was set
    aside (a :class:`LoadedResponses` with ``errored_ids``, ``truncated_ids``, the torn last
    line and unknown keys, but no responses and no ``statuses``: the store has them)."""
    store = ResponseStore(path)
    loaded = read_answered(
        store, RESPONSE_KEYS, lambda line, *span: store._add(line.id, line.status, *span)
    )
    return store, loaded


def read_answered(
    store: AnsweredLines,
    keys: frozenset[str],
    add: Callable[[ResponseLine, int, int, int, int], None],
) -> LoadedResponses:
    """Read ``store``'s file once: each answered line goes to ``add`` with its number, offset,
    length and CRC; what is set aside (errored ids with no answered line, token-limit stops,
    a torn last line, keys outside ``keys``) is returned. The store is then open."""
    loaded = LoadedResponses()
    unknown = UnknownKeys(keys)
    errored: list[str] = []
    spans = jsonio.iter_jsonl_spans(store.path, loaded.record_torn_tail)
    for number, obj, offset, length, crc in spans:
        line = response_line(obj, store.path, number, *store.fields, unknown)
        if line.error is not None:
            errored.append(line.id)
            continue
        add(line, number, offset, length, crc)
        if line.finish_reason == "length":
            loaded.truncated_ids.append(line.id)
    store._open()
    loaded.unknown_keys = unknown.message(store.path)
    loaded.errored_ids = [i for i in dict.fromkeys(errored) if store.last(i) is None]
    return loaded
