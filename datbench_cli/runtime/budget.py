"""The per-sample budget: the seconds one sample may take, and the exception that ends it.

The budget is enforced inside the worker processes of :mod:`datbench_cli.runtime.pool` with
``signal.setitimer``: they are ours, so there is no caller's timer to keep.
"""

from __future__ import annotations

import math

from datbench_cli.errors import UsageError

DEFAULT_SAMPLE_TIMEOUT = 30.0


class SampleTimeout(BaseException):
    """Scoring one sample took longer than its budget.

    A ``BaseException`` (like ``KeyboardInterrupt``), so the broad ``except Exception`` blocks
    that reference scorers use to turn failures into a score of 0 cannot swallow it: the
    evaluator catches it explicitly and records the sample as a scorer error.
    """


def check_sample_timeout(seconds: float) -> float | None:
    """The budget ``--sample-timeout`` asks for (``None``: no limit, for 0 or infinity); a
    negative value or NaN is refused."""
    if math.isnan(seconds) or seconds < 0:
        raise UsageError(
            f"--sample-timeout must be a number of seconds, 0 for no limit, got {seconds:g}"
        )
    return None if seconds == 0 or math.isinf(seconds) else seconds
