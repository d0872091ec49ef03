"""Sample -> the dict a dataset scorer receives (the reference's ``_convert_sample_for_scorer``).

The metadata is parsed here; what goes into the dict is the scorer module's own business (its
``scorer_input`` hook, else :func:`datbench_cli.scorers.base.default_input`). Errors the reference
raises for missing metadata become recorded scorer errors carrying the same type and message.
"""

from __future__ import annotations

import json
from typing import Any

from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.scorers import Scorer
from datbench_cli.scorers.base import default_input


def parse_metadata(raw: Any) -> Any:
    """Metadata as the reference reads it: JSON text is parsed, anything else is ``raw or {}``.

    Quirk: ``"null"`` parses to ``None`` and the first membership test then raises ``TypeError``;
    ``"[]"`` gives a list in which no field is ever found. Invalid JSON raises ``JSONDecodeError``
    (the standard library's, so the message matches the reference).
    """
    if isinstance(raw, str):
        return json.loads(raw)
    return raw or {}


def build_scorer_input(
    sample: DatBenchSample, scorer: Scorer, corrected: bool = False
) -> dict[str, Any]:
    """The scorer's view of a sample, built by the scorer's hook (or the default); under the
    corrected profile by its ``scorer_input_corrected`` hook where it has one (a fix that needs
    a field the reference never forwards)."""
    metadata = parse_metadata(sample.metadata)
    hook = getattr(scorer, "scorer_input", None)
    if corrected:
        hook = getattr(scorer, "scorer_input_corrected", hook)
    if hook is None:
        return default_input(sample, metadata)
    result: dict[str, Any] = hook(sample, metadata)
    return result
