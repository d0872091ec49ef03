"""What scoring one sample leaves for the parent process: a compact record, built where the
sample was scored (in the worker, with ``--jobs``), so the parent only adds it up.

A record is a plain tuple ``(score, is_correct, verdict, error, corrections, details, reasons,
entry)``:

- ``details``: the score details the dataset's ``compute_metrics`` needs, pickled (``None``
  when the sample does not enter ``dataset_metrics``);
- ``corrections``: the fixes of the corrected profile that changed the sample;
- ``reasons``: why the sample is censored (see
  :func:`~datbench_cli.benchmarks.datbench.censoring.sample_reasons`);
- ``entry``: in a streamed record, the sample's entry of the report's ``results`` as the
  report's indented JSON bytes; in a library record, the sample's :class:`SampleScore`.
"""

from __future__ import annotations

import pickle
from typing import Any

from datbench_cli.benchmarks.datbench.censoring import sample_reasons
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, SampleScore
from datbench_cli.benchmarks.datbench.scoring import Outcome, WorkItem, judge_status
from datbench_cli.files import jsonio
from datbench_cli.scorers import get_scorer

# A result entry sits two levels deep in the report (report -> "results" -> entry).
_ENTRY_INDENT = b"    "


def sample_score(item: WorkItem, outcome: Outcome) -> SampleScore:
    """The report's result for one scored sample (a judge-mode sample whose judge lines all
    errored, or whose judge refused it, says so in ``judge_status``)."""
    result = _sample_score(
        item.sample, item.output, outcome.score, outcome.is_correct, outcome.details
    )
    if said := judge_status(item.judge_problem, outcome.verdict):
        result.metadata["judge_status"] = said
    return result


def _sample_score(
    sample: DatBenchSample, output: str, score: float, is_correct: bool, details: Any
) -> SampleScore:
    metrics = sample.eval_metrics if isinstance(sample.eval_metrics, dict) else {}
    return SampleScore(
        id=sample.id,
        score=score,
        vlm_output=output,
        ground_truth=sample.answer,
        is_correct=is_correct,
        metadata={
            "capability": sample.capability,
            "eval_mode": sample.eval_mode,
            "dataset": sample.dataset,
            "is_circular": sample.is_circular,
            "discrimination": metrics.get("discrimination", 0.0),
            "score_details": details,
        },
    )


def _metric_input(item: WorkItem, outcome: Outcome) -> bool:
    """Whether the sample's details enter its dataset's ``compute_metrics``."""
    if item.judge_mode or outcome.error is not None:
        return False
    dataset = item.sample.dataset
    return get_scorer(dataset if isinstance(dataset, str) else str(dataset)) is not None


def _record(item: WorkItem, outcome: Outcome, entry: Any) -> tuple:
    details = outcome.details
    enters = _metric_input(item, outcome)
    corrections = tuple(details.get("corrections", ())) if enters else ()
    verdict = details.get("judge_verdict") if isinstance(details, dict) else None
    reasons = sample_reasons(item.status, item.output, item.sample.eval_mode, verdict)
    return (
        outcome.score,
        outcome.is_correct,
        outcome.verdict,
        outcome.error,
        corrections,
        pickle.dumps(details, pickle.HIGHEST_PROTOCOL) if enters else None,
        reasons,
        entry,
    )


def library_record(item: WorkItem, outcome: Outcome) -> tuple:
    """The record of a library call (``compute_metrics``): the sample's result, built where
    the sample was scored."""
    return _record(item, outcome, sample_score(item, outcome))


def streamed_record(item: WorkItem, outcome: Outcome) -> tuple:
    """The record of ``score``: the metric details pickled, the result entry serialised (with
    the response's status), so nothing of the sample stays behind as Python objects."""
    result = sample_score(item, outcome)
    result.metadata["response_status"] = item.status
    text = jsonio.dumps_pretty(result.to_dict())
    return _record(item, outcome, _ENTRY_INDENT + text.replace(b"\n", b"\n" + _ENTRY_INDENT))
