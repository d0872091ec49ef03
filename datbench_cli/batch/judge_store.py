"""The answered lines of a judge-response file, for scoring, without one object per line.

:class:`JudgeStore` is to a judge file what
:class:`~datbench_cli.batch.response_store.ResponseStore` is to a response file: it reads the
file once with the rules of :func:`~datbench_cli.batch.responses.load_judge_responses` (plus
the digest a line without one takes from its judge task, as
:func:`~datbench_cli.benchmarks.datbench.stages.read_judge_responses` gives it) and keeps, per
answered line, its id and byte span; a judge response is parsed again from the file when its
sample is scored (CRC-checked: a line rewritten meanwhile is an input error).
:class:`HeldJudges` puts judge responses already in memory (the Python API) behind the same
questions. Both answer by *position* among the answered lines; the last line of an id counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from datbench_cli.batch.line_keys import JUDGE_KEYS, UnknownKeys
from datbench_cli.batch.responses import LoadedResponses, response_line
from datbench_cli.benchmarks.datbench.id_table import IdTable
from datbench_cli.benchmarks.datbench.line_spans import LineSpans
from datbench_cli.benchmarks.datbench.schema import JudgeResponse
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

_TEXT, _PARSED = "raw_judge_output", "verdict"
_DIGEST_BYTES = 8  # a response digest is 16 hex digits


class Judges(Protocol):
    """Answered judge lines by position (see the module docstring)."""

    def last(self, ident: str) -> int | None:
        """The position of the last answered line of ``ident`` (``None``: none)."""
        ...

    def judge(self, position: int) -> JudgeResponse:
        """The judge response of the line at ``position``."""
        ...

    def get(self, ident: str) -> JudgeResponse | None:
        """The judge response of the last answered line of ``ident``."""
        ...

    def line_ids(self) -> Iterator[str]:
        """The id of every answered line, in file order (an id answered twice may come twice)."""
        ...

    def forget_ids(self) -> None:
        """Drop what looks ids up: only reading by position is left."""
        ...

    def release(self) -> None:
        """Drop everything held per line."""
        ...


class HeldJudges:
    """Judge responses in memory behind :class:`Judges`."""

    def __init__(self, judges: Iterable[JudgeResponse]) -> None:
        self._judges = list(judges)
        self._last = {j.id: i for i, j in enumerate(self._judges)}

    def last(self, ident: str) -> int | None:
        return self._last.get(ident)

    def judge(self, position: int) -> JudgeResponse:
        return self._judges[position]

    def get(self, ident: str) -> JudgeResponse | None:
        position = self._last.get(ident)
        return None if position is None else self._judges[position]

    def line_ids(self) -> Iterator[str]:
        return iter(self._last)

    def forget_ids(self) -> None:
        return None  # the caller's judge responses: nothing of ours to drop

    def release(self) -> None:
        return None


class JudgeStore(LineSpans):
    """A judge file's answered lines as spans (see the module docstring); build it with
    :func:`load_judge_store` and use it as a context manager (the file stays open for
    ``pread``, also in forked workers, until it is closed)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.ids = IdTable()
        # Per line: 1 and the digest's 8 bytes where it took its judge task's (allocated at
        # the first such line), else 9 zero bytes.
        self._filled = bytearray()

    def _add(
        self, ident: str, filled: str | None, number: int, offset: int, length: int, crc: int
    ) -> None:
        position = len(self.ids)
        self.ids.append(ident)
        self._add_span(number, offset, length, crc)
        if filled is not None:
            width = 1 + _DIGEST_BYTES
            self._filled.extend(bytes(width * (position + 1) - len(self._filled)))
            self._filled[position * width : (position + 1) * width] = b"\x01" + bytes.fromhex(
                filled
            )

    def _open(self) -> None:
        self.ids.freeze()
        super()._open()

    def __len__(self) -> int:
        return len(self.ids)

    def last(self, ident: str) -> int | None:
        return self.ids.last_index(ident)

    def judge(self, position: int) -> JudgeResponse:
        number = self._numbers[position]
        obj = self._read(position)
        try:
            line = (
                response_line(obj, self.path, number, _TEXT, _PARSED)
                if isinstance(obj, dict)
                else None
            )
        except InputError:
            line = None
        if (
            line is None
            or line.error is not None
            or (self.ids.held and line.id != self.ids[position])
        ):
            raise InputError("changed while it was being scored", self.path, number)
        digest = line.digest if line.digest is not None else self._filled_digest(position)
        return JudgeResponse(line.id, line.text or "", line.parsed, response_digest=digest)

    def _filled_digest(self, position: int) -> str | None:
        width = 1 + _DIGEST_BYTES
        entry = self._filled[position * width : (position + 1) * width]
        return entry[1:].hex() if entry[:1] == b"\x01" else None

    def get(self, ident: str) -> JudgeResponse | None:
        position = self.last(ident)
        return None if position is None else self.judge(position)

    def line_ids(self) -> Iterator[str]:
        return iter(self.ids)

    def forget_ids(self) -> None:
        """Drop the ids once every sample has found its judge response."""
        self.ids.forget()

    def release(self) -> None:
        """Drop every column (after scoring): only :meth:`close` is left."""
        self.ids = IdTable()
        self.ids.freeze()
        self._release_spans()
        self._filled = bytearray()


def load_judge_store(
    path: Path, task_digests: Mapping[str, str] | None = None
) -> tuple[JudgeStore, LoadedResponses]:
    """The answered lines of a judge-response file as a :class:`JudgeStore`, and what was set
    aside (``errored_ids``, ``truncated_ids``, the torn last line and unknown keys; no judge
    responses and no statuses: the store has them). A line without a digest takes the one of
    its judge task in ``task_digests`` (id -> digest)."""
    loaded = LoadedResponses()
    unknown = UnknownKeys(JUDGE_KEYS)
    store = JudgeStore(path)
    digests = task_digests or {}
    errored: list[str] = []
    for number, obj, offset, length, crc in jsonio.iter_jsonl_spans(path, loaded.record_torn_tail):
        line = response_line(obj, path, number, _TEXT, _PARSED, unknown)
        if line.error is not None:
            errored.append(line.id)
            continue
        filled = digests.get(line.id) if line.digest is None else None
        store._add(line.id, filled, number, offset, length, crc)
        if line.finish_reason == "length":
            loaded.truncated_ids.append(line.id)
    store._open()
    loaded.unknown_keys = unknown.message(path)
    loaded.errored_ids = [i for i in dict.fromkeys(errored) if store.last(i) is None]
    return store, loaded


def unknown_ids(
    judges: Judges, errored_ids: Iterable[str], is_sample: Callable[[str], bool]
) -> list[str]:
    """The judge ids (answered, then errored) that are no sample's, each once, in the order
    they first appear."""
    found: dict[str, None] = {}
    for source in (judges.line_ids(), errored_ids):
        for ident in source:
            if ident not in found and not is_sample(ident):
                found[ident] = None
    return list(found)
