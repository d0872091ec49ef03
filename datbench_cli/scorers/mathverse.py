"""MathVerse: judge-only in the reference; its direct scorer raises for every sample."""

from __future__ import annotations

from typing import Any

KNOWN_DEFECT = (
    "MathVerse's direct scorer always raises NotImplementedError, so every direct-mode sample is "
    "recorded as a scorer error (its samples are meant to be judge-mode)."
)
MESSAGE = "MathVerse uses LM-judge scoring only."


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Always raises, as the reference does."""
    # Quirk: raises for every input, whatever the sample's eval_mode.
    raise NotImplementedError(MESSAGE)


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """No direct-mode metrics (judge aggregation is the evaluator's job)."""
    return {}
