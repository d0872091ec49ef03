"""The judge half of scoring: which judge-mode samples have a verdict that counts.

``score --strict-judge`` and ``check-judge`` both use :func:`account_judges`, so they count the
same things and fail on the same things: a judge-mode sample with a response whose verdict is
missing, unparsed, stale (it judged another response text), errored (only failed judge calls)
or refused (the judge's content filter or the judge refused it, see
:func:`~datbench_cli.batch.responses.is_refusal`), and judge responses that match no judge
task: of no sample (``unknown``), of a direct-mode sample (``direct``) or of a judge-mode
sample without a usable response (``unanswered``), as VisualToolBench's check fails on judge
lines that match no judge task.
Outside a run directory, :func:`check_judge_file` can only parse the verdicts (and see
errored and refused lines).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from datbench_cli.batch.judge_store import JudgeStore, unknown_ids
from datbench_cli.batch.line_keys import JUDGE_KEYS, UnknownKeys, torn_tail_warner
from datbench_cli.batch.response_store import ResponseStore
from datbench_cli.batch.responses import is_refusal, iter_response_lines
from datbench_cli.benchmarks.common import no_judge_lines
from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict
from datbench_cli.benchmarks.datbench.references import SampleKey
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.scoring import (
    JUDGE_ERRORED,
    JUDGE_REFUSED,
    judge_status,
    score_judge,
)
from datbench_cli.errors import name_ids
from datbench_cli.files.run_store import MANY

PROBLEMS = (
    "missing",
    "unparsed",
    "stale",
    "errored",
    "refused",
    "unknown",
    "direct",
    "unanswered",
)
#: The problems of a judge-mode sample scored without a verdict (the others are judge lines
#: that match no judge task).
NO_VERDICT = PROBLEMS[:5]
#: How a problem's count is said where its name alone would be unclear.
LABELS = {
    "direct": "for direct-mode samples",
    "unanswered": "for unanswered samples",
    "refused": "refused by the judge",
}


@dataclass
class JudgeAccount:
    """Verdict counts and the ids behind every problem (in sample order)."""

    true: int = 0
    false: int = 0
    missing: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    errored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    direct: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    in_run: bool = True

    @property
    def expected(self) -> int:
        """Judge verdicts expected (or, outside a run, judge lines read)."""
        return self.true + self.false + sum(len(getattr(self, name)) for name in NO_VERDICT)

    def problem_ids(self) -> list[str]:
        """Every id with a problem, in the order of :data:`PROBLEMS`."""
        return [i for name in PROBLEMS for i in getattr(self, name)]

    @property
    def failed(self) -> bool:
        return bool(self.problem_ids())

    def describe(self) -> str:
        """One line of counts, e.g. ``12 judge verdicts expected: 7 true, 3 false, ...``."""
        what = "judge verdicts expected" if self.in_run else "verdicts"
        parts = [f"{self.true} true", f"{self.false} false"]
        names = PROBLEMS if self.in_run else ("unparsed", "errored", "refused")
        parts += [f"{len(getattr(self, name))} {LABELS.get(name, name)}" for name in names]
        return f"{self.expected} {what}: {', '.join(parts)}"

    def problems(self, names: tuple[str, ...] = PROBLEMS) -> str:
        """The counts of the problems ``names`` with the ids named (empty when there is
        none)."""
        return "; ".join(
            f"{LABELS.get(name, name)}: {name_ids(ids)}"
            for name in names
            if (ids := getattr(self, name))
        )

    def add(self, ident: str, verdict: str, problem: str | None = None) -> None:
        """Count one judge-mode sample's ``verdict`` (``correct``, ``incorrect`` or a problem;
        ``problem``: its judge's, see :func:`~datbench_cli.benchmarks.datbench.scoring.
        judge_status`, which replaces a missing or unparsed verdict)."""
        if verdict == "correct":
            self.true += 1
        elif verdict == "incorrect":
            self.false += 1
        else:
            getattr(self, judge_status(problem, verdict) or verdict).append(ident)


def account_judges(
    samples: Iterable[DatBenchSample | SampleKey],
    responses: ResponseStore,
    judges: JudgeStore,
    errored_ids: Sequence[str] = (),
    samples_of: Callable[[Sequence[str]], Collection[str]] | None = None,
    refusal_ids: Collection[str] = (),
) -> JudgeAccount:
    """Account for the verdict of every judge-mode sample that has a response (the last line
    of an id wins, as in scoring), for judge ids (answered or ``errored_ids``) of direct-mode
    samples and of judge-mode samples without a usable response, and for judge ids (answered,
    then ``errored_ids``) that match no sample (``samples_of``: those of a block of ids that
    are samples'; without it, the ids of ``samples`` are collected to tell); ``refusal_ids``
    are the judge ids whose line used is a refusal (see
    :attr:`~datbench_cli.batch.responses.LoadedResponses.refusal_ids`). ``samples`` is
    gone through once, never held; the responses and judge responses are read a block at a
    time."""
    errored, refused = set(errored_ids), frozenset(refusal_ids)
    account = JudgeAccount()
    seen: set[str] = set()
    last_response: dict[str, int] | None = None
    last_judge: dict[str, int] | None = None
    pending: list[tuple[str, int, int | None, str | None]] = []
    for sample in samples:
        ident = sample.id
        if samples_of is None:
            seen.add(ident)
        if last_judge is None:  # a run without samples asks nothing
            last_judge = judges.last_by_id()
        judged = ident in last_judge or ident in errored
        if sample.eval_mode != "judge":
            if judged:  # no judge scores it: the line matches no judge task
                account.direct.append(ident)
            continue
        if last_response is None:  # a run without judge-mode samples reads no response
            last_response = responses.last_by_id()
        position = last_response.get(ident)
        if position is None:
            if judged:  # unanswered, so not scored: no judge task asked about it
                account.unanswered.append(ident)
            continue
        judge = last_judge.get(ident)
        # (Added in sample order with the others: its verdict is missing.)
        problem = judge_problem(judge is None and ident in errored, ident in refused)
        pending.append((ident, position, judge, problem))
        if len(pending) == MANY:
            _tally(account, pending, responses, judges)
            pending.clear()
    _tally(account, pending, responses, judges)
    account.unknown = unknown_ids(judges, errored_ids, samples_of or seen.intersection)
    return account


def judge_problem(errored: bool, refused: bool) -> str | None:
    """A judge-mode sample's judge problem (see
    :func:`~datbench_cli.benchmarks.datbench.scoring.judge_status`): ``refused`` when its judge
    line used is a refusal, else ``errored`` when every judge line of it errored."""
    if refused:
        return JUDGE_REFUSED
    return JUDGE_ERRORED if errored else None


def _tally(
    account: JudgeAccount,
    pending: list[tuple[str, int, int | None, str | None]],
    responses: ResponseStore,
    judges: JudgeStore,
) -> None:
    """Add the verdicts of ``pending`` (id, response position, judge position or ``None``,
    judge problem; at most ``MANY``), their lines read in one query per input."""
    response, judge = responses.parser(), judges.parser()
    texts = responses.raws([item[1] for item in pending])
    judged = iter(judges.raws([item[2] for item in pending if item[2] is not None]))
    for (ident, _, position, problem), text in zip(pending, texts, strict=True):
        verdict = score_judge(
            response(text).model_output, None if position is None else judge(next(judged))
        ).verdict
        account.add(ident, str(verdict), problem)


#: How ``score`` and ``check-judge`` say that ids had several judge lines.
DUPLICATE_JUDGE_IDS = "judge response id(s) occur more than once (last wins)"


def unanswered_judged_note(count: int) -> str:
    """How ``score`` and ``check-judge`` say that judge lines name judge-mode samples with no
    usable response (no line, or only errored ones): such a sample is unanswered and not
    scored, so its verdict (often one from before the responses were run again) is unused."""
    return (
        f"{count} judge response id(s) are of judge-mode samples without a usable response, "
        "which are not scored: their verdicts are ignored"
    )


def refused_judged_note(count: int) -> str:
    """How ``score`` says that the judge refused ``count`` judge-mode samples (its service's
    content filter, or the judge model): they have no verdict and score 0."""
    return (
        f"the judge refused {count} judge-mode sample(s) (a content filter or a refusal): "
        "they have no verdict and score 0; judge them with another judge, or check them by hand"
    )


def direct_judged_note(count: int) -> str:
    """How ``score`` and ``check-judge`` say that judge lines name direct-mode samples, which
    their dataset's scorer scores: no judge task asked about them."""
    return (
        f"{count} judge response id(s) are of direct-mode samples, which are scored without a "
        "judge: ignored"
    )


def check_judge_file(path: Path, warn: Callable[[str], None]) -> JudgeAccount:
    """Outside a run directory: parse each judged id's verdict (errored lines are counted as
    errored, not unparsed; refusals as refused). Several lines for one id: the last wins,
    except that an errored line never replaces an answer. A last line cut off mid-write is
    ignored, and ``warn`` told so, as of keys no reader uses."""
    torn = torn_tail_warner(path, warn)
    unknown = UnknownKeys(JUDGE_KEYS)
    # Each id's verdict ("missing": only errored lines so far) and its judge problem.
    verdicts: dict[str, tuple[str, str | None]] = {}
    answered: dict[str, int] = {}  # the answered lines of each id
    lines = iter_response_lines(
        path, "raw_judge_output", "verdict", on_torn_tail=torn, unknown=unknown
    )
    for line in lines:
        if line.error is not None:
            if line.id not in answered:
                refused = line.filtered or verdicts.get(line.id, ("", None))[1] == JUDGE_REFUSED
                verdicts[line.id] = ("missing", judge_problem(True, refused))
            continue
        answered[line.id] = answered.get(line.id, 0) + 1
        parsed = parse_judge_verdict(line.parsed, line.text)
        verdict = {True: "correct", False: "incorrect", None: "unparsed"}[parsed]
        verdicts[line.id] = (verdict, judge_problem(False, is_refusal(line.status, False)))
    if not verdicts:
        raise no_judge_lines(path)
    if (message := unknown.message(path)) is not None:
        warn(message)
    if duplicates := sum(count > 1 for count in answered.values()):
        warn(f"{duplicates} {DUPLICATE_JUDGE_IDS}")
    account = JudgeAccount(in_run=False)
    for ident, (verdict, problem) in verdicts.items():
        account.add(ident, verdict, problem)
    return account
