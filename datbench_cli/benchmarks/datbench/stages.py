"""The DatBench stages after export (see :mod:`datbench_cli.benchmarks.datbench.export`): request files, judge tasks
and scoring.

The command line is a thin layer over these functions; they raise :class:`InputError` for bad
input and never leave a half-written file behind (every file is written to a temporary name and
renamed into place; the manifest, written last, marks a finished export).
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from datbench_cli.batch import run_requests
from datbench_cli.batch.digests import DIGEST_FIELD, is_stale, response_digest
from datbench_cli.batch.judge_store import JudgeStore, held_judges, load_judge_store
from datbench_cli.batch.line_keys import torn_tail_message
from datbench_cli.batch.requests import InferenceUnit, RequestSettings
from datbench_cli.batch.response_store import held_responses, load_response_store
from datbench_cli.batch.responses import (
    LoadedResponses,
    load_judge_responses,
    load_vlm_responses,
)
from datbench_cli.benchmarks.base import JudgeTasksWritten
from datbench_cli.benchmarks.checks import (
    STRICT,
    STRICT_JUDGE,
    Check,
    CheckOptions,
    coverage_check,
    fail_under_check,
)
from datbench_cli.benchmarks.checks import record as record_checks
from datbench_cli.benchmarks.common import (
    asked_digests,
    changed_note,
    done_judge_ids,
    record_asked,
)
from datbench_cli.benchmarks.datbench.evaluator import ScoreOptions, evaluator_over
from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict
from datbench_cli.benchmarks.datbench.judge_check import (
    DUPLICATE_JUDGE_IDS,
    JudgeAccount,
    account_judges,
    direct_judged_note,
    unanswered_judged_note,
)
from datbench_cli.benchmarks.datbench.judge_prompt import judge_text
from datbench_cli.benchmarks.datbench.references import (
    NO_SAMPLE,
    ReferenceFile,
    parse_reference,
)
from datbench_cli.benchmarks.datbench.schema import DatBenchReport, DatBenchSample, VLMResponse
from datbench_cli.benchmarks.datbench.summary import null_empty_accuracies
from datbench_cli.errors import CoverageWarning, DatbenchWarning, InputError
from datbench_cli.files import jsonio, run_store
from datbench_cli.files.outputs import guard_output, locked_runs
from datbench_cli.files.provenance import InputScan, report_block
from datbench_cli.files.rundir import JUDGE_TASKS, MANIFEST, REFERENCES, RunDir

Warn = Callable[[str], None]
Advance = Callable[[int], None]


def _ignore(_: Any) -> None:
    return None


# --------------------------------------------------------------------------- requests


def inference_units(task: dict[str, Any]) -> list[InferenceUnit]:
    """A DatBench tasks.jsonl line is one request: its question and its image, if any."""
    image = task.get("image")
    return [(task["id"], task["question"], [image] if image else [], [])]


def write_task_requests(
    run: RunDir, settings: RequestSettings | None, named: RunDir | None = None
) -> list[Path]:
    """``requests/tasks.openai.NNNNN.jsonl`` from a DatBench run's tasks.jsonl (``named``: see
    :func:`run_requests.write_task_requests`)."""
    return run_requests.write_task_requests(run, settings, inference_units, named)


# --------------------------------------------------------------------------- reading a run


def load_samples(run: RunDir) -> list[DatBenchSample]:
    """The samples of a DatBench run directory, from references.jsonl."""
    path = run.path(REFERENCES)
    samples = [parse_reference(record, path, number) for number, record in jsonio.iter_jsonl(path)]
    if not samples:
        raise InputError(NO_SAMPLE, path)
    return samples


@contextlib.contextmanager
def forwarded_warnings(warn: Warn) -> Iterator[None]:
    """Send the library's own warnings (:class:`DatbenchWarning`) to ``warn``, except the
    coverage gaps ``score`` states itself (:class:`CoverageWarning`: each fact said once); any
    other library's warning goes back to Python's warning machinery (the command line hides
    those unless ``DATBENCH_DEBUG`` is set)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for item in caught:
        if issubclass(item.category, CoverageWarning):
            continue
        if issubclass(item.category, DatbenchWarning):
            warn(str(item.message))
        else:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)


def _of_samples(ids: list[str], samples_of: Callable[[Sequence[str]], Collection[str]]) -> int:
    """How many of the distinct ``ids`` are samples' ids (the others are unknown ids, counted
    as such and nowhere else)."""
    return len(ids) - len(run_store.unknown(ids, samples_of))


def _cut_note(count: int, what: str, path: Path) -> str:
    return (
        f"{count} {what} in {path} stopped at the token limit "
        "(finish_reason length); they are scored as they are"
    )


def filtered_note(count: int, what: str, path: Path) -> str:
    """How ``score`` and ``make-judge-tasks`` say that ``count`` errored samples (turns:
    ``what``) are prompts the service's content filter refused."""
    return (
        f"{count} of the errored {what} in {path} are prompts the service's content filter "
        "refused (content_filter): the model never saw them, so they are unanswered, not "
        "refused answers; sending them again gets the same refusal"
    )


def _report_set_aside(
    loaded: LoadedResponses, what: str, path: Path, warn: Warn, truncated: int | None = None
) -> None:
    """Warn about what reading set aside (``truncated``: how many of the truncated ids are
    samples'; default: all of them)."""
    if loaded.unknown_keys:
        warn(loaded.unknown_keys)
    cut = len(loaded.truncated_ids) if truncated is None else truncated
    if cut:
        warn(_cut_note(cut, what, path))
    if loaded.torn_tail_line is not None:
        warn(torn_tail_message(path, loaded.torn_tail_line))


# --------------------------------------------------------------------------- judge tasks


def read_judge_responses(path: Path, task_digests: dict[str, str]) -> LoadedResponses:
    """Judge responses from a file; a line without a digest takes its judge task's."""
    loaded = load_judge_responses(path)
    for judge in loaded.judge:
        if judge.response_digest is None:
            judge.response_digest = task_digests.get(judge.id)
    return loaded


def verdict_ids(
    path: Path,
    current: dict[str, str] | None = None,
    task_digests: dict[str, str] | None = None,
    warn: Warn = _ignore,
) -> set[str]:
    """Ids that have a parsed verdict (true or false) in a judge-response file, for the text
    it judged: with ``current`` (id -> current judged text), a stale verdict does not count.
    As in scoring, the last answered line of an id is its verdict (an earlier parsed line does
    not make a later unparsed or stale one count). ``warn`` hears of the lines reading set
    aside (a torn last line, unknown keys)."""
    loaded = read_judge_responses(path, task_digests or {})
    _report_set_aside(loaded, "judge responses", path, warn)
    last = {r.id: r for r in loaded.judge}
    return {
        r.id
        for r in last.values()
        if parse_judge_verdict(r.verdict, r.raw_judge_output) is not None
        and not (current is not None and is_stale(r.response_digest, current.get(r.id, "")))
    }


def make_judge_tasks(
    run: RunDir,
    responses: Path,
    out: Path,
    *,
    skip_done: Path | None = None,
    requests: RequestSettings | None = None,
    warn: Warn = _ignore,
) -> JudgeTasksWritten:
    """Write one judge task per judge-mode sample that has a response.

    ``skip_done``: a judge-response file; ids with a parsed verdict there get no task (a missing
    file means nothing is done yet). ``requests``: also write the text-only OpenAI requests as
    ``requests/<out stem>.openai.NNNNN.jsonl`` (stale ones are removed otherwise). Holds the run
    directory's lock; ``out`` may not be one of the inputs.
    """
    guard_output(out, "make-judge-tasks", [responses, skip_done])
    run_requests.check_judge_outputs(run, out)
    with run.lock("make-judge-tasks"), locked_runs("make-judge-tasks", [out], held=[run.root]):
        return _make_judge_tasks(run, responses, out, skip_done, requests, warn)


def _make_judge_tasks(
    run: RunDir,
    responses: Path,
    out: Path,
    skip_done: Path | None,
    requests: RequestSettings | None,
    warn: Warn,
) -> JudgeTasksWritten:
    evaluator = evaluator_over(load_samples(run))
    known = evaluator.samples_by_id
    loaded = load_vlm_responses(responses)
    cut = _of_samples(loaded.truncated_ids, set(known).intersection)
    _report_set_aside(loaded, "responses", responses, warn, cut)
    if errored := _of_samples(loaded.errored_ids, set(known).intersection):
        warn(f"{errored} sample(s) whose only response lines in {responses} errored were skipped")
        if filtered := _of_samples(loaded.filtered_ids, set(known).intersection):
            warn(filtered_note(filtered, "samples", responses))
    unknown = {r.id for r in loaded.vlm if r.id not in known}
    if not any(r.id in known for r in loaded.vlm) and not any(
        i in known for i in loaded.errored_ids
    ):
        raise InputError(
            "holds no response for any sample of this run (responses of another run?); "
            "judge tasks not written",
            responses,
        )
    if unknown:
        warn(f"{len(unknown)} response id(s) in {responses} match no sample and were ignored")
    lines_of = Counter(r.id for r in loaded.vlm if r.id in known)
    if duplicates := sum(1 for count in lines_of.values() if count > 1):  # as score warns it
        warn(f"{duplicates} response id(s) in {responses} occur more than once (last wins)")
    judge_tasks = evaluator.create_judge_tasks(loaded.vlm)
    answered = {r.id for r in loaded.vlm}
    unanswered = sum(
        1 for s in evaluator.samples if s.eval_mode == "judge" and s.id not in answered
    )
    if unanswered:
        warn(
            f"{unanswered} judge-mode sample(s) have no usable response (no line, or only "
            "errored ones) and get no judge task"
        )
    current = {task.id: task.vlm_response for task in judge_tasks}

    def judged(path: Path) -> set[str]:
        # What a native verdict without digest judged: the text its judge tasks asked about.
        return verdict_ids(path, current, asked_digests(run), warn)

    done = done_judge_ids(skip_done, judged, warn)
    lines = [
        {
            "id": task.id,
            "vlm_response": task.vlm_response,
            "ground_truth": task.ground_truth,
            "judge_prompt": task.judge_prompt,
            "question": known[task.id].question,
            "all_answers": known[task.id].all_answers,
            DIGEST_FIELD: response_digest(task.vlm_response),
        }
        for task in judge_tasks
        if task.id not in done
    ]
    if note := changed_note(record_asked(run, out, lines)):
        warn(note)
    written = JudgeTasksWritten(jsonio.write_jsonl_atomic(out, lines))
    written.skipped_done = len(judge_tasks) - len(lines)
    written.request_files = run_requests.write_judge_requests(run, out, lines, requests, judge_text)
    return written


# --------------------------------------------------------------------------- scoring


def _score(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    *,
    sample_timeout: float | None,
    jobs: int,
    warn: Warn,
    progress: Callable[..., None] | None,
    profile: str,
    options: dict[str, Any] | None,
    account: bool = False,
) -> tuple[DatBenchReport, JudgeAccount | None]:
    """The report of ``score`` and, when ``account`` (``--strict-judge``), the judge account."""
    manifest = run.read_manifest()
    with contextlib.ExitStack() as open_files:
        # The references, responses and judge responses are read once, each into a table of
        # one run store (a private temporary sqlite3 database): a pipe is scored like a file.
        db = open_files.enter_context(contextlib.closing(run_store.connect()))
        # Each is scanned for the report's provenance as it is read, never read again.
        scans = {
            "references": InputScan(run.path(REFERENCES), lines=False),
            "responses": InputScan(responses, lines=True),
        }
        references = open_files.enter_context(
            ReferenceFile(run.path(REFERENCES), db, scans["references"].update)
        )
        evaluator = evaluator_over(source=references)
        store, loaded = load_response_store(responses, db, scans["responses"].update)
        open_files.enter_context(store)
        # Lines of ids no sample has are counted as unknown ids only: an errored or cut
        # line of another run is no errored or truncated sample of this one.
        truncated = _of_samples(loaded.truncated_ids, references.known)
        _report_set_aside(loaded, "responses", responses, warn, truncated)
        if filtered := _of_samples(loaded.filtered_ids, references.known):
            warn(filtered_note(filtered, "samples", responses))
        judges = LoadedResponses()
        judge_store: JudgeStore | None = None
        if judge_responses is not None:
            task_digests = asked_digests(run)
            scans["judge_responses"] = InputScan(judge_responses, lines=True)
            judge_store, judges = load_judge_store(
                judge_responses, task_digests, db, scans["judge_responses"].update
            )
            open_files.enter_context(judge_store)
            del task_digests
            # The cut judge replies are said once scored: only judge tasks' verdicts count.
            _report_set_aside(judges, "judge responses", judge_responses, warn, 0)

        provenance = report_block(
            manifest=manifest,
            manifest_path=run.path(MANIFEST),
            inputs={
                "references": (run.path(REFERENCES), False),
                "responses": (responses, True),
                "judge_responses": (judge_responses, True),
            },
            options=options or {},
            ids=references,
            scanned={label: scan.result() for label, scan in scans.items()},
            warn=warn,
            response_ids={
                "responses": store.absent_from(references.lines),
                "judge_responses": (
                    judge_store.absent_from(references.lines) if judge_store is not None else 0
                ),
            },
        )
        score_options = ScoreOptions(
            sample_timeout=sample_timeout,
            jobs=jobs,
            progress=progress,
            profile=profile,
            errored_responses=_of_samples(loaded.errored_ids, references.known),
            truncated_responses=truncated,
            judge_truncated_ids=frozenset(judges.truncated_ids),
            response_statuses=loaded.statuses,
            errored_ids=frozenset(loaded.errored_ids),
            judge_errored_ids=tuple(judges.errored_ids),
            judge_refusal_ids=frozenset(judges.refusal_ids),
        )
        judge_account = None
        if account:
            judge_account = account_judges(
                references.keys(),
                store,
                open_files.enter_context(held_judges(())) if judge_store is None else judge_store,
                judges.errored_ids,
                references.known,
                judges.refusal_ids,
            )
        with forwarded_warnings(warn):
            # Every result carries its status and censoring counts them as it is scored.
            # The inputs are done with once scored: their memory goes to the aggregation.
            report = evaluator._stream_metrics(
                store,
                judges.judge if judge_store is None else judge_store,
                score_options,
            )
    report.provenance = provenance
    if judge_responses is not None and (cut := report.summary["judge_truncated_responses"]):
        warn(_cut_note(cut, "judge responses", judge_responses))
    return report, judge_account


def _coverage_where(coverage: dict[str, Any]) -> str:
    gaps = [
        f"{name} {c['answered']}/{c['expected']}"
        for name, c in coverage["by_capability"].items()
        if c["answered"] < c["expected"]
    ]
    return "answered per capability: " + (", ".join(gaps) or "none exported")


def run_checks(
    report: DatBenchReport, judges: JudgeAccount | None, options: CheckOptions
) -> list[Check]:
    """The checks of ``score`` over a finished report (see :mod:`datbench_cli.benchmarks.checks`;
    ``judges``: the judge account, which ``--strict-judge`` needs)."""
    summary = report.summary
    coverage = summary["coverage"]
    checks = [
        coverage_check(
            summary["unanswered_samples"],
            coverage["expected"],
            _coverage_where(coverage),
            options.allow_missing,
        )
    ]
    if options.strict_judge:
        assert judges is not None, "--strict-judge needs the judge account"
        checks.append(
            Check(STRICT_JUDGE, not judges.failed, judges.problems() or judges.describe())
        )
    if options.strict:
        broken = [n for n, m in summary["dataset_metrics"].items() if "metrics_error" in m]
        errors = summary["scorer_errors"]
        detail = f"{errors} sample(s) hit a scorer error"
        if broken:
            detail += f"; metrics failed to aggregate for {', '.join(broken)}"
        checks.append(Check(STRICT, not errors and not broken, detail))
    if options.fail_under is not None:
        checks.append(
            fail_under_check(
                "overall_accuracy",
                summary["overall_accuracy"],
                options.fail_under,
                checks[0].passed,
            )
        )
    return checks


def score_checked(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    options: CheckOptions,
    *,
    sample_timeout: float | None = None,
    jobs: int = 1,
    warn: Warn = _ignore,
    progress: Callable[..., None] | None = None,
    profile: str = "reference",
    recorded: dict[str, Any] | None = None,
) -> DatBenchReport:
    """``score``: the full report, with the outcome of every check in ``summary.checks`` and
    its ``provenance`` block (``recorded``: the command's options, recorded there).

    Nothing raises for a failed check: the caller writes the report and then fails (see
    :func:`~datbench_cli.benchmarks.checks.raise_failed`).
    """
    report, judges = _score(
        run,
        responses,
        judge_responses,
        sample_timeout=sample_timeout,
        jobs=jobs,
        warn=warn,
        progress=progress,
        profile=profile,
        options=recorded,
        account=options.strict_judge,
    )
    null_empty_accuracies(report.summary)
    record_checks(report.summary, run_checks(report, judges, options))
    return report


def check_judge(run: RunDir, judge_responses: Path, responses: Path, warn: Warn) -> JudgeAccount:
    """``check-judge`` in a DatBench run directory: the judge half of ``score``. Without a
    response file, the judge tasks written (``judge_tasks.jsonl``) stand for the responses.
    ``warn`` hears what reading the files set aside, as under ``score``."""
    samples = load_samples(run)
    ids = {sample.id for sample in samples}
    judges = read_judge_responses(judge_responses, asked_digests(run))
    _report_set_aside(judges, "judge responses", judge_responses, warn, 0)  # said below
    if responses.exists():
        loaded = load_vlm_responses(responses)
        cut = _of_samples(loaded.truncated_ids, ids.intersection)
        _report_set_aside(loaded, "responses", responses, warn, cut)
        vlm = loaded.vlm
    else:
        tasks = run.path(JUDGE_TASKS)
        if not tasks.is_file():
            raise InputError(
                "no responses and no judge tasks here to check verdicts against", responses
            )
        vlm = [
            VLMResponse(line["id"], str(line.get("vlm_response") or ""))
            for _, line in jsonio.iter_jsonl(tasks)
            if isinstance(line.get("id"), str)
        ]
    with held_responses(vlm) as answered, held_judges(judges.judge) as judged:
        if duplicates := judged.duplicate_ids(ids.intersection):  # as score warns it
            warn(f"{duplicates} {DUPLICATE_JUDGE_IDS}")
        account = account_judges(
            samples, answered, judged, judges.errored_ids, refusal_ids=judges.refusal_ids
        )
        # As score counts them: the judge tasks' verdicts read from a cut reply (a stale
        # verdict, of another response text, is not read).
        given, cut_ids = answered.last_by_id(), set(judges.truncated_ids) - set(account.stale)
        cut = sum(
            1
            for sample in samples
            if sample.eval_mode == "judge" and sample.id in given and sample.id in cut_ids
        )
    if cut:
        warn(_cut_note(cut, "judge responses", judge_responses))
    if account.direct:  # as score warns them
        warn(direct_judged_note(len(account.direct)))
    if account.unanswered:
        warn(unanswered_judged_note(len(account.unanswered)))
    return account
