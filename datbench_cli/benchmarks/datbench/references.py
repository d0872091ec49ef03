"""The samples a scoring run works through, held compactly.

:class:`ReferenceFile` (what ``score`` uses) reads ``references.jsonl`` once, checking every
line, into a table of the run store (:mod:`~datbench_cli.files.run_store`: id, line number, raw
bytes), and keeps in memory only the few fields the parent needs per sample (capability, eval
mode, dataset, item statistics: a list each, the names shared); a sample is parsed again from
its stored line when it is scored, so memory does not hold one :class:`DatBenchSample` per
reference, and a file rewritten meanwhile cannot mix two versions. Samples already in memory
(the Python API) go into the same kind of store, each row their pickle.
"""

from __future__ import annotations

import copy
import math
import pickle
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.batch.response_store import unpickled
from datbench_cli.benchmarks.datbench.schema import REFERENCE_FIELDS, DatBenchSample
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.fields import check_line
from datbench_cli.files.run_store import LineTable, StoreOwner


def _frontier_flag(metrics: Any) -> bool | None:
    value = metrics.get("is_frontier") if isinstance(metrics, Mapping) else None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return None


def _discrimination(metrics: Any) -> float | None:
    value = metrics.get("discrimination") if isinstance(metrics, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def item_metrics(metrics: Any) -> tuple[bool | None, float | None]:
    """A row's ``eval_metrics`` -> (frontier flag, discrimination weight), ``None`` where the
    row has no usable value."""
    return _frontier_flag(metrics), _discrimination(metrics)


class SampleKey:
    """What the parent knows of a sample without parsing it (the id is looked up only when
    asked for: once a run has matched its responses, only a problem report needs it)."""

    __slots__ = ("_id", "_source", "at", "capability", "dataset", "eval_mode")

    def __init__(
        self,
        at: int,
        ident: str | None,
        capability: str,
        eval_mode: str,
        dataset: str,
        source: ReferenceFile | None = None,
    ) -> None:
        self.at, self.capability, self.eval_mode, self.dataset = at, capability, eval_mode, dataset
        self._id, self._source = ident, source

    @property
    def id(self) -> str:
        if self._id is None:
            assert self._source is not None
            self._id = self._source.id_of(self.at)
        return self._id

    def _fields(self) -> tuple[int, str, str, str, str]:
        return (self.at, self.id, self.capability, self.eval_mode, self.dataset)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SampleKey) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "SampleKey(at={!r}, id={!r}, capability={!r}, eval_mode={!r}, dataset={!r})".format(
            *self._fields()
        )


def _without_image(sample: DatBenchSample) -> DatBenchSample:
    """The sample as a worker gets it: without its image, which no scorer reads and which a
    worker would otherwise receive pickled (400 samples of 1024x1024 pixels: 15.6 s and
    2.6 GB to score instead of 0.3 s)."""
    if sample.image is None:
        return sample
    light = copy.copy(sample)
    light.image = None
    return light


def _stored_id(ident: Any) -> str | bytes:
    """The id a sample is stored under: a caller's sample may have an id that is not a string
    (the Python API), or a string no UTF-8 can hold (a lone surrogate), stored as bytes, which
    no response's id (a string) ever equals."""
    if isinstance(ident, str):
        try:
            ident.encode("utf-8")
            return ident
        except UnicodeEncodeError:
            pass
    return b"\0" + repr(ident).encode()


def _pickled(index: int, sample: DatBenchSample) -> bytes:
    """A held sample as its store row holds it (the scoring workers get it so)."""
    try:
        return pickle.dumps(_without_image(sample), pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - said with the sample's place, whatever it is
        raise TypeError(
            f"hf_dataset[{index}] (id {sample.id!r}) cannot be sent to a scoring worker process: "
            f"its values must be picklable ({exc})"
        ) from None


def _shared(seen: dict[tuple[str, str, str], tuple[str, str, str]], value: Any) -> Any:
    """``value``, or the equal one met before when it is three strings (a hostile line's
    other values are kept as they are)."""
    if all(type(part) is str for part in value):
        return seen.setdefault(value, value)
    return value


def parse_reference(record: dict[str, Any], path: Path, number: int) -> DatBenchSample:
    """The sample of line ``number`` of the references file ``path``; :class:`InputError`
    naming the line when it is not a reference line (a field of another type than
    :data:`REFERENCE_FIELDS` says included)."""
    try:
        sample = DatBenchSample(**record, image=None)
    except TypeError as exc:
        raise InputError(f"not a reference line ({exc})", path, number) from None
    check_line(record, REFERENCE_FIELDS, path, number)
    # What the export refuses in a dataset (see export._check_prompt_text).
    defect = sample.judge_prompt_defect()
    if defect is not None:
        raise InputError(defect, path, number)
    return sample


def line_sample(path: Path, raw: tuple[int, bytes]) -> DatBenchSample:
    """The sample of a stored line of ``path`` (see :meth:`ReferenceFile.raws`)."""
    return parse_reference(orjson.loads(raw[1].strip()), path, raw[0])


# An export never writes an empty references.jsonl (an empty split is refused), so an empty one
# was emptied after it; said of the file, not blamed on the responses matching nothing.
NO_SAMPLE = "holds no sample (emptied after export?); run `datbench export-tasks` again"


class ReferenceFile(StoreOwner):
    """``references.jsonl`` in the run store (see the module docstring); use it as a context
    manager (a store of its own, when not given one, is closed with it). ``scan`` is given
    every line read. ``path`` ``None``: the caller's ``held`` samples instead (the Python
    API), each stored pickled, without its image."""

    def __init__(
        self,
        path: Path | None,
        db: sqlite3.Connection | None = None,
        scan: Callable[[bytes], None] | None = None,
        held: Iterable[DatBenchSample] = (),
    ) -> None:
        super().__init__(db)
        self.path = path
        self.lines = LineTable(self.db, "samples")
        # Per sample: (capability, eval mode, dataset), the frontier flag, the weight.
        self._groups: list[tuple[Any, Any, Any]] = []
        self._frontier = array("b")  # 1 frontier, 0 not, -1 no flag
        self._weights = array("d")  # NaN: no usable weight
        shared: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        if path is None:
            samples: Iterable[tuple[int, DatBenchSample, bytes]] = (
                (number, sample, _pickled(number - 1, sample))
                for number, sample in enumerate(held, 1)
            )
        else:
            lines = jsonio.iter_jsonl_lines(jsonio.open_jsonl(path), path, None, scan)
            samples = (
                (number, parse_reference(record, path, number), raw)
                for number, record, raw in lines
            )

        def rows() -> Iterator[tuple[str | bytes, int, bytes, None]]:
            for number, sample, raw in samples:
                self._groups.append(
                    _shared(shared, (sample.capability, sample.eval_mode, sample.dataset))
                )
                frontier, weight = item_metrics(sample.eval_metrics)
                self._frontier.append(-1 if frontier is None else int(frontier))
                self._weights.append(math.nan if weight is None else weight)
                yield _stored_id(sample.id), number, raw, None

        try:
            self.lines.fill(rows())
            # Without duplicate ids a sample is the last of its id: no query per sample.
            self._unique = not self.lines.duplicate_ids()
            if path is not None and not len(self.lines):
                raise InputError(NO_SAMPLE, path)
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.lines)

    def __contains__(self, sample_id: object) -> bool:
        return isinstance(sample_id, str) and bool(self.known([sample_id]))

    def release(self) -> None:
        """Drop every column (after scoring: the aggregation that follows can use the memory)."""
        self._groups, self._frontier, self._weights = [], array("b"), array("d")

    def keys(self) -> Iterator[SampleKey]:
        for index, ident in enumerate(self.lines.ids()):  # the ids streamed in one query
            yield self.key(index, ident)

    def key(self, index: int, ident: str | None = None) -> SampleKey:
        capability, mode, dataset = self._groups[index]
        return SampleKey(index, ident, capability, mode, dataset, self)

    def id_of(self, index: int) -> str:
        """The id of the sample at ``index``."""
        ident: str = self.lines.line(index)[0]
        return ident

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        last = index if self._unique else self.lines.last_of(index)
        flag, weight = self._frontier[last], self._weights[last]
        return (None if flag < 0 else bool(flag)), (None if weight != weight else weight)

    def raws(self, indices: Sequence[int]) -> list[tuple[int, bytes]]:
        return [(number, raw) for number, raw, _ in self.lines.lines_at(indices)]

    def parser(self) -> Callable[[tuple[int, bytes]], DatBenchSample]:
        """A function (picklable: sent to the workers) from a value of :meth:`raws` to the
        sample."""
        return unpickled if self.path is None else partial(line_sample, self.path)

    def known(self, ids: Sequence[str]) -> set[str]:
        return self.lines.present(ids)
