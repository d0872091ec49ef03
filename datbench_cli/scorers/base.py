"""The contract every dataset scorer module meets."""

from __future__ import annotations

from typing import Any, Protocol


class Scorer(Protocol):
    """A dataset scorer: a module with these two functions (and optionally ``KNOWN_DEFECT``).

    ``score_sample`` receives the scorer input built by :mod:`datbench_cli.benchmarks.datbench.scorer_input` and the
    model output; it returns the score details, a dict with at least ``"score"``. It may raise: the
    evaluator records the exception as that sample's scorer error. ``compute_metrics`` receives
    ``[{"score_details": details}, ...]`` for the dataset's direct-mode samples and returns the
    dataset's aggregate metrics.
    """

    def score_sample(self, sample: dict[str, Any], model_output: str) -> dict[str, Any]: ...

    def compute_metrics(self, predictions: list[dict[str, Any]]) -> dict[str, Any]: ...
