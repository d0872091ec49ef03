"""Aggregation of per-sample outcomes into the report summary.

Sums run left to right in sample order, as the reference does, so accuracies are bit-identical.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from datbench_cli.batch.responses import (
    ANSWERED_STATUSES,
    ERRORED,
    MISSING,
    RESPONSE_STATUSES,
)
from datbench_cli.benchmarks.profiles import REFERENCE
from datbench_cli.errors import ScorerFailed
from datbench_cli.files import run_store
from datbench_cli.files.run_store import BlobTable
from datbench_cli.scorers import get_scorer


class Grouped(Protocol):
    """What the summary reads of a sample: its groups (a sample, or a reference's key)."""

    @property
    def capability(self) -> Any: ...

    @property
    def dataset(self) -> Any: ...


@dataclass
class _Tally:
    total: float = 0.0
    count: int = 0

    def add(self, score: float) -> None:
        self.total += score
        self.count += 1

    @property
    def accuracy(self) -> float:
        """The mean score; 0.0 over no samples, as the reference has it (see
        :func:`null_empty_accuracies`)."""
        return self.total / self.count if self.count else 0.0


@dataclass
class _DatasetState:
    detail_count: int = 0
    registered: bool = False
    scorer_errors: int = 0
    judge: _Tally = field(default_factory=_Tally)
    judge_missing: int = 0
    judge_unparsed: int = 0
    judge_stale: int = 0
    corrections: Counter[str] = field(default_factory=Counter)


@dataclass
class Coverage:
    """How the responses lined up with the samples (reported beside the seed's keys)."""

    expected_samples: int = 0
    missing_responses: int = 0
    duplicate_response_ids: int = 0
    unknown_response_ids: int = 0
    errored_responses: int = 0
    truncated_responses: int = 0
    judge_errored_responses: int = 0
    judge_refused_responses: int = 0
    judge_truncated_responses: int = 0
    unknown_judge_response_ids: int = 0
    direct_judge_response_ids: int = 0
    unanswered_judge_response_ids: int = 0
    duplicate_judge_response_ids: int = 0
    statuses: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys((*RESPONSE_STATUSES, MISSING), 0)
    )
    by_capability: dict[str, list[int]] = field(default_factory=dict)

    def count(self, capability: str, status: str) -> None:
        """Count one exported sample by the status of its response (``missing``: none)."""
        self.statuses[status] += 1
        expected_answered = self.by_capability.setdefault(capability, [0, 0])
        expected_answered[0] += 1
        expected_answered[1] += status in ANSWERED_STATUSES

    @property
    def unanswered(self) -> int:
        """Exported samples without a usable response (missing or errored)."""
        return self.statuses[MISSING] + self.statuses[ERRORED]

    def summary(self) -> dict[str, Any]:
        """``coverage``: answered / expected overall and per capability (``None`` over none)."""
        expected = sum(e for e, _ in self.by_capability.values())
        answered = sum(a for _, a in self.by_capability.values())
        return {
            "expected": expected,
            "answered": answered,
            "coverage": ratio(answered, expected),
            "by_capability": {
                name: {"expected": e, "answered": a, "coverage": ratio(a, e)}
                for name, (e, a) in self.by_capability.items()
            },
        }


#: A dataset with more details than this gets them unpickled pass by pass (about 1 KB each
#: once unpickled: 1 MB at most held at once).
HELD = 1024


class _Details(Sequence[Any]):
    """A dataset's details, unpickled from the store on each pass its ``compute_metrics``
    makes (the scorers only go through their details): one large dataset never has all of
    them in memory at once."""

    def __init__(self, table: BlobTable, group: str, count: int) -> None:
        self._table, self._group, self._count = table, group, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        for blob in self._table.blobs(self._group):
            yield pickle.loads(blob)

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]


def ratio(part: int, whole: int) -> float | None:
    """``part / whole``; ``None`` when ``whole`` is 0."""
    return part / whole if whole else None


class SummaryBuilder:
    """Consumes outcomes in sample order and produces the summary dict.

    The details handed to :meth:`add` are pickled bytes (see
    :mod:`~datbench_cli.benchmarks.datbench.records`), kept per dataset as rows of a private
    run store (:mod:`~datbench_cli.files.run_store`) and unpickled only to aggregate.
    """

    def __init__(self) -> None:
        self._details = BlobTable(run_store.connect(), "details")
        self.overall = _Tally()
        self.direct = _Tally()
        self.judge = _Tally()
        self.capabilities: dict[str, _Tally] = {}
        self.datasets: dict[str, _DatasetState] = {}
        self.judge_missing = 0
        self.judge_unparsed = 0
        self.judge_stale = 0
        self.scorer_errors = 0
        self.defects: dict[str, str] = {}
        self.metric_errors: list[str] = []

    def _state(self, dataset: str) -> _DatasetState:
        state = self.datasets.get(dataset)
        if state is None:
            state = self.datasets[dataset] = _DatasetState()
        return state

    def add(
        self,
        sample: Grouped,
        judge_mode: bool,
        score: float,
        verdict: str | None,
        error: dict[str, str] | None,
        details: Any,
        corrections: Iterable[str] = (),
    ) -> None:
        """Count one scored sample (``details``: what its dataset's ``compute_metrics``
        takes; ``corrections``: the fixes that changed it)."""
        self.overall.add(score)
        tally = self.capabilities.get(sample.capability)
        if tally is None:
            tally = self.capabilities[sample.capability] = _Tally()
        tally.add(score)
        dataset = sample.dataset if isinstance(sample.dataset, str) else str(sample.dataset)
        if judge_mode:
            self.judge.add(score)
            state = self._state(dataset)
            state.judge.add(score)
            if verdict == "missing":
                self.judge_missing += 1
                state.judge_missing += 1
            elif verdict == "unparsed":
                self.judge_unparsed += 1
                state.judge_unparsed += 1
            elif verdict == "stale":
                self.judge_stale += 1
                state.judge_stale += 1
            return
        self.direct.add(score)
        scorer = get_scorer(dataset)
        if scorer is None:
            # Fallback samples contribute nothing to dataset_metrics (reference behaviour).
            if error is not None:
                self.scorer_errors += 1
            return
        state = self._state(dataset)
        state.registered = True
        defect = getattr(scorer, "KNOWN_DEFECT", None)
        if defect:
            self.defects[dataset] = defect
        if error is not None:
            self.scorer_errors += 1
            state.scorer_errors += 1
        else:
            state.detail_count += 1
            self._details.add(details, dataset)
            for fix in corrections:
                state.corrections[fix] += 1

    def _dataset_metrics(self, strict: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, state in self.datasets.items():
            metrics: dict[str, Any] = {}
            if state.detail_count:
                scorer = get_scorer(name)
                assert scorer is not None
                try:
                    # One dataset's details read back and unpickled at a time.
                    details: Any = _Details(self._details, name, state.detail_count)
                    if state.detail_count <= HELD:
                        details = list(details)
                    metrics.update(scorer.compute_metrics(details))
                    del details
                except Exception as exc:  # noqa: BLE001 - the reference would lose the whole run
                    if strict:
                        raise ScorerFailed(
                            f"scorer for {name!r} failed aggregating its metrics: "
                            f"{type(exc).__name__}: {exc}"
                        ) from exc
                    error = {"type": type(exc).__name__, "message": str(exc)}
                    metrics["metrics_error"] = error
                    self.metric_errors.append(name)
            if state.scorer_errors:
                metrics["scorer_errors"] = state.scorer_errors
            if state.judge.count:
                metrics["judge_accuracy"] = state.judge.accuracy
                metrics["judge_samples"] = state.judge.count
                metrics["judge_missing_responses"] = state.judge_missing
                metrics["judge_unparsed_verdicts"] = state.judge_unparsed
                metrics["judge_stale_verdicts"] = state.judge_stale
            if state.registered or state.judge.count:
                out[name] = metrics
        self._details.db.close()
        return out

    def summary(
        self, coverage: Coverage, strict: bool = False, profile: str = REFERENCE
    ) -> dict[str, Any]:
        """The summary: the seed's keys first, then coverage and error accounting.

        A dataset scorer whose ``compute_metrics`` raises gets ``metrics_error`` in its
        ``dataset_metrics`` entry instead of its metrics (``strict`` raises instead).
        """
        summary: dict[str, Any] = {
            "overall_accuracy": self.overall.accuracy,
            "total_samples": self.overall.count,
            # Reference quirk: int() of the float score sum, not the number of correct samples.
            "total_correct": int(self.overall.total),
            "capability_accuracy": {k: t.accuracy for k, t in self.capabilities.items()},
            "capability_counts": {k: t.count for k, t in self.capabilities.items()},
            "direct_samples": self.direct.count,
            "direct_accuracy": self.direct.accuracy,
            "judge_samples": self.judge.count,
            "judge_accuracy": self.judge.accuracy,
            "judge_missing_responses": self.judge_missing,
            "judge_unparsed_verdicts": self.judge_unparsed,
            "dataset_metrics": self._dataset_metrics(strict),
            "expected_samples": coverage.expected_samples,
            "missing_responses": coverage.missing_responses,
            "duplicate_response_ids": coverage.duplicate_response_ids,
            "unknown_response_ids": coverage.unknown_response_ids,
            "errored_responses": coverage.errored_responses,
            "truncated_responses": coverage.truncated_responses,
            "judge_errored_responses": coverage.judge_errored_responses,
            "judge_refused_responses": coverage.judge_refused_responses,
            "judge_truncated_responses": coverage.judge_truncated_responses,
            "unknown_judge_response_ids": coverage.unknown_judge_response_ids,
            "direct_judge_response_ids": coverage.direct_judge_response_ids,
            "unanswered_judge_response_ids": coverage.unanswered_judge_response_ids,
            "duplicate_judge_response_ids": coverage.duplicate_judge_response_ids,
            "scorer_errors": self.scorer_errors,
            "judge_stale_verdicts": self.judge_stale,
            "unanswered_samples": coverage.unanswered,
            "response_statuses": dict(coverage.statuses),
            "coverage": coverage.summary(),
        }
        if self.defects:
            summary["known_reference_defects"] = dict(self.defects)
        if profile != REFERENCE:
            # A reference report stays exactly as it always was: no profile key means reference.
            summary["profile"] = profile
            summary["corrections"] = self._corrections()
        return summary

    def _corrections(self) -> dict[str, dict[str, int]]:
        """Per scored dataset whose scorer has fixes: each fix and how many samples it changed."""
        out: dict[str, dict[str, int]] = {}
        for name, state in self.datasets.items():
            scorer = get_scorer(name)
            fixes = getattr(scorer, "CORRECTIONS", None) if state.registered else None
            if fixes:
                out[name] = {fix: state.corrections[fix] for fix in fixes}
        return out


_ACCURACY_COUNTS = (
    ("overall_accuracy", "total_samples"),
    ("direct_accuracy", "direct_samples"),
    ("judge_accuracy", "judge_samples"),
)


def null_empty_accuracies(summary: dict[str, Any]) -> None:
    """Set every accuracy over no scored sample to ``None`` (the report of ``score``: accuracy
    over nothing is not 0, which would read as a model that got everything wrong)."""
    for accuracy, count in _ACCURACY_COUNTS:
        if not summary.get(count):
            summary[accuracy] = None
    for metrics in summary.get("dataset_metrics", {}).values():
        if "judge_accuracy" in metrics and not metrics.get("judge_samples"):
            metrics["judge_accuracy"] = None


@dataclass
class GroupStats:
    """Sample counts and mean scores of one group (a capability or a source dataset)."""

    direct: _Tally = field(default_factory=_Tally)
    judge: _Tally = field(default_factory=_Tally)

    @property
    def samples(self) -> int:
        return self.direct.count + self.judge.count

    @property
    def accuracy(self) -> float | None:
        total = self.direct.total + self.judge.total
        return total / self.samples if self.samples else None
