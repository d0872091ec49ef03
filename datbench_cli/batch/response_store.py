"""The answered lines of a VLM response file, for scoring, without one object per line.

:class:`ResponseStore` (what ``score`` uses) reads the file (or pipe) once with the same rules
as :func:`~datbench_cli.batch.responses.load_vlm_responses` and keeps, per answered line, its
id, line number, status and raw bytes in a table of the run store
(:mod:`~datbench_cli.files.run_store`); a response is parsed again from those bytes when it is
scored, so a file rewritten meanwhile cannot mix two versions. Responses already in memory (the
Python API) go into the same kind of store (:func:`held_responses`: each row holds the pickled
response). A store answers by *position*: the place of a line among the answered lines, in
file order; the last line of an id is the one that counts.
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.batch.answers import VLMResponse, plain_response
from datbench_cli.batch.line_keys import RESPONSE_KEYS, UnknownKeys
from datbench_cli.batch.responses import (
    ANSWERED_STATUSES,
    RESPONSE_STATUSES,
    LoadedResponses,
    ResponseLine,
    response_line,
    text_status,
)
from datbench_cli.files import jsonio
from datbench_cli.files.run_store import LineTable, StoreOwner, blocks

_STATUS_CODES = {status: code for code, status in enumerate(RESPONSE_STATUSES)}


class AnsweredLines(StoreOwner):
    """The answered lines of a response or judge file in a table of the run store: the last
    line of an id, and a line read back as a :class:`ResponseLine`. What
    :class:`ResponseStore` and :class:`~datbench_cli.batch.judge_store.JudgeStore` share."""

    #: The text and parsed-answer fields of a native line.
    fields = ("raw_output", "parsed_answer")
    table_name = "responses"

    def __init__(self, path: Path | None, db: sqlite3.Connection | None = None) -> None:
        """``path``: the file read (``None``: objects held by the caller, each row's bytes
        their pickle)."""
        super().__init__(db)
        self.path = path
        self.lines = LineTable(self.db, self.table_name)

    def _parser(self, parse: Callable[[Path, tuple[int, bytes, Any]], Any]) -> Callable[..., Any]:
        return unpickled if self.path is None else partial(parse, self.path)

    def hold(self, values: Iterable[Any], extra: Callable[[Any], Any]) -> None:
        """Fill the store with held ``values`` (each with an ``id``), pickled, in order."""
        self.lines.fill(
            (value.id, number, pickle.dumps(value, pickle.HIGHEST_PROTOCOL), extra(value))
            for number, value in enumerate(values, 1)
        )

    def __len__(self) -> int:
        return len(self.lines)

    def duplicate_ids(
        self, samples_of: Callable[[Sequence[str]], Collection[str]] | None = None
    ) -> int:
        """How many ids have more than one answered line (``samples_of``: those of a block of
        ids that are samples'; given, only samples' ids count: an id of another run is an
        unknown id, whatever its number of lines)."""
        if samples_of is None:
            return self.lines.duplicate_ids()
        return sum(len(samples_of(block)) for block in blocks(self.lines.duplicated()))

    def absent_from(self, other: LineTable) -> int:
        """How many distinct ids have no line in ``other`` (a table of the same store)."""
        return self.lines.absent_from(other)

    def raws(self, positions: Sequence[int]) -> list[tuple[int, bytes, Any]]:
        """The line number, bytes and extra value of the line at each of ``positions`` (at
        most ``run_store.MANY``), in one query."""
        return self.lines.lines_at(positions)

    def last_by_id(self) -> dict[str, int]:
        """:meth:`last` of every id, in one query."""
        return self.lines.last_by_id()


class ResponseStore(AnsweredLines):
    """A response file's answered lines in the run store (see the module docstring); build it
    with :func:`load_response_store` and use it as a context manager. ``codes``: each line's
    status, as its place in ``RESPONSE_STATUSES``."""

    def __init__(self, path: Path | None, db: sqlite3.Connection | None = None) -> None:
        super().__init__(path, db)
        self.codes = bytearray()

    def parser(self) -> Callable[[tuple[int, bytes, Any]], VLMResponse]:
        """A function (picklable) from a value of :meth:`raws` to the response."""
        return self._parser(line_response)

    def status(self, position: int) -> str:
        """The status of the line at ``position``."""
        return RESPONSE_STATUSES[self.codes[position]]

    def unmatched(self, matched: bytearray) -> int:
        return sum(1 for position in self.lines.last_positions() if not matched[position])


def held_responses(
    responses: Iterable[VLMResponse], statuses: Mapping[str, str] | None = None
) -> ResponseStore:
    """Responses in memory (the Python API) in a private store (``statuses``: id -> status;
    a response without an answered status has its status judged by its text)."""
    store = ResponseStore(None)
    known = statuses or {}

    def code(response: VLMResponse) -> None:
        status = known.get(response.id)
        if status not in ANSWERED_STATUSES:  # none given, or errored/missing yet answered
            status = text_status(response.model_output)
        store.codes.append(_STATUS_CODES[status])

    store.hold(map(plain_response, responses), code)
    return store


def unpickled(raw: tuple[Any, ...]) -> Any:
    """The object of a held row, from its line number and bytes (see
    :meth:`AnsweredLines.hold`)."""
    return pickle.loads(raw[1])


def stored_line(
    path: Path | None, fields: tuple[str, str], number: int, raw: bytes
) -> ResponseLine:
    """A stored line of ``path``, parsed again from the bytes read at the start."""
    return response_line(orjson.loads(raw.strip()), path, number, *fields)


def line_response(path: Path, raw: tuple[int, bytes, Any]) -> VLMResponse:
    """The response of a stored line (see :meth:`ResponseStore.raws`)."""
    line = stored_line(path, ResponseStore.fields, raw[0], raw[1])
    return VLMResponse(line.id, line.text or "", line.parsed)


def load_response_store(
    path: Path,
    db: sqlite3.Connection | None = None,
    scan: Callable[[bytes], None] | None = None,
) -> tuple[ResponseStore, LoadedResponses]:
    """The answered lines of a VLM response file as a :class:`ResponseStore` (a table of
    ``db``, or of a private store of its own), and what was set aside (a
    :class:`LoadedResponses` with ``errored_ids``, ``truncated_ids``, the torn last line and
    unknown keys, but no responses and no ``statuses``: the store has them). ``scan`` is
    given every line read."""
    store = ResponseStore(path, db)

    def status(line: ResponseLine) -> None:  # kept in memory: a byte a line, no query
        store.codes.append(_STATUS_CODES[line.status])

    try:
        loaded = read_answered(store, RESPONSE_KEYS, status, scan)
    except BaseException:
        store.close()
        raise
    return store, loaded


def read_answered(
    store: AnsweredLines,
    keys: frozenset[str],
    extra: Callable[[ResponseLine], Any],
    scan: Callable[[bytes], None] | None = None,
) -> LoadedResponses:
    """Read ``store``'s file once (a pipe too): each answered line goes into the store with
    ``extra(line)``; what is set aside (errored ids with no answered line, ids whose last
    answered line stopped at the token limit, a torn last line, keys outside ``keys``) is
    returned; ``scan`` is given every line read."""
    assert store.path is not None, "a held store has no file to read"
    path = store.path
    loaded = LoadedResponses()
    unknown = UnknownKeys(keys)
    errored: list[str] = []
    filtered: set[str] = set()

    def rows() -> Iterator[tuple[str, int, bytes, Any]]:
        lines = jsonio.iter_jsonl_lines(
            jsonio.open_jsonl(path), path, loaded.record_torn_tail, scan
        )
        for number, obj, raw in lines:
            line = response_line(obj, path, number, *store.fields, unknown)
            if line.error is not None:
                errored.append(line.id)
                if line.filtered:
                    filtered.add(line.id)
                continue
            yield line.id, number, raw, extra(line)
            loaded.note_stop(line.id, line.finish_reason, line.status)

    store.lines.fill(rows())
    loaded.unknown_keys = unknown.message(path)
    # Errored ids without an answered line, asked a block at a time (a run of failed calls
    # can have as many as it has samples).
    pending = list(dict.fromkeys(errored))
    answered = set().union(*(store.lines.present(block) for block in blocks(pending)))
    loaded.set_errored(pending, filtered, answered)
    return loaded
