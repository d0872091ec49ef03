"""``DatBenchEvaluator``: samples + responses (+ judge responses) -> :class:`DatBenchReport`."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from datbench_cli.batch.answers import checked
from datbench_cli.batch.judge_store import JudgeStore, held_judges, unknown_ids
from datbench_cli.batch.response_store import ResponseStore, held_responses
from datbench_cli.batch.responses import ERRORED, MISSING
from datbench_cli.benchmarks.datbench.capabilities import CAPABILITIES
from datbench_cli.benchmarks.datbench.judge_check import (
    DUPLICATE_JUDGE_IDS,
    NO_VERDICT,
    JudgeAccount,
    direct_judged_note,
    judge_problem,
    refused_judged_note,
    unanswered_judged_note,
)
from datbench_cli.benchmarks.datbench.records import library_record, streamed_record
from datbench_cli.benchmarks.datbench.references import ReferenceFile, SampleKey
from datbench_cli.benchmarks.datbench.schema import (
    REQUIRED_COLUMNS,
    DatBenchReport,
    DatBenchSample,
    InferenceTask,
    JudgeRequest,
    JudgeResponse,
    SampleScore,
    VLMResponse,
)
from datbench_cli.benchmarks.datbench.scoring import (
    JUDGE_ERRORED,
    JUDGE_REFUSED,
    Outcome,
    WorkItem,
    failed_outcome,
    judge_status,
    score_item,
)
from datbench_cli.benchmarks.datbench.streamed_report import StreamedReport, result_table
from datbench_cli.benchmarks.datbench.summary import Coverage, SummaryBuilder
from datbench_cli.benchmarks.datbench.work import RawItem, WorkList, raw_size
from datbench_cli.benchmarks.profiles import REFERENCE, check_profile
from datbench_cli.errors import (
    CoverageWarning,
    DatbenchWarning,
    ScorerFailed,
    StrictJudgeError,
    name_ids,
)
from datbench_cli.files.loading import check_flag, check_rows
from datbench_cli.files.run_store import unknown
from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT
from datbench_cli.runtime.pool import Failure, Limits, score_in_workers, worker_count

if TYPE_CHECKING:
    from datbench_cli.benchmarks.datbench.columns import ScoreColumns

# What the worker makes of a sample's outcome (see records.py), there.
Finish = Callable[[WorkItem, Outcome], tuple]
Build = Callable[[RawItem], WorkItem]


def _record(finish: Finish, build: Build, raw: RawItem) -> tuple:
    item = build(raw)  # in the worker: the parsing runs in parallel
    return finish(item, score_item(item))


def _failed_record(finish: Finish, build: Build, raw: RawItem, failure: Failure) -> tuple:
    return finish(build(raw), failed_outcome(failure))


@dataclass(frozen=True)
class ScoreOptions:
    """How a run is scored, and what reading its response files found (only reported).

    ``strict`` raises :class:`ScorerFailed` when a scorer raises (otherwise the sample scores
    0 with the error in its ``score_details``); ``sample_timeout`` bounds the seconds one
    sample may take; ``jobs`` > 1 scores on that many worker processes (0: every usable
    core; results are identical and in the same order); ``progress``, if given, is called as
    ``progress(0, total=N)`` and then with the number of samples scored since its last call;
    ``profile`` is ``"reference"`` or ``"corrected"`` (see docs/known-defects.md). The
    ``errored_*`` and ``truncated_*`` counts come from the response files (lines that
    reported an error; outputs cut at the token limit, scored as they are);
    ``judge_truncated_ids`` are the judge response ids whose line used stopped at the token
    limit (only a judge-mode sample's with a usable response whose verdict is read, not
    stale, is counted: the others are ignored); ``response_statuses`` maps ids to the status
    of their response line (default: ``ok`` for non-empty text, else ``empty``);
    ``errored_ids`` are the response ids whose only lines were transport failures (a sample's
    counted ``errored``, not ``missing``; any other is an unknown response id), ``judge_errored_ids`` the same of the judge responses, counted
    as ``--strict-judge`` counts them: a judge-mode sample's with a usable response is an
    errored judge response, a direct-mode sample's or an unanswered one's is counted as such,
    any other is an unknown judge response id; ``judge_refusal_ids`` the judge response ids
    whose line used is a refusal (see
    :attr:`~datbench_cli.batch.responses.LoadedResponses.refusal_ids`): a judge-mode sample's
    without a verdict is counted refused by the judge, not errored, missing or unparsed.
    """

    strict: bool = False
    sample_timeout: float | None = DEFAULT_SAMPLE_TIMEOUT
    jobs: int = 1
    progress: Callable[..., None] | None = None
    profile: str = REFERENCE
    errored_responses: int = 0
    truncated_responses: int = 0
    judge_truncated_ids: frozenset[str] = frozenset()
    response_statuses: Mapping[str, str] | None = None
    errored_ids: frozenset[str] = frozenset()
    judge_errored_ids: tuple[str, ...] = ()
    judge_refusal_ids: frozenset[str] = frozenset()


class DatBenchEvaluator:
    """Scores VLM outputs on DatBench samples exactly as the reference harness does.

    Direct-mode samples go to the scorer of their source dataset (or the fallback); judge-mode
    samples are scored only from the judge verdict.
    """

    def __init__(self, hf_dataset: Iterable[dict[str, Any]], capability: str):
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; valid: {', '.join(CAPABILITIES)}")
        check_rows(hf_dataset, "the capability's rows")
        self.capability = capability
        self.hf_dataset: Iterable[dict[str, Any]] | None = hf_dataset
        samples = [_sample(number, row, capability) for number, row in enumerate(hf_dataset)]
        _check_unique(samples)
        self._hold(samples)

    def _hold(self, samples: list[DatBenchSample], source: ReferenceFile | None = None) -> None:
        self.samples = samples
        self.samples_by_id: dict[str, DatBenchSample] = {s.id: s for s in samples}
        self._source = source

    def _samples(self) -> ReferenceFile:
        """The samples to score: the run's references, or the held samples in a private store
        of their own (as held responses are)."""
        return self._source if self._source is not None else ReferenceFile(None, held=self.samples)

    def get_inference_tasks(self) -> list[InferenceTask]:
        """One task per sample, in dataset order; a sample whose prompt parts are not text
        is a ``ValueError`` naming it (as ``export-tasks`` refuses it), not a prompt holding
        the word "None"."""
        for number, sample in enumerate(self.samples):
            defect = sample.prompt_defect()
            if defect is not None:
                raise ValueError(f"hf_dataset[{number}] (id {sample.id!r}): {defect}")
        return [InferenceTask.from_sample(s) for s in self.samples]

    def create_judge_tasks(self, vlm_responses: Iterable[VLMResponse]) -> list[JudgeRequest]:
        """One request per judge-mode sample that has a response (duplicate ids: last wins)."""
        by_id = {r.id: r for r in checked(vlm_responses, VLMResponse, "vlm_responses")}
        return [
            JudgeRequest.from_sample_and_response(sample, by_id[sample.id])
            for sample in self.samples
            if sample.eval_mode == "judge" and sample.id in by_id
        ]

    def compute_metrics(
        self,
        vlm_responses: Iterable[VLMResponse],
        judge_responses: Iterable[JudgeResponse] | None = None,
        strict_judge: bool = False,
        *,
        profile: str = REFERENCE,
    ) -> DatBenchReport:
        """Score every sample that has a response and aggregate the report (the seed's API).

        Samples without a response are not scored (the reference's semantics); the summary
        says how many there are (``unanswered_samples``, ``coverage``). A judge response whose
        ``response_digest`` is not the digest of the sample's current response is stale and
        scores 0. ``strict_judge`` raises ``ValueError`` naming the ids whose judge verdict is
        missing, unparsed or stale (and errored or refused, each counted apart, for a run
        whose judge lines errored or refused). A scorer failure or a sample over its time budget
        (30 s) or memory cap scores 0 with the error in its ``score_details``. ``profile`` is
        ``"reference"`` (the reference's scores, quirks included) or ``"corrected"`` (one named
        fix per known reference defect, see docs/known-defects.md).
        """
        check_flag(strict_judge, "strict_judge")
        options = ScoreOptions(profile=profile)
        return self._in_memory(vlm_responses, judge_responses, strict_judge, options)

    def _in_memory(
        self,
        vlm_responses: Iterable[VLMResponse],
        judge_responses: Iterable[JudgeResponse] | None,
        strict_judge: bool,
        options: ScoreOptions,
    ) -> DatBenchReport:
        """The report with every result held as a :class:`SampleScore` (the public method and
        :func:`compute_report`, one frame below them for the warnings' stack level)."""
        results: list[SampleScore] = []

        def keep(record: tuple) -> None:
            results.append(record[7])

        summary, _ = self._evaluate(
            vlm_responses, judge_responses, strict_judge, library_record, keep, options, depth=1
        )
        return DatBenchReport(summary=summary, results=results)

    def _stream_metrics(
        self,
        vlm_responses: ResponseStore,
        judge_responses: Iterable[JudgeResponse] | JudgeStore,
        options: ScoreOptions,
    ) -> StreamedReport:
        """The report of ``score``: the summary, each result stored (as the report's JSON) in
        a private run store as it is scored instead of being held as an object, every result
        carrying its ``response_status``; the censoring counts use those statuses. Memory
        stays flat in the number of samples; the inputs are used up."""
        entries = result_table()
        summary, table = self._evaluate(
            vlm_responses,
            judge_responses,
            False,
            streamed_record,
            lambda record: entries.add(record[7]),
            options,
            with_status=True,
            release_inputs=True,
        )
        return StreamedReport(summary, entries, table)

    def _evaluate(
        self,
        vlm_responses: Iterable[VLMResponse] | ResponseStore,
        judge_responses: Iterable[JudgeResponse] | JudgeStore | None,
        strict_judge: bool,
        finish: Finish,
        sink: Callable[[tuple], None],
        options: ScoreOptions,
        *,
        with_status: bool = False,
        release_inputs: bool = False,
        depth: int = 0,
    ) -> tuple[dict[str, Any], ScoreColumns]:
        """Score, pass each sample's record (see :mod:`records`, made by ``finish``) to
        ``sink`` in sample order, with its raw work item and the function that builds it, and
        return the summary and the per-sample score table
        (``depth``: frames between this and the public method, for the warnings;
        ``release_inputs``: the samples drop their columns before aggregating)."""
        # Here, not at start-up: the score table and its error bars import numpy, which
        # make-judge-tasks and check-judge (users of this class too) do not need.
        from datbench_cli.benchmarks.datbench.columns import ScoreColumns
        from datbench_cli.benchmarks.datbench.uncertainty import table_additions

        profile = check_profile(options.profile)
        strict, progress = options.strict, options.progress
        samples = self._samples()
        # Responses held by the caller go into private stores of their own.
        store = (
            vlm_responses
            if isinstance(vlm_responses, ResponseStore)
            else held_responses(
                checked(vlm_responses, VLMResponse, "vlm_responses"), options.response_statuses
            )
        )
        judges = (
            judge_responses
            if isinstance(judge_responses, JudgeStore)
            else held_judges(
                checked(
                    () if judge_responses is None else judge_responses,
                    JudgeResponse,
                    "judge_responses",
                )
            )
        )
        coverage = Coverage(
            expected_samples=len(samples),
            duplicate_response_ids=store.duplicate_ids(samples.known),
            errored_responses=options.errored_responses,
            truncated_responses=options.truncated_responses,
            unknown_judge_response_ids=len(
                unknown_ids(judges, options.judge_errored_ids, samples.known)
            ),
            duplicate_judge_response_ids=judges.duplicate_ids(samples.known),
        )
        errored, judge_errored = options.errored_ids, frozenset(options.judge_errored_ids)
        work = WorkList(samples, profile, store, judges)
        judge_matched = 0
        cut_judges = bytearray()  # per work item: its judge reply stopped at the token limit
        # Every answered sample, in order, counting coverage as it goes.
        matched = bytearray(len(store))  # the responses some sample has
        # The last line of each id, one query per input (an id that is not a string, which a
        # caller's sample may have, matches no line).
        last_response, last_judge = store.last_by_id(), judges.last_by_id()
        for key in samples.keys():
            ident = key.id
            # Judge lines (answered or errored) that match no judge task are counted as what
            # they are, as ``--strict-judge`` counts them (see judge_check.py).
            judged = isinstance(ident, str) and (ident in last_judge or ident in judge_errored)
            if key.eval_mode != "judge" and judged:
                # A judge line of a direct-mode sample, which no judge scores: ignored, counted.
                coverage.direct_judge_response_ids += 1
            position = last_response.get(ident) if isinstance(ident, str) else None
            if position is None:
                if key.eval_mode == "judge" and judged:
                    # Not scored, so its verdict is unused (judged before the responses ran again?)
                    coverage.unanswered_judge_response_ids += 1
                coverage.missing_responses += 1
                coverage.count(key.capability, ERRORED if key.id in errored else MISSING)
                continue
            matched[position] = 1
            status = store.status(position)
            coverage.count(key.capability, status)
            judge_mode = key.eval_mode == "judge"
            judge = last_judge.get(ident) if judge_mode else None
            judge_matched += judge is not None
            # A judge task whose every judge call failed (its verdict is missing), or whose
            # judge refused it: counted once scored, by its verdict.
            problem = (
                judge_problem(judge is None and judged, ident in options.judge_refusal_ids)
                if judge_mode
                else None
            )
            # A judge task whose reply was cut at the judge's token limit: counted once scored,
            # if its verdict is read (a stale one, of another response text, is not).
            cut_judges.append(judge is not None and ident in options.judge_truncated_ids)
            work.append(
                key.at, position, judge_mode, judge, status if with_status else None, problem
            )
        # Every distinct response id no sample has (the last line of an id is the one matched),
        # those of errored lines too.
        coverage.unknown_response_ids = store.unmatched(matched) + len(
            unknown(sorted(errored), samples.known)
        )
        del matched, last_response, last_judge
        if progress is not None:
            progress(0, total=len(work))

        builder = SummaryBuilder()
        table = ScoreColumns()
        judges_account = JudgeAccount()
        errors: list[str] = []
        report_every = 256
        build = work.build()
        records = score_in_workers(
            partial(_record, finish, build),
            work,
            partial(_failed_record, finish, build),
            worker_count(options.jobs, len(work)),
            Limits(budget=options.sample_timeout),
            raw_size,
        )
        # The parent adds each record up from the sample's key and codes: it parses no sample.
        # Closed on the way out, whatever ends the loop: the workers stop then, not when the
        # collector gets to the generator (never, while a caller keeps the traceback).
        done = reported = 0
        with contextlib.closing(records):
            for done, (_, record) in enumerate(records, 1):
                if progress is not None and done % report_every == 0:
                    progress(done - reported)
                    reported = done
                index = work.indices[done - 1]
                key = samples.key(index)
                score, _, verdict, error, corrections, details, reasons, _ = record
                if verdict is not None:
                    said = judge_status(work.judge_problem(done - 1), verdict)
                    coverage.judge_errored_responses += said == JUDGE_ERRORED
                    coverage.judge_refused_responses += said == JUDGE_REFUSED
                    judges_account.add(key.id, verdict, said)
                coverage.judge_truncated_responses += cut_judges[done - 1] and verdict != "stale"
                if error is not None:
                    if strict:
                        raise ScorerFailed(_error_text(key, error))
                    errors.append(key.id)
                judge_mode = key.eval_mode == "judge"
                builder.add(key, judge_mode, score, verdict, error, details, corrections)
                frontier, weight = samples.item_metrics(index)
                table.add(
                    score,
                    key.capability,
                    key.dataset,
                    key.eval_mode,
                    reasons,
                    frontier,
                    weight,
                )
                sink(record)
        if done != len(work):
            raise AssertionError(f"{len(work)} samples to score, {done} scored")
        if progress is not None:
            progress(len(work) - reported)
        judge_expected = work.judge_count()
        del work, cut_judges
        if release_inputs:  # every sample is scored: the aggregation can use the memory
            samples.release()

        if strict_judge and judges_account.failed:
            raise StrictJudgeError(
                f"{len(judges_account.problem_ids())} judge-mode sample(s) have no usable "
                f"judge verdict: {judges_account.problems(NO_VERDICT)}"
            )
        summary = builder.summary(coverage, strict=strict, profile=profile)
        summary.update(table_additions(table))
        _warn_about(
            coverage, errors, judge_expected, judge_matched, builder.metric_errors, 3 + depth
        )
        judged_direct = coverage.direct_judge_response_ids
        if judged_direct:
            warnings.warn(
                direct_judged_note(judged_direct),
                DatbenchWarning,
                stacklevel=3 + depth,
            )
        if coverage.judge_refused_responses:
            warnings.warn(
                refused_judged_note(coverage.judge_refused_responses),
                DatbenchWarning,
                3 + depth,
            )
        if coverage.unanswered_judge_response_ids:
            warnings.warn(
                unanswered_judged_note(coverage.unanswered_judge_response_ids),
                DatbenchWarning,
                3 + depth,
            )
        if builder.judge_stale:
            warnings.warn(
                f"{builder.judge_stale} judge verdict(s) judged another response text than the "
                "current one (stale) and score 0: judge the current responses again",
                DatbenchWarning,
                stacklevel=3 + depth,
            )
        return summary, table


def _sample(number: int, row: Any, capability: str) -> DatBenchSample:
    """The sample of a caller's row ``number``; a row that is not a mapping, or lacks a
    required column, is named (not a ``KeyError: 'id'`` from inside)."""
    if not isinstance(row, Mapping):
        raise TypeError(
            f"hf_dataset[{number}] must be a row (a mapping of column to value), "
            f"got {type(row).__name__}"
        )
    missing = [column for column in REQUIRED_COLUMNS if column not in row]
    if missing:
        raise ValueError(
            f"hf_dataset[{number}] has no {', '.join(map(repr, missing))} column "
            f"(required: {', '.join(REQUIRED_COLUMNS)})"
        )
    return DatBenchSample.from_hf_row(row, capability)


def _check_unique(samples: list[DatBenchSample]) -> None:
    """A ``ValueError`` naming the rows of a repeated sample id: responses are matched by id,
    so both rows would be scored with the last response given for it (as ``export-tasks``
    refuses such a dataset)."""
    first: dict[Any, int] = {}
    for number, sample in enumerate(samples):
        try:
            seen = first.setdefault(sample.id, number)
        except TypeError:  # a list or a dict: no id a response can name
            raise TypeError(
                f"hf_dataset[{number}]: sample id must be a string, got {type(sample.id).__name__}"
            ) from None
        if seen != number:
            raise ValueError(
                f"hf_dataset[{number}]: duplicate sample id {sample.id!r} "
                f"(first in hf_dataset[{seen}]); every sample needs an id of its own"
            )


def evaluator_over(
    samples: Iterable[DatBenchSample] = (), source: ReferenceFile | None = None
) -> DatBenchEvaluator:
    """An evaluator of the run-directory stages: over ready-made ``samples`` (which may span
    several capabilities), or scoring the samples of ``source`` (a
    :class:`~datbench_cli.benchmarks.datbench.references.ReferenceFile`) without holding them."""
    evaluator = DatBenchEvaluator.__new__(DatBenchEvaluator)
    evaluator.capability, evaluator.hf_dataset = "", None
    evaluator._hold(list(samples), source)
    return evaluator


def compute_report(
    evaluator: DatBenchEvaluator,
    vlm_responses: Iterable[VLMResponse],
    judge_responses: Iterable[JudgeResponse] | None = None,
    strict_judge: bool = False,
    options: ScoreOptions = ScoreOptions(),
) -> DatBenchReport:
    """:meth:`DatBenchEvaluator.compute_metrics` with the :class:`ScoreOptions` of a run
    besides the seed's arguments: the samples that have a response scored, the report
    aggregated, each result held (``strict_judge`` raises ``ValueError`` naming the ids whose
    judge verdict is missing, unparsed, stale, errored or refused, each kind apart)."""
    return evaluator._in_memory(vlm_responses, judge_responses, strict_judge, options)


def _error_text(sample: DatBenchSample | SampleKey, error: dict[str, str]) -> str:
    return (
        f"scorer for {sample.dataset!r} failed on sample {sample.id}: "
        f"{error.get('type')}: {error.get('message')}"
    )


def _warn_about(
    coverage: Coverage,
    errors: list[str],
    judge_expected: int,
    judge_matched: int,
    metric_errors: list[str],
    stacklevel: int,
) -> None:
    if judge_expected and not judge_matched:
        warnings.warn(
            f"no judge response matched any of the {judge_expected} judge-mode samples; "
            "they all score 0 (run your judge on the judge tasks and pass its responses)",
            DatbenchWarning,
            stacklevel=stacklevel + 1,
        )
    notes: list[tuple[int, str, type[DatbenchWarning]]] = [
        (
            coverage.missing_responses,
            "sample(s) have no VLM response and were not scored",
            CoverageWarning,
        ),
        (
            coverage.duplicate_response_ids,
            "response id(s) occur more than once (last wins)",
            DatbenchWarning,
        ),
        (
            coverage.unknown_response_ids,
            "response id(s) match no sample and were ignored",
            DatbenchWarning,
        ),
        (
            coverage.errored_responses,
            "response line(s) reported an error and were not scored",
            CoverageWarning,
        ),
        (
            coverage.unknown_judge_response_ids,
            "judge response id(s) match no sample",
            DatbenchWarning,
        ),
        (
            coverage.duplicate_judge_response_ids,
            DUPLICATE_JUDGE_IDS,
            DatbenchWarning,
        ),
    ]
    for count, text, category in notes:
        if count:
            warnings.warn(f"{count} {text}", category, stacklevel=stacklevel + 1)
    for dataset in metric_errors:
        warnings.warn(
            f"the {dataset!r} scorer failed to aggregate its metrics; see dataset_metrics",
            DatbenchWarning,
            stacklevel=stacklevel + 1,
        )
    if errors:
        warnings.warn(
            f"the scorer failed on {len(errors)} sample(s), scored 0: {name_ids(errors)}",
            DatbenchWarning,
            stacklevel=stacklevel + 1,
        )
