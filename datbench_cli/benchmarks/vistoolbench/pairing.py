"""VisualToolBench's side of ``datbench compare``: per-task ARS (paired bootstrap) and APR
(paired bootstrap and McNemar's exact test), overall and per turncase, domain, eval focus."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from datbench_cli.compare.paired import Sample
from datbench_cli.compare.spec import Metric, Side, TableSpec
from datbench_cli.errors import InputError

_GROUPS = ("turncase", "domain", "eval_focus")


def _number(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _sample(entry: Any, index: int, path: Path) -> Sample:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise InputError(f'results[{index}] is not a task result with a string "id"', path)
    ars, apr = _number(entry, "ars"), _number(entry, "apr")
    if ars is None or apr not in (0.0, 1.0):
        raise InputError(
            f'results[{index}] ({entry["id"]}) needs a number "ars" and an "apr" of 0 or 1', path
        )
    groups = {key: str(entry.get(key)) for key in _GROUPS}
    check = tuple(groups[key] for key in _GROUPS) + (entry.get("total_weight"),)
    return Sample(entry["id"], groups, {"ars": ars, "apr": apr}, {"apr": apr == 1.0}, check)


def read(results: list[Any], path: Path) -> list[Sample]:
    """The tasks of a VisualToolBench report's ``results``."""
    return [_sample(entry, index, path) for index, entry in enumerate(results)]


def pair_fields(a: Sample, b: Sample) -> dict[str, Any]:
    """One joined task as the comparison lists it."""
    return {
        "id": a.id,
        **a.groups,
        "ars_a": a.values["ars"],
        "ars_b": b.values["ars"],
        "apr_a": int(a.values["apr"]),
        "apr_b": int(b.values["apr"]),
    }


SIDE = Side(
    metrics=(Metric("ars", "ARS", exact_test=False), Metric("apr", "APR", exact_test=True)),
    tables=(
        TableSpec("overall", "overall", None, None, gated=True),
        TableSpec("by_turncase", "per turncase", "turncase", None, gated=False),
        TableSpec("by_domain", "per domain", "domain", None, gated=False),
        TableSpec("by_eval_focus", "per eval focus", "eval_focus", None, gated=False),
    ),
    read=read,
    pair_fields=pair_fields,
    counted="num_tasks",
    means=(("apr", "apr"), ("ars", "ars")),
)
