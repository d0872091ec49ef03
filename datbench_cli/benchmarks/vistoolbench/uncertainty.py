"""Our addition to a VisualToolBench summary (not in the official one): error bars on ARS and
APR, overall and per turncase, domain and eval focus (``summary["uncertainty"]``).

Each group holds ``{"n", "ars": {...}, "apr": {...}}`` with the entries of
:func:`datbench_cli.stats.describe` (``mean``, ``se``, ``ci95``, ``mdd80``) over
the per-task scores. Definitions: ``docs/statistics.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datbench_cli import stats

_GROUPS = ("turncase", "domain", "eval_focus")

METHOD = {
    "confidence": stats.CONFIDENCE,
    "se": "CLT: sqrt(sample variance / n) of per-task ARS or APR",
    "ci95": "Wilson score interval with continuity correction of n * mean in n (the 0/1 APR; "
    "conservative for the partial-credit ARS); always within [0, 1]",
    "mdd80": "minimum detectable paired difference at 80% power, two-sided 5%, "
    "from 2 p (1 - p) / n (a second run of equal score, uncorrelated outcomes)",
}


def _entry(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(results),
        "ars": stats.describe([r["ars"] for r in results]),
        "apr": stats.describe([r["apr"] for r in results]),
    }


def uncertainty(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``summary["uncertainty"]`` from the per-task results."""
    out: dict[str, Any] = {"method": dict(METHOD), "overall": _entry(results)}
    for field in _GROUPS:
        groups: dict[str, list[dict[str, Any]]] = {}
        for result in results:
            groups.setdefault(str(result[field]), []).append(result)
        out[f"by_{field}"] = {name: _entry(groups[name]) for name in sorted(groups)}
    return out
