"""The DatBench stages after export (see :mod:`datbench_cli.export`): judge tasks and scoring.

The command line is a thin layer over these functions; they raise :class:`InputError` for bad
input and never leave a half-written file behind (every file is written to a temporary name and
renamed into place; the manifest, written last, marks a finished export).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from datbench_cli import jsonio
from datbench_cli.errors import InputError
from datbench_cli.evaluator import DatBenchEvaluator
from datbench_cli.responses import LoadedResponses, load_judge_responses, load_vlm_responses
from datbench_cli.rundir import REFERENCES, RunDir
from datbench_cli.schema import DatBenchReport, DatBenchSample

Warn = Callable[[str], None]
Advance = Callable[[int], None]

_REQUIRED_COLUMNS = ("id", "question", "answer")


def _ignore(_: Any) -> None:
    return None


# --------------------------------------------------------------------------- reading a run


def load_samples(run: RunDir) -> list[DatBenchSample]:
    """The samples of a DatBench run directory, from references.jsonl."""
    path = run.path(REFERENCES)
    samples = []
    for number, record in jsonio.iter_jsonl(path):
        try:
            samples.append(DatBenchSample(**record, image=None))
        except TypeError as exc:
            raise InputError(f"not a reference line ({exc})", path, number) from None
        if not isinstance(samples[-1].id, str):
            raise InputError('"id" must be a string', path, number)
    return samples


@contextlib.contextmanager
def forwarded_warnings(warn: Warn) -> Iterator[None]:
    """Send the library's ``UserWarning``s to ``warn`` (the CLI prints them on stderr)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for item in caught:
        warn(str(item.message))


def _report_set_aside(loaded: LoadedResponses, what: str, path: Path, warn: Warn) -> None:
    if loaded.truncated_ids:
        warn(
            f"{len(loaded.truncated_ids)} {what} in {path} stopped at the token limit "
            "(finish_reason length); they are scored as they are"
        )


# --------------------------------------------------------------------------- judge tasks


def make_judge_tasks(run: RunDir, responses: Path, out: Path, *, warn: Warn = _ignore) -> int:
    """Write one judge request per judge-mode sample that has a response; return the count."""
    evaluator = DatBenchEvaluator.from_samples(load_samples(run))
    loaded = load_vlm_responses(responses)
    _report_set_aside(loaded, "responses", responses, warn)
    if loaded.errored_ids:
        warn(f"{len(loaded.errored_ids)} errored response line(s) in {responses} were skipped")
    known = evaluator.samples_by_id
    unknown = {r.id for r in loaded.vlm if r.id not in known}
    if unknown:
        warn(f"{len(unknown)} response id(s) in {responses} match no sample and were ignored")
    requests = evaluator.create_judge_tasks(loaded.vlm)
    answered = {r.id for r in loaded.vlm}
    unanswered = sum(
        1 for s in evaluator.samples if s.eval_mode == "judge" and s.id not in answered
    )
    if unanswered:
        warn(f"{unanswered} judge-mode sample(s) have no response and get no judge task")

    def lines() -> Iterator[dict[str, Any]]:
        for request in requests:
            sample = known[request.id]
            yield {
                "id": request.id,
                "vlm_response": request.vlm_response,
                "ground_truth": request.ground_truth,
                "judge_prompt": request.judge_prompt,
                "question": sample.question,
                "all_answers": sample.all_answers,
            }

    return jsonio.write_jsonl_atomic(out, lines())


# --------------------------------------------------------------------------- scoring


def score_run(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    *,
    strict_judge: bool = False,
    strict: bool = False,
    sample_timeout: float | None = None,
    jobs: int = 1,
    warn: Warn = _ignore,
) -> DatBenchReport:
    """Score a DatBench run directory's responses (and judge responses) into a report."""
    evaluator = DatBenchEvaluator.from_samples(load_samples(run))
    loaded = load_vlm_responses(responses)
    _report_set_aside(loaded, "responses", responses, warn)
    judges = LoadedResponses()
    if judge_responses is not None:
        judges = load_judge_responses(judge_responses)
        _report_set_aside(judges, "judge responses", judge_responses, warn)
    with forwarded_warnings(warn):
        return evaluator.compute_metrics(
            loaded.vlm,
            judges.judge,
            strict_judge=strict_judge,
            strict=strict,
            sample_timeout=sample_timeout,
            errored_responses=len(loaded.errored_ids),
            judge_errored_responses=len(judges.errored_ids),
            jobs=jobs,
        )
