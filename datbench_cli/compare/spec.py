"""What a benchmark tells the comparison: how to read its report's samples, its metrics and
the tables of rows to compute (one :class:`Side` per benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datbench_cli.compare.paired import Sample


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
class Side:
    """A benchmark's part of a comparison.

    ``read(results, path)`` turns a report's ``results`` into samples (raising ``InputError``
    naming ``path`` for a malformed entry); ``pair_fields(a, b)`` is the per-sample record the
    comparison lists (ids, groups, both scores).
    """

    metrics: tuple[Metric, ...]
    tables: tuple[TableSpec, ...]
    read: Callable[[list[Any], Path], list[Sample]]
    pair_fields: Callable[[Sample, Sample], dict[str, Any]]
