"""What a benchmark tells the comparison: how to read its report's samples, its metrics and
the tables of rows to compute (one :class:`Side` per benchmark)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from datbench_cli.compare.paired import Sample
from datbench_cli.errors import InputError


@dataclass(frozen=True)
class Metric:
    """A per-sample score compared between the runs; ``exact_test``: it has 0/1 outcomes
    (``Sample.correct``) for McNemar's test."""

    key: str
    label: str
    exact_test: bool


@dataclass(frozen=True)
class TableSpec:
    """One table: a row per value of ``group`` (``None``: one row over every pair), the
    bootstrap stratified by ``strata``; ``gated``: ``--fail-if-worse`` looks at its rows."""

    key: str
    title: str
    group: str | None
    strata: str | None
    gated: bool


@dataclass(frozen=True)
class Columns:
    """Result entries as columns, what a list of :class:`Sample` holds without an object per
    sample: ``groups`` and ``checks`` are lists (one per group field, one per element of
    ``Sample.check``) of per-sample values; ``values`` and ``correct`` arrays per metric."""

    ids: list[str]
    groups: dict[str, list[str]]
    values: dict[str, np.ndarray]
    correct: dict[str, np.ndarray]
    checks: list[list[Any]]

    @classmethod
    def of(cls, samples: list[Sample], side: Side) -> Columns:
        """The columns of samples read one by one."""
        fields = list(samples[0].groups) if samples else []
        width = len(samples[0].check) if samples else 0
        return cls(
            ids=[s.id for s in samples],
            groups={name: [s.groups[name] for s in samples] for name in fields},
            values={
                m.key: np.array([s.values[m.key] for s in samples], float) for m in side.metrics
            },
            correct={
                m.key: np.array([s.correct[m.key] for s in samples], bool)
                for m in side.metrics
                if m.exact_test
            },
            checks=[[s.check[k] for s in samples] for k in range(width)],
        )


@dataclass(frozen=True)
class Side:
    """A benchmark's part of a comparison.

    ``read(results, path)`` turns a report's ``results`` into samples (raising ``InputError``
    naming ``path`` for a malformed entry); ``pair_fields(a, b)`` is the per-sample record the
    comparison lists (ids, groups, both scores). ``columns(data)``, where a benchmark has it,
    reads a JSON array of result entries straight into :class:`Columns` (the leaderboard's
    fast path), or returns ``None`` when any entry is not in the plain shape: ``read`` then
    reads it (and names a malformed entry).
    """

    metrics: tuple[Metric, ...]
    tables: tuple[TableSpec, ...]
    read: Callable[[list[Any], Path], list[Sample]]
    pair_fields: Callable[[Sample, Sample], dict[str, Any]]
    columns: Callable[[bytes], Columns | None] | None = None
    #: The summary key that counts the report's results (a report whose results are fewer or
    #: more was cut or edited).
    counted: str | None = None
    #: ``(summary key, metric key)``: the summary numbers that are the mean of a metric over
    #: the results (a report whose summary says another number was edited).
    means: tuple[tuple[str, str], ...] = ()

    def check_count(self, summary: dict[str, Any], results: int, path: Path) -> None:
        """An ``InputError`` naming ``path`` when the summary counts other results than the
        report holds."""
        said = summary.get(self.counted) if self.counted else None
        if said is None:
            return
        if not isinstance(said, int) or isinstance(said, bool):  # "152", 1e+30 (a huge int)
            raise InputError(
                f'the summary\'s "{self.counted}" is {said!r}, not a count of results: a cut '
                "or edited report",
                path,
            )
        if said != results:
            raise InputError(
                f'the summary counts {said} results ("{self.counted}") but the report holds '
                f"{results}: a cut or edited report",
                path,
            )

    def check_means(
        self, summary: dict[str, Any], values: dict[str, np.ndarray], path: Path
    ) -> None:
        """An ``InputError`` naming ``path`` when a summary number (:attr:`means`) is not the
        mean of its metric over the results: ``view`` shows the summary's number where
        ``compare`` and ``leaderboard`` show the results' mean."""
        for key, metric in self.means:
            said, column = summary.get(key), values.get(metric)
            if not _number(said) or column is None or not len(column):
                continue  # an absent or null number, or no results: nothing to check
            mean = math.fsum(column.tolist()) / len(column)
            if not math.isclose(said, mean, rel_tol=_MEAN_TOLERANCE, abs_tol=_MEAN_TOLERANCE):
                raise InputError(
                    f"the summary's \"{key}\" is {said!r} but its results' mean is {mean:.6g}: "
                    "an edited report",
                    path,
                )


# Far above the last bits a sum in another order changes, far below any real difference.
_MEAN_TOLERANCE = 1e-9


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
