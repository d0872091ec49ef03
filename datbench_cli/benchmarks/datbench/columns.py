"""Per-sample scores as compact arrays, and the summary additions computed from them.

A scored sample leaves a few numbers here (its score, codes for its capability, dataset and
eval mode, its censoring reasons as bits, its item statistics), about 50 bytes, instead of a
:class:`~datbench_cli.benchmarks.datbench.schema.SampleScore`: ``score`` keeps memory flat
however many samples it scores. Every sum runs left to right in sample order, as the
result-list functions in :mod:`~datbench_cli.benchmarks.datbench.uncertainty` and
:mod:`~datbench_cli.benchmarks.datbench.censoring` (which feed this table) always did, so the
numbers are bit-identical.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from datbench_cli.benchmarks.datbench.censoring import KEYS
from datbench_cli.benchmarks.datbench.summary import GroupStats

_BITS = {key: 1 << bit for bit, key in enumerate(KEYS)}


class ScoreColumns:
    """The scored samples, one array entry each, in sample order."""

    def __init__(self) -> None:
        self.scores = array("d")
        # Codes: each name's place in the dict of names met so far (first appearance).
        self.capabilities, self.datasets, self.modes = array("q"), array("q"), array("q")
        self._capabilities: dict[str, int] = {}
        self._datasets: dict[str, int] = {}
        self._modes: dict[str, int] = {}
        self.reasons = array("q")  # bits
        self.frontier = array("b")  # 1 frontier, 0 not, -1 no flag
        self.discrimination = array("d")  # NaN: no usable weight

    def __len__(self) -> int:
        return len(self.scores)

    def add(
        self,
        score: float,
        capability: Any,
        dataset: Any,
        eval_mode: Any,
        reasons: Iterable[str],
        frontier: bool | None = None,
        discrimination: float | None = None,
    ) -> None:
        """One scored sample (``reasons``: its censoring reasons, see
        :func:`~datbench_cli.benchmarks.datbench.censoring.sample_reasons`)."""
        self.scores.append(float(score))
        self.capabilities.append(_code(self._capabilities, str(capability)))
        self.datasets.append(_code(self._datasets, str(dataset)))
        self.modes.append(_code(self._modes, str(eval_mode)))
        bits = 0
        for reason in reasons:
            bits |= _BITS[reason]
        self.reasons.append(bits)
        self.frontier.append(-1 if frontier is None else int(frontier))
        self.discrimination.append(math.nan if discrimination is None else discrimination)

    # ------------------------------------------------------------------ groups

    def _groups(
        self, codes: array, table: dict[str, int], by_name: bool = False
    ) -> Iterator[tuple[str, np.ndarray]]:
        """Each group's name and a mask of its samples (a byte a sample, made one group at a
        time), groups in first-appearance order (``by_name``: sorted by name)."""
        values, names = _numpy(codes), list(table)
        order = _by_name(names) if by_name else range(len(names))
        for code in order:
            yield names[code], values == code

    def capability_groups(self) -> Iterator[tuple[str, np.ndarray]]:
        return self._groups(self.capabilities, self._capabilities)

    def dataset_groups(self) -> Iterator[tuple[str, np.ndarray]]:
        """By dataset name, sorted."""
        return self._groups(self.datasets, self._datasets, by_name=True)

    def mode_mask(self, mode: str) -> np.ndarray:
        """The samples whose eval mode is ``mode``."""
        code = self._modes.get(mode, -1)
        values = _numpy(self.modes)
        return values == code if code >= 0 else np.zeros(len(values), dtype=bool)

    def score_array(self, mask: np.ndarray | None = None) -> np.ndarray:
        """The scores of the samples ``mask`` selects (``None``: all, no copy) as a float64
        array, in order."""
        values = np.frombuffer(self.scores, dtype=np.float64) if len(self.scores) else np.zeros(0)
        return values if mask is None else values[mask]

    def dataset_ranks(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Each sample's dataset as its rank among the dataset names sorted (what
        :func:`datbench_cli.stats.describe` takes as clusters, without a string per sample)."""
        names = list(self._datasets)
        rank = np.empty(len(names), dtype=np.min_scalar_type(max(len(names), 1)))
        rank[_by_name(names)] = np.arange(len(names))
        codes = _numpy(self.datasets)
        return rank[codes if mask is None else codes[mask]]

    def group_stats(self) -> dict[str, tuple[GroupStats, dict[str, GroupStats]]]:
        """Capability -> (its :class:`GroupStats`,
        source dataset -> the dataset's within it), in order of first appearance (the
        terminal summary's rows; a mode other than ``judge`` counts as direct)."""
        out: dict[str, tuple[GroupStats, dict[str, GroupStats]]] = {}
        capabilities, datasets = list(self._capabilities), list(self._datasets)
        judge = self._modes.get("judge")
        for score, capability, dataset, mode in zip(
            self.scores, self.capabilities, self.datasets, self.modes, strict=True
        ):
            name = capabilities[capability]
            entry = out.get(name)
            if entry is None:
                entry = out[name] = (GroupStats(), {})
            inner = entry[1].get(datasets[dataset])
            if inner is None:
                inner = entry[1][datasets[dataset]] = GroupStats()
            if mode == judge:
                entry[0].judge.add(score)
                inner.judge.add(score)
            else:
                entry[0].direct.add(score)
                inner.direct.add(score)
        return out

    # ------------------------------------------------------------------ censoring

    def censoring_entry(self, mask: np.ndarray | None = None) -> dict[str, Any]:
        """One censoring entry (see :mod:`~datbench_cli.benchmarks.datbench.censoring`) of the
        samples ``mask`` selects (``None``: all)."""
        bits = _numpy(self.reasons)
        scores = self.score_array()
        if mask is not None:
            bits, scores = bits[mask], scores[mask]
        widest = np.iinfo(bits.dtype).max
        counts = {
            key: int(np.count_nonzero(bits & bits.dtype.type(bit))) if bit <= widest else 0
            for key, bit in _BITS.items()
        }
        completed = bits == 0
        samples = len(bits)
        done = int(np.count_nonzero(completed))
        return {
            "samples": samples,
            **counts,
            "censored": samples - done,
            "completed": done,
            "accuracy_completed": _ordered_sum(scores, completed) / done if done else None,
        }

    def censoring(self) -> dict[str, Any]:
        """``summary["censoring"]``: overall, per capability, per dataset (sorted)."""
        return {
            "overall": self.censoring_entry(),
            "capabilities": {k: self.censoring_entry(v) for k, v in self.capability_groups()},
            "datasets": {k: self.censoring_entry(v) for k, v in self.dataset_groups()},
        }

    # ------------------------------------------------------------------ item statistics

    def item_entry(self, mask: np.ndarray) -> dict[str, Any]:
        """Frontier vs other accuracy and the discrimination-weighted accuracy of the samples
        ``mask`` selects."""
        # Counts and left-to-right sums (float_sum's order and start), not lists of floats:
        # 200,000 flagged samples would hold 6 MB of them.
        counts = [0, 0]  # [non-frontier, frontier]
        totals: list[float] = [0, 0]
        weighted = weights = 0.0
        with_weight = 0
        scores, flags, weights_of = self.scores, self.frontier, self.discrimination
        for index in _selected(mask):
            score = scores[index]
            flag = flags[index]
            if flag >= 0:
                counts[flag] += 1
                totals[flag] = totals[flag] + score
            weight = weights_of[index]
            if weight == weight:  # not NaN
                with_weight += 1
                clipped = max(weight, 0.0)
                weighted += clipped * score
                weights += clipped
        entry: dict[str, Any] = {}
        if counts[0] or counts[1]:
            for key, flag in (("frontier", 1), ("non_frontier", 0)):
                n = counts[flag]
                entry[key] = {"n": n, "accuracy": totals[flag] / n if n else None}
        if with_weight:
            entry["discrimination_weighted_accuracy"] = weighted / weights if weights else None
            entry["discrimination_samples"] = with_weight
            entry["discrimination_weight_total"] = weights
        return entry

    def item_statistics(self) -> dict[str, Any]:
        """``summary["item_statistics"]`` (only capabilities whose rows carry the fields)."""
        out = {}
        for name, mask in self.capability_groups():
            entry = self.item_entry(mask)
            if entry:
                out[name] = entry
        return out


_SUM_CHUNK = 1 << 16


def _code(table: dict[str, int], name: str) -> int:
    """The code of ``name`` in ``table``, numbering a new name."""
    return table.setdefault(name, len(table))


def _numpy(values: array) -> np.ndarray:
    """An array's values as a read-only numpy view."""
    return np.frombuffer(values, dtype=np.int64) if len(values) else np.zeros(0, np.int64)


def _by_name(names: list[str]) -> list[int]:
    """The codes of ``names`` in the order of the names, sorted."""
    return sorted(range(len(names)), key=names.__getitem__)


def _selected(mask: np.ndarray) -> Iterator[int]:
    """The places ``mask`` selects, in order, a chunk at a time (no list of them all)."""
    for start in range(0, len(mask), _SUM_CHUNK):
        yield from (np.flatnonzero(mask[start : start + _SUM_CHUNK]) + start).tolist()


def _ordered_sum(values: np.ndarray, mask: np.ndarray) -> float:
    """:func:`float_sum` of the ``values`` that ``mask`` selects, left to right, a chunk at a
    time (no array of the selection)."""
    total: float = 0
    for start in range(0, len(values), _SUM_CHUNK):
        stop = start + _SUM_CHUNK
        for value in values[start:stop][mask[start:stop]].tolist():
            total = total + value
    return total
