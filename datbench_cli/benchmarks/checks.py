"""The checks ``score`` runs after scoring, shared by every benchmark.

Coverage is always checked; ``--strict-judge``, ``--strict`` and ``--fail-under`` add theirs.
The outcome of every check is recorded in the report (``summary.checks``), which is written
even when a check fails, so the file at the output path always describes the inputs of the
last run (never an older run's numbers) and says which checks it failed. ``--fail-under`` never
passes on a run whose coverage check failed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from datbench_cli.errors import CheckFailed, UsageError

COVERAGE = "coverage"
STRICT_JUDGE = "strict_judge"
STRICT = "strict"
FAIL_UNDER = "fail_under"


@dataclass(frozen=True)
class CheckOptions:
    """What the user asked ``score`` to check."""

    strict_judge: bool = False
    strict: bool = False
    allow_missing: bool = False
    fail_under: float | None = None


@dataclass(frozen=True)
class Check:
    """One check's outcome: its name, whether it passed, and what it found."""

    name: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def fail_under_threshold(value: float | None) -> float | None:
    """``--fail-under`` as given, refused unless it is a fraction in [0, 1]."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise UsageError(f"--fail-under takes a fraction in [0, 1] (0.6 for 60%), not {value!r}")
    return value


def coverage_check(unanswered: int, expected: int, where: str, allow_missing: bool) -> Check:
    """Passes when every expected unit has a usable response (or ``allow_missing`` and at
    least one has); ``where`` names the gaps."""
    answered = expected - unanswered
    if unanswered == 0 and expected > 0:
        return Check(COVERAGE, True, f"{answered} of {expected} answered")
    detail = f"{unanswered} of {expected} have no usable response ({where})"
    if answered == 0:
        return Check(COVERAGE, False, f"nothing was answered: {detail}")
    if allow_missing:
        return Check(COVERAGE, True, f"{detail}; allowed by --allow-missing")
    return Check(COVERAGE, False, f"{detail}; pass --allow-missing to score a partial run")


def fail_under_check(metric: str, value: float | None, threshold: float, covered: bool) -> Check:
    """``metric`` at least ``threshold``, on a run whose coverage check passed."""
    if not covered:
        return Check(FAIL_UNDER, False, f"{metric} is not gated on a run that failed coverage")
    if value is None:
        return Check(FAIL_UNDER, False, f"{metric} is null (nothing was scored)")
    if value < threshold:
        return Check(FAIL_UNDER, False, f"{metric} {value:.4f} is below {threshold}")
    return Check(FAIL_UNDER, True, f"{metric} {value:.4f} is at least {threshold}")


def record(summary: dict[str, Any], checks: Iterable[Check]) -> None:
    """Put the checks into the summary (``checks``, ``checks_passed``)."""
    checks = list(checks)
    summary["checks"] = [c.to_dict() for c in checks]
    summary["checks_passed"] = all(c.passed for c in checks)


def raise_failed(summary: dict[str, Any]) -> None:
    """Raise :class:`CheckFailed` naming every failed check recorded in ``summary``."""
    failed = [c for c in summary.get("checks", []) if not c["passed"]]
    if failed:
        text = "; ".join(f"{c['name']} check failed: {c['detail']}" for c in failed)
        raise CheckFailed(f"{text} (the report records the failed checks)")
