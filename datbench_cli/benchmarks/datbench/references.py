"""The samples a scoring run works through, held compactly.

:class:`HeldSamples` wraps samples already in memory (the Python API). :class:`ReferenceFile`
(what ``score`` uses) reads ``references.jsonl`` once, checking every line, and keeps only the
byte span of each line and the few fields the parent process needs per sample (the id, in an
:class:`~datbench_cli.benchmarks.datbench.id_table.IdTable`; capability, eval mode, dataset, as
codes); a sample is parsed again from the file when it is scored (in the
worker, with ``--jobs``), so memory does not hold one :class:`DatBenchSample` per reference. A
line whose bytes are no longer those checked at the start (CRC-32; the file was rewritten in
place while scoring) is an input error, never a silently different sample.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from datbench_cli.benchmarks.datbench.id_table import IdTable
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.uncertainty import item_metrics
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio


class SampleKey(NamedTuple):
    """What the parent knows of a sample without parsing it."""

    at: int
    id: str
    capability: str
    eval_mode: str
    dataset: str


class Samples(Protocol):
    """The samples of a run, in order (see the module docstring)."""

    def __len__(self) -> int: ...

    def keys(self) -> Iterator[SampleKey]:
        """Every sample's key, in order."""
        ...

    def sample(self, index: int) -> DatBenchSample:
        """The sample at ``index``."""
        ...

    def last_index(self, sample_id: str) -> int | None:
        """The index of the last sample with this id (``None``: no such sample)."""
        ...

    def key(self, index: int) -> SampleKey:
        """The key of the sample at ``index``."""
        ...

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        """The item statistics (see :func:`~datbench_cli.benchmarks.datbench.uncertainty.
        item_metrics`) of the last sample with the id of the one at ``index``."""
        ...


def _key(index: int, sample: DatBenchSample) -> SampleKey:
    return SampleKey(index, sample.id, sample.capability, sample.eval_mode, sample.dataset)


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

    def sample(self, index: int) -> DatBenchSample:
        return self._samples[index]

    def last_index(self, sample_id: str) -> int | None:
        return self._last.get(sample_id)

    def key(self, index: int) -> SampleKey:
        return _key(index, self._samples[index])

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        last = self._last[self._samples[index].id]
        return item_metrics(self._samples[last].eval_metrics)


class _Codes:
    """Strings to small integers, in order of first appearance."""

    def __init__(self) -> None:
        self.names: list[Any] = []
        self._index: dict[Any, int] = {}

    def code(self, name: Any) -> int:
        try:
            found = self._index.get(name)
        except TypeError:  # not hashable (a hostile line): a code of its own
            self.names.append(name)
            return len(self.names) - 1
        if found is None:
            found = self._index[name] = len(self.names)
            self.names.append(name)
        return found


def _parse(record: dict[str, Any], path: Path, number: int) -> DatBenchSample:
    try:
        sample = DatBenchSample(**record, image=None)
    except TypeError as exc:
        raise InputError(f"not a reference line ({exc})", path, number) from None
    if not isinstance(sample.id, str):
        raise InputError('"id" must be a string', path, number)
    return sample


class ReferenceFile:
    """``references.jsonl`` as line spans (see the module docstring); use it as a context
    manager: the file stays open (and is read with ``pread``, also in forked workers) until
    it is closed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._numbers = array("q")
        self._offsets = array("q")
        self._lengths = array("q")
        self._crcs = array("I")  # CRC-32 of each line as checked
        self.ids = IdTable()
        self._capabilities = array("I")
        self._modes = array("I")
        self._datasets = array("I")
        self._frontier = array("b")  # 1 frontier, 0 not, -1 no flag
        self._weights = array("d")  # NaN: no usable weight
        codes = self._codes = (_Codes(), _Codes(), _Codes())
        for number, record, offset, length, crc in jsonio.iter_jsonl_spans(path):
            sample = _parse(record, path, number)
            self.ids.append(sample.id)
            self._numbers.append(number)
            self._offsets.append(offset)
            self._lengths.append(length)
            self._crcs.append(crc)
            self._capabilities.append(codes[0].code(sample.capability))
            self._modes.append(codes[1].code(sample.eval_mode))
            self._datasets.append(codes[2].code(sample.dataset))
            frontier, weight = item_metrics(sample.eval_metrics)
            self._frontier.append(-1 if frontier is None else int(frontier))
            self._weights.append(math.nan if weight is None else weight)
        self.ids.freeze()
        self._fd: int | None = os.open(path, os.O_RDONLY)

    def __enter__(self) -> ReferenceFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __len__(self) -> int:
        return len(self.ids)

    def keys(self) -> Iterator[SampleKey]:
        for index in range(len(self.ids)):
            yield self.key(index)

    def key(self, index: int) -> SampleKey:
        capabilities, modes, datasets = self._codes
        return SampleKey(
            index,
            self.ids[index],
            capabilities.names[self._capabilities[index]],
            modes.names[self._modes[index]],
            datasets.names[self._datasets[index]],
        )

    def item_metrics(self, index: int) -> tuple[bool | None, float | None]:
        last = self.ids.last_of(index)
        flag, weight = self._frontier[last], self._weights[last]
        return (None if flag < 0 else bool(flag)), (None if weight != weight else weight)

    def sample(self, index: int) -> DatBenchSample:
        number = self._numbers[index]
        if self._fd is None:
            raise ValueError("the reference file is closed")
        try:
            record = jsonio.read_span(
                self._fd, self._offsets[index], self._lengths[index], self._crcs[index]
            )
        except (OSError, ValueError):
            record = None
        sample = _parse(record, self.path, number) if isinstance(record, dict) else None
        if sample is None or sample.id != self.ids[index]:
            raise InputError("changed while it was being scored", self.path, number)
        return sample

    def last_index(self, sample_id: str) -> int | None:
        return self.ids.last_index(sample_id)
