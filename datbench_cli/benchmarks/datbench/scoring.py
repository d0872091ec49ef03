"""Scoring one sample: direct mode through its dataset scorer (or the fallback), judge mode
from the judge verdict only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datbench_cli.batch.digests import is_stale
from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeResponse
from datbench_cli.benchmarks.datbench.scorer_input import build_scorer_input
from datbench_cli.benchmarks.profiles import CORRECTED, REFERENCE
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.runtime.pool import Failure
from datbench_cli.runtime.stack import call_with_reference_headroom
from datbench_cli.scorers import get_scorer
from datbench_cli.text.extract import extract_final_answer


@dataclass
class Outcome:
    """What scoring one sample produced, before it becomes a :class:`SampleScore`."""

    score: float
    is_correct: bool
    details: dict[str, Any]
    error: dict[str, str] | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class WorkItem:
    """One sample to score: its model output and, for judge mode, its judge response."""

    sample: DatBenchSample
    output: str
    judge_mode: bool
    judge: JudgeResponse | None
    profile: str = REFERENCE
    # The status of its response line (``ok``, ``empty``, ...), where the caller knows it.
    status: str | None = None
    # Why its judge gave no verdict, where the caller knows it (see :func:`judge_status`).
    judge_problem: str | None = None


#: Why a judge-mode sample's judge gave no verdict: every judge line errored, or the judge (its
#: service's content filter, or the model) refused it.
JUDGE_ERRORED, JUDGE_REFUSED = "errored", "refused"


def judge_status(problem: str | None, verdict: str | None) -> str | None:
    """What a judge-mode sample's result says of its judge (``None``: nothing apart): the
    ``problem`` its judge lines have (:data:`JUDGE_ERRORED`, :data:`JUDGE_REFUSED`), when its
    verdict is missing or unparsed (a verdict read from a refusal's text counts as read; a
    stale one judged another text)."""
    return problem if verdict in ("missing", "unparsed") else None


def score_item(item: WorkItem) -> Outcome:
    """The outcome of one work item (in a worker of :mod:`datbench_cli.runtime.pool`, which
    bounds its time and memory)."""
    if item.judge_mode:
        return score_judge(item.output, item.judge)
    return score_direct(item.sample, item.output, item.profile)


_FAILURE_TYPES = {"timeout": "SampleTimeout", "memory": "SampleMemoryExceeded"}


def failed_outcome(failure: Failure) -> Outcome:
    """What is recorded for a sample whose worker ran out of time or memory, or died."""
    error = {"type": _FAILURE_TYPES.get(failure.kind, "WorkerDied"), "message": failure.message}
    return Outcome(0.0, False, {"score": 0.0, "error": error}, error=error)


def _fallback(sample: DatBenchSample, model_output: str) -> dict[str, Any]:
    # Reference fallback for unregistered names: extracted answer vs answer, case-insensitive
    # exact match; trailing punctuation is kept ("Yes." != "yes") and "" equals "".
    extracted = extract_final_answer(model_output)
    correct = extracted.strip().lower() == sample.answer.strip().lower()
    return {"score": 1.0 if correct else 0.0}


def score_direct(
    sample: DatBenchSample,
    model_output: str,
    profile: str = REFERENCE,
) -> Outcome:
    """Score a direct-mode sample; an exception (or a timeout) becomes a recorded error
    (running out of memory is left to the worker, which records it).

    Under the corrected profile a scorer with ``score_sample_corrected`` is scored by it (its
    details name the fixes that changed the sample under ``"corrections"``), on the input its
    ``scorer_input_corrected`` hook builds where it has one.
    """
    dataset = sample.dataset
    scorer = get_scorer(dataset) if isinstance(dataset, str) else None
    try:
        if scorer is None:
            details = _fallback(sample, model_output)
        else:
            score_sample = scorer.score_sample
            corrected = profile == CORRECTED
            if corrected:
                score_sample = getattr(scorer, "score_sample_corrected", score_sample)
            details = call_with_reference_headroom(
                score_sample, build_scorer_input(sample, scorer, corrected), model_output
            )
        score = float(details.get("score", 0.0))
        # The reference's threshold: a partial score of 0.5 counts as correct.
        is_correct = bool(details.get("score", 0.0) >= 0.5)
    except MemoryError:
        raise
    except (Exception, SampleTimeout) as exc:  # noqa: BLE001 - recorded, never fatal
        error = {"type": type(exc).__name__, "message": str(exc)}
        return Outcome(0.0, False, {"score": 0.0, "error": error}, error=error)
    return Outcome(score, is_correct, details)


def score_judge(model_output: str, judge: JudgeResponse | None) -> Outcome:
    """Score a judge-mode sample from its judge response alone (missing/unparsed score 0; so
    does a stale one, whose digest is not that of ``model_output``; a null output is the empty
    text the judge was shown)."""
    if judge is None:
        verdict, raw, parsed = "missing", None, None
    elif is_stale(judge.response_digest, model_output or ""):
        verdict, raw, parsed = "stale", judge.raw_judge_output, None
    else:
        raw = judge.raw_judge_output
        parsed = parse_judge_verdict(judge.verdict, raw)
        verdict = {True: "correct", False: "incorrect", None: "unparsed"}[parsed]
    match = parsed is True
    score = 1.0 if match else 0.0
    details = {
        "score": score,
        "eval_mode": "judge",
        "match": match,
        "judge_verdict": verdict,
        "judge_raw_output": raw,
        "judge_missing_response": judge is None,
    }
    return Outcome(score, match, details, verdict=verdict)
