"""The scoring profiles every benchmark accepts: ``reference`` (the reference's scores, quirks
included; the default) and ``corrected`` (one named fix per known reference defect, where an
honest one exists; docs/known-defects.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from datbench_cli.errors import UsageError

REFERENCE = "reference"
CORRECTED = "corrected"
PROFILES = (REFERENCE, CORRECTED)


def check_profile(profile: object) -> str:
    """``profile`` if it names a scoring profile, else ``ValueError`` naming the choices."""
    if profile not in PROFILES:
        raise ValueError(f"unknown scoring profile {profile!r} (choose {' or '.join(PROFILES)})")
    return str(profile)


def profile_option(options: Mapping[str, Any]) -> str:
    """The ``--profile`` of a ``score`` request (default ``reference``), or the usage error."""
    profile = options.get("profile") or REFERENCE
    if profile not in PROFILES:
        raise UsageError(f"--profile must be {' or '.join(PROFILES)}, not {profile!r}")
    return str(profile)
