"""The samples a scoring run works through, held compactly.

:class:`HeldSamples` wraps samples already in memory (the Python API). :class:`ReferenceFile`
(what ``score`` uses) reads ``references.jsonl`` once, checking every line, into a table of the
run store (:mod:`~datbench_cli.files.run_store`: id, line number, raw bytes), and keeps in
memory only the few fields the parent needs per sample (capability, eval mode, dataset, item
statistics: a list each, the names shared); a sample is parsed again from its stored line when it is scored, so memory does not
hold one :class:`DatBenchSample` per reference, and a file rewritten meanwhile cannot mix two
versions.
"""

from __future__ import annotations

import copy
import math
import sqlite3
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import orjson

from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.uncertainty import item_metrics
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.run_store import LineTable, StoreOwner


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


class Samples(Protocol):
    """The samples of a run, in order (see the module docstring)."""

    def __len__(self) -> int: ...

    def keys(self) -> Iterator[SampleKey]:
        """Every sample's key, in order."""
        ...

    def raws(self, indices: Sequence[int]) -> list[Any]:
        """What :meth:`parser` makes each sample of ``indices`` (at most ``run_store.MANY``)
        of, cheap to send to a worker process (a stored line's number and bytes), at once."""
        ...

    def parser(self) -> Callable[[Any], DatBenchSample]:
        """A function (picklable) from a value of :meth:`raws` to the sample."""
        ...

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` (at most ``run_store.MANY``) that are some sample's id."""
        ...

    def key(self, index: int) -> SampleKey:
        """The key of the sample at ``index``."""
        ...

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        """The item statistics (see :func:`~datbench_cli.benchmarks.datbench.uncertainty.
        item_metrics`) of the last sample with the id of the one at ``index``."""
        ...

    def release(self) -> None:
        """Drop everything held per sample (a run that has scored them)."""
        ...


def as_is(value: Any) -> Any:
    """The parser of samples held as they are."""
    return value


def _key(index: int, sample: DatBenchSample) -> SampleKey:
    return SampleKey(index, sample.id, sample.capability, sample.eval_mode, sample.dataset)


def _without_image(sample: DatBenchSample) -> DatBenchSample:
    """The sample as a worker gets it: without its image, which no scorer reads and which a
    worker would otherwise receive pickled (400 samples of 1024x1024 pixels: 15.6 s and
    2.6 GB to score instead of 0.3 s)."""
    if sample.image is None:
        return sample
    light = copy.copy(sample)
    light.image = None
    return light


class HeldSamples:
    """Samples in memory (a list), behind :class:`Samples`."""

    def __init__(self, samples: Sequence[DatBenchSample]) -> None:
        self._samples = samples
        self._last = {s.id: i for i, s in enumerate(samples)}

    def __len__(self) -> int:
        return len(self._samples)

    def keys(self) -> Iterator[SampleKey]:
        for index, sample in enumerate(self._samples):
            yield _key(index, sample)

    def raws(self, indices: Sequence[int]) -> list[DatBenchSample]:
        return [_without_image(self._samples[index]) for index in indices]

    def parser(self) -> Callable[[Any], DatBenchSample]:
        return as_is

    def known(self, ids: Sequence[str]) -> set[str]:
        return {ident for ident in ids if ident in self._last}

    def key(self, index: int) -> SampleKey:
        return _key(index, self._samples[index])

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        last = self._last[self._samples[index].id]
        return item_metrics(self._samples[last].eval_metrics)

    def release(self) -> None:
        return None


def _shared(seen: dict[tuple[str, str, str], tuple[str, str, str]], value: Any) -> Any:
    """``value``, or the equal one met before when it is three strings (a hostile line's
    other values are kept as they are)."""
    if all(type(part) is str for part in value):
        return seen.setdefault(value, value)
    return value


def _parse(record: dict[str, Any], path: Path, number: int) -> DatBenchSample:
    try:
        sample = DatBenchSample(**record, image=None)
    except TypeError as exc:
        raise InputError(f"not a reference line ({exc})", path, number) from None
    if not isinstance(sample.id, str):
        raise InputError('"id" must be a string', path, number)
    return sample


def line_sample(path: Path, raw: tuple[int, bytes]) -> DatBenchSample:
    """The sample of a stored line of ``path`` (see :meth:`ReferenceFile.raws`)."""
    return _parse(orjson.loads(raw[1].strip()), path, raw[0])


class ReferenceFile(StoreOwner):
    """``references.jsonl`` in the run store (see the module docstring); use it as a context
    manager (a store of its own, when not given one, is closed with it). ``scan`` is given
    every line read."""

    def __init__(
        self,
        path: Path,
        db: sqlite3.Connection | None = None,
        scan: Callable[[bytes], None] | None = None,
    ) -> None:
        super().__init__(db)
        self.path = path
        self.lines = LineTable(self.db, "samples")
        # Per sample: (capability, eval mode, dataset), the frontier flag, the weight.
        self._groups: list[tuple[Any, Any, Any]] = []
        self._frontier = array("b")  # 1 frontier, 0 not, -1 no flag
        self._weights = array("d")  # NaN: no usable weight
        shared: dict[tuple[str, str, str], tuple[str, str, str]] = {}

        def rows() -> Iterator[tuple[str, int, bytes, None]]:
            lines = jsonio.iter_jsonl_lines(jsonio.open_jsonl(path), path, None, scan)
            for number, record, raw in lines:
                sample = _parse(record, path, number)
                self._groups.append(
                    _shared(shared, (sample.capability, sample.eval_mode, sample.dataset))
                )
                frontier, weight = item_metrics(sample.eval_metrics)
                self._frontier.append(-1 if frontier is None else int(frontier))
                self._weights.append(math.nan if weight is None else weight)
                yield sample.id, number, raw, None

        try:
            self.lines.fill(rows())
            # Without duplicate ids a sample is the last of its id: no query per sample.
            self._unique = not self.lines.duplicate_ids()
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
        return partial(line_sample, self.path)

    def known(self, ids: Sequence[str]) -> set[str]:
        return self.lines.present(ids)
