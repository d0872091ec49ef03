"""The checks of ``score`` on a VisualToolBench report (see :mod:`datbench_cli.benchmarks.checks`).

The judge check is the judge half of scoring, shared by ``score --strict-judge`` and
``check-judge``: every rubric of a scored task needs a usable verdict (not unparsed, missing,
stale, errored, nor on an unanswered turn), and no judge line may match no judge task.
"""

from __future__ import annotations

from datbench_cli.benchmarks.checks import (
    STRICT_JUDGE,
    Check,
    CheckOptions,
    coverage_check,
    fail_under_check,
)
from datbench_cli.benchmarks.vistoolbench.ars_apr import MISSING_ANSWER, STATUSES, UNJUDGED
from datbench_cli.benchmarks.vistoolbench.model import judge_id
from datbench_cli.benchmarks.vistoolbench.report import VisToolBenchReport
from datbench_cli.errors import name_ids


def unusable_verdicts(report: VisToolBenchReport) -> list[str]:
    """Judge ids of the rubrics of scored tasks that have no usable verdict."""
    return [
        judge_id(result["id"], turn["index"], rubric["rubric_id"])
        for result in report.results
        for turn in result["turns"]
        for rubric in turn["rubrics"]
        if rubric["status"] in UNJUDGED
    ]


def judge_counts_line(report: VisToolBenchReport) -> str:
    """``N judge tasks: a met, b not_met, ...; m missing_answer; u judge line(s) for no judge
    task (k for unanswered turns)`` from the report's judge counts: the statuses of the judge
    tasks add up to N; the rubrics of unanswered turns have no judge task and are said apart."""
    judge = report.summary["judge"]
    parts = [f"{judge.get(name, 0)} {name}" for name in STATUSES if name != MISSING_ANSWER]
    return (
        f"{judge['judge_tasks']} judge tasks: {', '.join(parts)}; "
        f"{judge[MISSING_ANSWER]} missing_answer (rubrics of unanswered turns, no judge task); "
        f"{judge['unknown_responses']} judge line(s) for no judge task "
        f"({judge.get('unanswered_responses', 0)} for unanswered turns)"
    )


def judge_check(report: VisToolBenchReport) -> Check:
    """Passes when every rubric of a scored task has a met / not met verdict that judged the
    current answer, and every judge line matched a judge task."""
    offending = unusable_verdicts(report)
    unknown = report.summary["judge"]["unknown_responses"]
    problems = []
    if offending:
        problems.append(
            f"{len(offending)} rubric(s) without a usable verdict: {name_ids(offending)}"
        )
    if unknown:
        problems.append(f"{unknown} judge line(s) match no judge task")
    return Check(STRICT_JUDGE, not problems, "; ".join(problems) or judge_counts_line(report))


def run_checks(report: VisToolBenchReport, options: CheckOptions) -> list[Check]:
    """Coverage of the turns in scope (per turncase), then the requested checks; --fail-under
    gates on APR."""
    summary = report.summary
    responses = summary["responses"]
    gaps = [
        f"{name} {c['answered_turns']}/{c['turns']}"
        for name, c in responses.get("by_turncase", {}).items()
        if c["answered_turns"] < c["turns"]
    ]
    where = "turns answered per turncase: " + (", ".join(gaps) or "none exported")
    checks = [
        coverage_check(
            responses["turns"] - responses["answered_turns"],
            responses["turns"],
            where,
            options.allow_missing,
        )
    ]
    if options.strict_judge:
        checks.append(judge_check(report))
    if options.fail_under is not None:
        checks.append(fail_under_check("APR", summary["apr"], options.fail_under, checks[0].passed))
    return checks
