"""Hypothesis profiles for the property tests, selected by ``HYPOTHESIS_PROFILE``.

- ``ci`` (default): deterministic (derandomized, no example database) and bounded, so the
  property tests take about a minute on two cores.
- ``long``: many more random examples, for local fuzzing (``make fuzz``); failures are kept in
  the local ``.hypothesis/`` database and replayed first next time.

Every property test module imports this module, so the profile applies under pytest and under
``python -m unittest`` alike. :func:`examples` scales a test's example count with the profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SLOW_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]

settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_CHECKS,
)
settings.register_profile(
    "long",
    max_examples=3000,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_CHECKS,
)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def examples(fraction: float) -> int:
    """``fraction`` of the profile's example count (at least 1), for the costlier tests."""
    return max(1, int(settings.default.max_examples * fraction))


def long_run() -> bool:
    """True under the ``long`` profile (kill loops and the like run longer too)."""
    return PROFILE == "long"
