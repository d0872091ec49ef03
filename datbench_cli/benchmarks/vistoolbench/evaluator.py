"""The Python API: ``VisToolBenchEvaluator`` (tasks -> judge tasks -> ARS/APR report)."""

from __future__ import annotations

import functools
import io
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from datbench_cli.batch.digests import is_stale
from datbench_cli.benchmarks.vistoolbench.answers import Answers, collect_answers
from datbench_cli.benchmarks.vistoolbench.ars_apr import (
    ERRORED,
    MISSING,
    MISSING_ANSWER,
    REFUSED,
    STALE,
    UNJUDGED,
    UNPARSED,
    RubricOutcome,
    judge_counts,
    summarize,
    task_result,
)
from datbench_cli.benchmarks.vistoolbench.judging import (
    JudgeMatch,
    RubricKey,
    build_judge_tasks,
    cut_replies_note,
    match_judge_lines,
    replaced_note,
)
from datbench_cli.benchmarks.vistoolbench.model import (
    CONTEXT_POLICIES,
    TURNCASES,
    Task,
    judge_id,
)
from datbench_cli.benchmarks.vistoolbench.records import task_line
from datbench_cli.benchmarks.vistoolbench.report import VisToolBenchReport
from datbench_cli.benchmarks.vistoolbench.rows import iter_dataset_rows, iter_tasks
from datbench_cli.benchmarks.vistoolbench.tally import Warn
from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict, read_judgement
from datbench_cli.errors import (
    BadArgument,
    DatbenchWarning,
    InputError,
    StrictJudgeError,
    name_ids,
)
from datbench_cli.files.loading import check_flag, check_rows, not_a_collection

_T = TypeVar("_T")


def _pil_image(data: bytes) -> Any:
    """The image as PIL opens it (decoded lazily, on first use of its pixels)."""
    from PIL import Image

    return Image.open(io.BytesIO(data))


class _Calls(threading.local):
    """One thread's public calls on an evaluator: whether one is running, and the warnings
    held till the outermost one ends (per thread: a call on another thread neither holds nor
    gives out this thread's warnings)."""

    def __init__(self) -> None:
        self.running = False
        self.held: list[str] = []


def _warns_at_caller(method: Callable[..., _T]) -> Callable[..., _T]:
    """A public method whose warnings, held while it runs (without a ``warn`` of the caller's,
    row reading, answer matching and scoring hold theirs), are given to Python as
    :class:`DatbenchWarning` at its caller's line once the outermost public call of its
    thread ends, as DatBench's are."""

    @functools.wraps(method)
    def run(self: VisToolBenchEvaluator, *args: Any, **kwargs: Any) -> _T:
        calls = self._calls()
        outer = not calls.running
        calls.running = True
        try:
            return method(self, *args, **kwargs)
        finally:
            if outer:
                calls.running = False
                held, calls.held = calls.held, []
                for message in held:
                    warnings.warn(message, DatbenchWarning, stacklevel=2)

    return run


def check_turncase(turncase: str | None) -> None:
    """Refuse a ``turncase`` filter other than single-turn / multi-turn."""
    if turncase is not None and turncase not in TURNCASES:
        raise BadArgument(f"turncase must be one of {', '.join(TURNCASES)}, not {turncase!r}")


def check_limit(limit: int | None) -> None:
    """Refuse a ``limit`` that is not a positive integer (it would keep no task)."""
    if limit is not None and (type(limit) is not int or limit < 1):
        raise BadArgument(f"limit must be a positive integer (None: every task), not {limit!r}")


def context_policy_for(context: str) -> str:
    """``golden`` -> ``golden_history``, ``model`` -> ``model_history``."""
    if not isinstance(context, str) or context not in CONTEXT_POLICIES:
        raise BadArgument(f"context must be one of {', '.join(CONTEXT_POLICIES)}, not {context!r}")
    return CONTEXT_POLICIES[context]


class VisToolBenchEvaluator:
    """Tasks of VisualToolBench, their judge tasks, and the ARS/APR report.

    ``hf_dataset`` is a ``datasets.Dataset`` of ``ScaleAI/VisualToolBench`` (or any iterable of
    row dicts with its columns). Warnings go to ``warn`` (default: Python ``UserWarning``s,
    at the caller's line).
    """

    def _calls(self) -> _Calls:
        """This thread's public calls on the evaluator (made on first use)."""
        calls = self.__dict__.get("_calls_state")
        if calls is None:
            calls = self.__dict__.setdefault("_calls_state", _Calls())
        return calls

    def _hold(self, message: str) -> None:
        """The default ``warn``: hold ``message`` till this thread's public call ends."""
        self._calls().held.append(message)

    @_warns_at_caller
    def __init__(
        self,
        hf_dataset: Any,
        *,
        context: str = "golden",
        first_image_only: bool = False,
        turncase: str | None = None,
        limit: int | None = None,
        warn: Warn | None = None,
    ) -> None:
        check_turncase(turncase)
        check_limit(limit)
        check_flag(first_image_only, "first_image_only")
        if warn is not None and not callable(warn):
            raise TypeError(
                f"warn must be a function taking a message, or None, got {type(warn).__name__}"
            )
        check_rows(hf_dataset, "VisualToolBench's rows")
        self.context_policy = context_policy_for(context)
        self.warn: Warn = warn or self._hold
        try:
            self.tasks: list[Task] = list(
                iter_tasks(
                    iter_dataset_rows(hf_dataset),
                    turncase=turncase,
                    limit=limit,
                    first_image_only=first_image_only,
                    warn=self.warn,
                )
            )
        except InputError as error:
            # A dataset defect is a bad value to a library caller, as DatBench's rows are.
            raise ValueError(f"hf_dataset: {error.bare_message}") from None

    @classmethod
    def from_tasks(
        cls, tasks: list[Task], *, context_policy: str = "golden_history", warn: Warn | None = None
    ) -> VisToolBenchEvaluator:
        """An evaluator over already-built tasks (e.g. read from ``references.jsonl``)."""
        evaluator = cls.__new__(cls)
        evaluator.context_policy = context_policy
        evaluator.warn = warn or evaluator._hold
        evaluator.tasks = list(tasks)
        return evaluator

    # ------------------------------------------------------------------ stages

    def get_inference_tasks(self) -> list[dict[str, Any]]:
        """One task dict per task (as ``tasks.jsonl``), each turn's images as PIL images (as
        DatBench tasks give them; the files a run directory holds keep the original bytes)."""
        return [
            task_line(
                task,
                [[_pil_image(b.data) for b in t.images] for t in task.turns],
                self.context_policy,
            )
            for task in self.tasks
        ]

    @_warns_at_caller
    def collect_answers(self, responses: Iterable[Any]) -> Answers:
        """The judged answer of each turn from response lines / ``VLMResponse``s / dicts."""
        _check_records(responses, "responses", "VLMResponse")
        return collect_answers(self.tasks, responses, self.warn)

    @_warns_at_caller
    def create_judge_tasks(self, responses: Iterable[Any] | Answers) -> list[dict[str, Any]]:
        """One judge task dict per rubric of every answered turn (``judge_tasks.jsonl`` lines)."""
        answers = responses if isinstance(responses, Answers) else self.collect_answers(responses)
        self._warn_unanswered(answers, self.tasks)
        self._warn_unjudged_turns(answers)
        return [judge_task.line() for judge_task in build_judge_tasks(self.tasks, answers)]

    def judged_ids(self, answers: Answers, judge_responses: Iterable[Any]) -> set[str]:
        """Ids of the judge tasks whose judge response (matched and chosen as
        :meth:`compute_metrics` does) has a verdict ``parse_vtb_verdict`` reads, met or not
        met: what ``make-judge-tasks --skip-done`` leaves out."""
        judge_tasks = build_judge_tasks(self.tasks, answers)
        match = match_judge_lines(judge_tasks, judge_responses)
        done = set()
        for judge_task in judge_tasks:
            line = match.by_key.get(judge_task.key)
            if (
                line is not None
                and not line.errored
                and not is_stale(line.digest, judge_task.answer)
                and parse_vtb_verdict(line.verdict, line.raw) is not None
            ):
                done.add(judge_task.id)
        return done

    @_warns_at_caller
    def compute_metrics(
        self,
        responses: Iterable[Any] | Answers,
        judge_responses: Iterable[Any] | None,
        strict_judge: bool = False,
        *,
        turncase: str | None = None,
    ) -> VisToolBenchReport:
        """The report (spec §4.4). ``strict_judge``: raise :class:`StrictJudgeError` instead of
        scoring unparsed, missing, stale, errored, refused or unanswered rubrics as not
        satisfied.

        A judge line whose digest is not the digest of the turn's current answer is *stale*
        (it judged another text); an errored judge line (a failed judge call) is *errored*; a
        judge's refusal without a verdict (its content filter, or the judge model declining) is
        *refused*.
        Each turn of a result carries the ``response_status`` of its answer."""
        check_turncase(turncase)
        check_flag(strict_judge, "strict_judge")
        if judge_responses is not None:
            _check_records(judge_responses, "judge_responses", "JudgeResponse")
        answers = responses if isinstance(responses, Answers) else self.collect_answers(responses)
        match = match_judge_lines(
            build_judge_tasks(self.tasks, answers),
            judge_responses or (),
            _unanswered_rubrics(self.tasks, answers),
        )
        in_scope = [t for t in self.tasks if turncase is None or t.turncase == turncase]
        scored = [t for t in in_scope if answers.answered(t)]
        self._warn_unanswered(answers, in_scope)
        self._warn_missing_turns(answers, in_scope)
        results = [task_result(task, self._outcomes(task, answers, match)) for task in scored]
        for task, result in zip(scored, results, strict=True):
            for turn in result["turns"]:
                turn["response_status"] = answers.status((task.id, turn["index"]))
        counts = judge_counts(results)
        scored_ids = {task.id for task in scored}
        judge = {
            **{k: v for k, v in counts.items() if k != "tasks_with_unjudged_rubrics"},
            "unknown_responses": match.unknown_lines,
            "unanswered_responses": match.unanswered_lines,
            "duplicate_responses": sum(
                lost for key, lost in match.lost_lines.items() if key[0] in scored_ids
            ),
            "truncated_responses": _truncated_verdicts(match, answers, scored_ids),
            "tasks_with_unjudged_rubrics": counts["tasks_with_unjudged_rubrics"],
        }
        self._check_judge(results, judge, match, strict_judge)
        summary = summarize(
            results,
            context_policy=self.context_policy,
            judge=judge,
            responses=answers.coverage(in_scope),
        )
        return VisToolBenchReport(summary=summary, results=results)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _outcomes(task: Task, answers: Answers, match: JudgeMatch) -> list[list[RubricOutcome]]:
        outcomes = []
        for turn in task.turns:
            answered = (task.id, turn.index) in answers.by_turn
            row = []
            for rubric in turn.rubrics:
                if not answered:
                    row.append(RubricOutcome(MISSING_ANSWER))
                    continue
                line = match.by_key.get((task.id, turn.index, rubric.rubric_id))
                if line is None:
                    row.append(RubricOutcome(MISSING))
                    continue
                if line.errored:
                    row.append(RubricOutcome(REFUSED if line.refused else ERRORED))
                    continue
                if is_stale(line.digest, answers.by_turn[(task.id, turn.index)]):
                    row.append(RubricOutcome(STALE, None, line.raw))
                    continue
                judgement = read_judgement(line.verdict, line.raw)
                # A refusal whose text still holds a verdict counts as that verdict.
                unread = REFUSED if line.refused else UNPARSED
                row.append(
                    RubricOutcome(judgement.status or unread, judgement.explanation, line.raw)
                )
            outcomes.append(row)
        return outcomes

    def _warn_unanswered(self, answers: Answers, tasks: list[Task]) -> None:
        unanswered = sum(1 for task in tasks if not answers.answered(task))
        if unanswered:
            self.warn(
                f"{unanswered} of {len(tasks)} task(s) have no answered turn: "
                "they are not judged and not scored"
            )

    def _warn_unjudged_turns(self, answers: Answers) -> None:
        """The turns without an answer of tasks that have one: their rubrics get no judge task
        (they are scored ``missing_answer``), which the judge tasks alone would not show."""
        answered = [task for task in self.tasks if answers.answered(task)]
        missing = answers.missing_turns(answered)
        if missing:
            gaps = set(missing)
            rubrics = sum(
                len(turn.rubrics)
                for task in answered
                for turn in task.turns
                if turn.turn_id(task.id) in gaps
            )
            self.warn(
                f"{len(missing)} turn(s) of answered tasks have no model answer: their "
                f"{rubrics} rubric(s) get no judge task and score as missing_answer: "
                f"{name_ids(missing)}"
            )

    def _warn_missing_turns(self, answers: Answers, tasks: list[Task]) -> None:
        missing = answers.missing_turns(tasks)
        if missing:
            turns = sum(len(task.turns) for task in tasks)
            self.warn(
                f"{len(missing)} of {turns} turn(s) have no model answer (a shard not run or "
                f"not finished?): {name_ids(missing)}"
            )

    def _check_judge(
        self,
        results: list[dict[str, Any]],
        judge: dict[str, int],
        match: JudgeMatch,
        strict_judge: bool,
    ) -> None:
        offending = [
            judge_id(result["id"], turn["index"], rubric["rubric_id"])
            for result in results
            for turn in result["turns"]
            for rubric in turn["rubrics"]
            if rubric["status"] in UNJUDGED
        ]
        counts = (
            f"{judge[UNPARSED]} unparsed, {judge[MISSING]} missing, "
            f"{judge[MISSING_ANSWER]} missing_answer, {judge[STALE]} stale, "
            f"{judge[ERRORED]} errored, {judge[REFUSED]} refused by the judge"
        )
        if offending and strict_judge:
            raise StrictJudgeError(
                f"{len(offending)} rubric(s) of scored tasks have no usable "
                f"verdict ({counts}): {name_ids(offending)}"
            )
        if offending:
            self.warn(f"rubrics scored as not satisfied without a verdict: {counts}")
        if judge[REFUSED]:
            self.warn(
                f"the judge refused {judge[REFUSED]} rubric(s) (a content filter or a refusal): "
                "they have no verdict and are not satisfied; judge them with another judge, or "
                "check them by hand"
            )
        if judge["judge_tasks"] and judge["judge_tasks"] == judge[MISSING]:
            self.warn("no judge response matched any judge task (wrong judge file or ids?)")
        if match.lost_lines:
            self.warn(replaced_note(sum(match.lost_lines.values())))
        if match.unknown_lines:
            self.warn(unknown_lines_note(match.unknown_lines, match.unanswered_lines))
        if judge["truncated_responses"]:
            self.warn(cut_replies_note(judge["truncated_responses"]))


def unknown_lines_note(unknown: int, unanswered: int) -> str:
    """How ``score`` says that judge lines matched no judge task (``unanswered`` of them for
    rubrics of turns without an answer: often verdicts from before the responses ran again)."""
    why = f" ({unanswered} of them for rubrics of turns without an answer)" if unanswered else ""
    return f"{unknown} judge line(s) match no judge task and were ignored{why}"


def _unanswered_rubrics(tasks: Iterable[Task], answers: Answers) -> set[str | RubricKey]:
    """The judge ids and (task, turn, rubric) keys of the rubrics of turns without an answer."""
    keys: set[str | RubricKey] = set()
    for task in tasks:
        for turn in task.turns:
            if (task.id, turn.index) in answers.by_turn:
                continue
            for rubric in turn.rubrics:
                keys.add((task.id, turn.index, rubric.rubric_id))
                keys.add(judge_id(task.id, turn.index, rubric.rubric_id))
    return keys


def _truncated_verdicts(match: JudgeMatch, answers: Answers, scored: set[str]) -> int:
    """How many judge lines a scored task's verdict is read from (neither errored nor stale)
    stopped at the judge's token limit."""
    return sum(
        1
        for key, line in match.by_key.items()
        if line.truncated
        and key[0] in scored
        and not line.errored
        and not is_stale(line.digest, answers.by_turn[key[:2]])
    )


def _check_records(values: Any, argument: str, kind: str) -> None:
    """A ``TypeError`` naming ``argument`` when a caller's records are not an iterable of
    records (``None``, a number, a string, one dict)."""
    if not_a_collection(values):
        raise TypeError(
            f"{argument} must be an iterable of {kind} objects, dicts or lines, "
            f"got {type(values).__name__}"
        )
