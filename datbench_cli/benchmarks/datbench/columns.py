"""Per-sample scores as compact arrays, and the summary additions computed from them.

A scored sample leaves a few numbers here (its score, codes for its capability, dataset and
eval mode, its censoring reasons as bits, its item statistics), about 13 bytes, instead of a
:class:`~datbench_cli.benchmarks.datbench.schema.SampleScore`: ``score`` keeps memory flat
however many samples it scores. Every sum runs left to right in sample order, as the
result-list functions in :mod:`~datbench_cli.benchmarks.datbench.uncertainty` and
:mod:`~datbench_cli.benchmarks.datbench.censoring` (which feed this table) always did, so the
numbers are bit-identical.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from datbench_cli.benchmarks.datbench.censoring import KEYS
from datbench_cli.benchmarks.datbench.codes import Codes, OptionalFloats, UIntArray
from datbench_cli.benchmarks.datbench.summary import GroupStats
from datbench_cli.metrics.averaging import float_sum

_BITS = {key: 1 << bit for bit, key in enumerate(KEYS)}


class ScoreColumns:
    """The scored samples, one array entry each, in sample order."""

    def __init__(self) -> None:
        self.scores = array("d")
        self.capabilities = UIntArray()
        self.datasets = UIntArray()
        self.modes = UIntArray()
        self.reasons = UIntArray()  # bits
        self.frontier = array("b")  # 1 frontier, 0 not, -1 no flag
        self.discrimination = OptionalFloats()  # NaN: no usable weight
        self._capabilities = Codes()
        self._datasets = Codes()
        self._modes = Codes()

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
        self.capabilities.append(self._capabilities.code(str(capability)))
        self.datasets.append(self._datasets.code(str(dataset)))
        self.modes.append(self._modes.code(str(eval_mode)))
        bits = 0
        for reason in reasons:
            bits |= _BITS[reason]
        self.reasons.append(bits)
        self.frontier.append(-1 if frontier is None else int(frontier))
        self.discrimination.append(discrimination)

    # ------------------------------------------------------------------ groups

    def _groups(self, codes: UIntArray, names: list[str]) -> dict[str, np.ndarray]:
        """Group name -> indices of its samples (in sample order), groups in first-appearance
        order."""
        values = codes.numpy()
        return {name: np.flatnonzero(values == code) for code, name in enumerate(names)}

    def capability_groups(self) -> dict[str, np.ndarray]:
        return self._groups(self.capabilities, self._capabilities.names)

    def dataset_groups(self) -> dict[str, np.ndarray]:
        return self._groups(self.datasets, self._datasets.names)

    def mode_groups(self) -> dict[str, np.ndarray]:
        return self._groups(self.modes, self._modes.names)

    def all(self) -> np.ndarray:
        return np.arange(len(self.scores))

    def score_array(self, indices: np.ndarray | None = None) -> np.ndarray:
        """The scores of ``indices`` (``None``: all) as a float64 array, in order."""
        values = np.frombuffer(self.scores, dtype=np.float64) if len(self.scores) else np.zeros(0)
        return values if indices is None else values[indices]

    def dataset_ranks(self, indices: np.ndarray | None = None) -> np.ndarray:
        """Each sample's dataset as its rank among the dataset names sorted (what
        :func:`datbench_cli.stats.describe` takes as clusters, without a string per sample)."""
        names = self._datasets.names
        rank = np.empty(len(names), dtype=np.min_scalar_type(max(len(names), 1)))
        rank[sorted(range(len(names)), key=lambda code: names[code])] = np.arange(len(names))
        codes = self.datasets.numpy()
        return rank[codes if indices is None else codes[indices]]

    def group_stats(self) -> dict[str, tuple[GroupStats, dict[str, GroupStats]]]:
        """Capability -> (its :class:`GroupStats`,
        source dataset -> the dataset's within it), in order of first appearance (the
        terminal summary's rows; a mode other than ``judge`` counts as direct)."""
        out: dict[str, tuple[GroupStats, dict[str, GroupStats]]] = {}
        capabilities, datasets = self._capabilities.names, self._datasets.names
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

    def censoring_entry(self, indices: np.ndarray) -> dict[str, Any]:
        """One censoring entry (see :mod:`~datbench_cli.benchmarks.datbench.censoring`)."""
        bits = self.reasons.numpy()[indices].astype(np.uint32)  # every bit fits
        counts = {key: int(np.count_nonzero(bits & bit)) for key, bit in _BITS.items()}
        completed = self.score_array(indices[bits == 0])  # an array: no float per sample
        samples = len(indices)
        done = len(completed)
        return {
            "samples": samples,
            **counts,
            "censored": samples - done,
            "completed": done,
            "accuracy_completed": float_sum(map(float, completed)) / done if done else None,
        }

    def censoring(self) -> dict[str, Any]:
        """``summary["censoring"]``: overall, per capability, per dataset (sorted)."""
        return {
            "overall": self.censoring_entry(self.all()),
            "capabilities": {
                k: self.censoring_entry(v) for k, v in self.capability_groups().items()
            },
            "datasets": {
                k: self.censoring_entry(v) for k, v in sorted(self.dataset_groups().items())
            },
        }

    # ------------------------------------------------------------------ item statistics

    def item_entry(self, indices: Sequence[int] | np.ndarray) -> dict[str, Any]:
        """Frontier vs other accuracy and the discrimination-weighted accuracy of a group."""
        frontier: list[float] = []
        rest: list[float] = []
        weighted = weights = 0.0
        with_weight = 0
        scores, flags, weights_of = self.scores, self.frontier, self.discrimination
        for index in indices:
            score = scores[index]
            flag = flags[index]
            if flag >= 0:
                (frontier if flag else rest).append(score)
            weight = weights_of[index]
            if weight == weight:  # not NaN
                with_weight += 1
                clipped = max(weight, 0.0)
                weighted += clipped * score
                weights += clipped
        entry: dict[str, Any] = {}
        if frontier or rest:
            entry["frontier"] = {"n": len(frontier), "accuracy": _accuracy(frontier)}
            entry["non_frontier"] = {"n": len(rest), "accuracy": _accuracy(rest)}
        if with_weight:
            entry["discrimination_weighted_accuracy"] = weighted / weights if weights else None
            entry["discrimination_samples"] = with_weight
            entry["discrimination_weight_total"] = weights
        return entry

    def item_statistics(self) -> dict[str, Any]:
        """``summary["item_statistics"]`` (only capabilities whose rows carry the fields)."""
        out = {}
        for name, indices in self.capability_groups().items():
            entry = self.item_entry(indices)
            if entry:
                out[name] = entry
        return out


def _accuracy(scores: Sequence[float]) -> float | None:
    return float_sum(scores) / len(scores) if scores else None
