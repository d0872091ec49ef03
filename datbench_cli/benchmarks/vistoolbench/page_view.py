"""A VisualToolBench report as page data: APR/ARS headline, bars per turncase, domain and eval
focus, judge and response accounting, and one browser record per task (each turn's prompt and
images from ``tasks.jsonl``, its answer and rubric texts from ``judge_tasks.jsonl``, the
verdicts with weights from the report)."""

from __future__ import annotations

from typing import Any

from datbench_cli.benchmarks.vistoolbench.agent.settings import NOT_ISOLATED
from datbench_cli.files.rundir import JUDGE_TASKS, REFERENCES, TASKS
from datbench_cli.report_html.blocks import (
    block,
    compact,
    interval,
    listed,
    mapping,
    number,
    percent_text,
    text,
)
from datbench_cli.report_html.inputs import Images, RunFiles, by_id, read_lines

FACETS = [
    {"key": "turncase", "label": "Turncase"},
    {"key": "domain", "label": "Domain"},
    {"key": "eval_focus", "label": "Eval focus"},
    {"key": "prompt_category", "label": "Prompt category"},
    {"key": "result", "label": "APR"},
    {"key": "verdict", "label": "Rubric verdict"},
    {"key": "status", "label": "Response status"},
]
SORTS = [
    {"key": "ars", "label": "ARS", "percent": True},
    {"key": "apr", "label": "APR", "percent": True},
]
# What a collapsed row shows in a line: the first turn's prompt and answer.
LINE = {"question": ["Prompt"], "output": ["Answer"], "expected": []}
_GROUPS = (("turncase", "turncase"), ("domain", "domain"), ("eval_focus", "eval focus"))
_RESPONSE_LINKS = {"missing_turns": ("status", "missing"), "errored_turns": ("status", "errored")}
_JUDGE_LINKS = {
    "unparsed": "unparsed",
    "missing": "missing",
    "met": "met",
    "not_met": "not_met",
    "errored": "errored",
    "refused": "refused",
}


def _shown_percent(value: Any) -> str:
    """A task's score in percent, as the rest of the page shows scores."""
    shown = number(value)
    return text(value) if shown is None else percent_text(shown)


def _index(turn: dict[str, Any]) -> int | None:
    """A result turn's index, ``None`` when it is not a number (a hand-edited report)."""
    index = turn.get("index")
    return index if isinstance(index, int) else None


def _bars(summary: dict[str, Any], key: str) -> dict[str, Any]:
    node = summary.get("uncertainty")
    found = node.get(key) if isinstance(node, dict) else None
    return found if isinstance(found, dict) else {}


def headline(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """APR and ARS over every task, with intervals and answered turns."""
    overall = _bars(summary, "overall")
    responses = mapping(summary.get("responses"))
    coverage = None
    if "turns" in responses and "answered_turns" in responses:
        coverage = f"{responses['answered_turns']}/{responses['turns']} turns answered"
    return [
        {
            "key": key,
            "label": label,
            "value": number(summary.get(key)),
            "ci": interval(mapping(overall.get(key)).get("ci95")),
            "n": summary.get("num_tasks"),
            "coverage": coverage,
        }
        for key, label in (
            ("apr", "APR (average pass rate)"),
            ("ars", "ARS (average rubric score)"),
        )
    ]


def charts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """APR per turncase, domain and eval focus, with the report's intervals."""
    out = []
    for field, label in _GROUPS:
        groups = mapping(summary.get(f"by_{field}"))
        bars = _bars(summary, f"by_{field}")
        out.append(
            {
                "title": f"APR by {label}",
                "facet": field,
                "bars": [
                    {
                        "name": name,
                        "value": number(entry.get("apr")),
                        "ci": interval(mapping(mapping(bars.get(name)).get("apr")).get("ci95")),
                        "n": entry.get("n"),
                        "extra": f"ARS {percent_text(entry['ars'])}"
                        if number(entry.get("ars")) is not None
                        else None,
                    }
                    for name, entry in groups.items()
                    if isinstance(entry, dict)
                ],
            }
        )
    return out


def accounting(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Judge and response accounting (rubrics and turns), linked to the tasks behind each
    count; the page says beside each such count how many tasks its link shows."""
    rows = []
    for key, value in mapping(summary.get("judge")).items():
        match = _JUDGE_LINKS.get(key)
        rows.append(
            {
                "label": f"judge {key.replace('_', ' ')}" + (" rubrics" if match else ""),
                "key": f"judge.{key}",
                "value": value,
                "facet": "verdict" if match else None,
                "match": match,
            }
        )
    responses = mapping(summary.get("responses"))
    for key, value in responses.items():
        if isinstance(value, dict):
            continue  # per-group breakdowns and statuses: below / in the charts
        facet, match = _RESPONSE_LINKS.get(key, (None, None))
        rows.append(
            {
                "label": f"responses {key.replace('_', ' ')}",
                "key": f"responses.{key}",
                "value": value,
                "facet": facet,
                "match": match,
            }
        )
    statuses = responses.get("statuses")
    for status, count in (statuses if isinstance(statuses, dict) else {}).items():
        rows.append(
            {
                "label": f"turns with response status {status}",
                "key": f"responses.statuses.{status}",
                "value": count,
                "facet": "status",
                "match": status,
            }
        )
    return rows


def _answers(run_dir: Any) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    answers: dict[tuple[str, int], str] = {}
    rubric_text: dict[str, str] = {}
    for line in read_lines(run_dir, JUDGE_TASKS):
        task_id, turn = line.get("task_id"), line.get("turn_index")
        if isinstance(task_id, str) and isinstance(turn, int):
            answers.setdefault((task_id, turn), text(line.get("vlm_response")))
        if "id" in line:
            rubric_text[str(line["id"])] = text(line.get("rubric"))
    return answers, rubric_text


def _turn(
    task_id: str,
    turn: dict[str, Any],
    task_turn: dict[str, Any],
    answer: str | None,
    rubric_text: dict[str, str],
    images: Images,
) -> dict[str, Any]:
    index = turn.get("index")
    sources = [images.src(p) for p in listed(task_turn.get("images")) if isinstance(p, str)]
    rows = []
    for rubric in listed(turn.get("rubrics")):
        if not isinstance(rubric, dict):
            continue
        rid = text(rubric.get("rubric_id"))
        rows.append(
            [
                rid,
                rubric_text.get(f"{task_id}::{index}::{rid}", ""),
                text(rubric.get("weight")),
                text(rubric.get("critical")),
                text(rubric.get("counts_for_apr")),
                text(rubric.get("status")),
                text(rubric.get("explanation")),
                text(rubric.get("raw_judge_output")),
            ]
        )
    weights = f"met weight {text(turn.get('met_weight'))} of {text(turn.get('total_weight'))}"
    status = turn.get("response_status")
    return {
        "h": f"Turn {text(index)}",
        "sub": compact(
            [
                block("Prompt", task_turn.get("prompt"), True),
                {"h": "Images", "img": [s for s in sources if s]} if sources else None,
                block("Answer", answer if answer is not None else "(no answer)", True),
                block("Response status", status),
                block("Weights", weights),
                {
                    "h": "Rubric verdicts",
                    "tbl": {
                        "c": [
                            "rubric",
                            "criterion",
                            "weight",
                            "critical",
                            "counts for APR",
                            "verdict",
                            "explanation",
                            "raw judge output",
                        ],
                        "r": rows,
                    },
                }
                if rows
                else None,
            ]
        ),
    }


def records(files: RunFiles, images: Images) -> list[dict[str, Any]]:
    """One browser record per task of the report, and one per exported task without."""
    tasks = by_id(files.run_dir, TASKS)
    # A shard's tasks.jsonl holds only its shard; references.jsonl holds every task, with
    # each turn's index and prompt (no images).
    for tid, reference in by_id(files.run_dir, REFERENCES).items():
        if tid not in tasks:
            tasks[tid] = reference
    answers, rubric_text = _answers(files.run_dir)
    out = []
    for result in files.report["results"]:
        if not isinstance(result, dict):
            continue
        tid = text(result.get("id"))
        task = tasks.get(tid, {})
        task_turns = {_index(t): t for t in listed(task.get("turns")) if isinstance(t, dict)}
        turns = [t for t in listed(result.get("turns")) if isinstance(t, dict)]
        scored = {_index(t) for t in turns}
        # Turns of the task the report has no result for (unanswered, not scored).
        unscored = [t for i, t in task_turns.items() if i not in scored]
        verdicts = sorted(
            {
                text(r.get("status"))
                for t in turns
                for r in listed(t.get("rubrics"))
                if isinstance(r, dict)
            }
        )
        statuses = sorted(
            {
                text(t["response_status"])
                if "response_status" in t
                else "(not recorded)"
                if (tid, _index(t)) in answers
                else "missing"
                for t in turns
            }
            | {"missing" for _ in unscored}
        )
        apr = number(result.get("apr"))
        out.append(
            {
                "id": tid,
                "f": {
                    "turncase": text(result.get("turncase")),
                    "domain": text(result.get("domain")),
                    "eval_focus": text(result.get("eval_focus")),
                    "prompt_category": text(result.get("prompt_category")),
                    "result": "pass" if apr == 1 else "fail" if apr is not None else "unscored",
                    "verdict": verdicts,
                    "status": statuses,
                },
                "n": {"ars": number(result.get("ars")), "apr": apr},
                "v": compact(
                    [
                        block(
                            "Scores",
                            f"APR {_shown_percent(result.get('apr'))} · "
                            f"ARS {_shown_percent(result.get('ars'))} · "
                            f"met weight {text(result.get('met_weight'))} of "
                            f"{text(result.get('total_weight'))}",
                        ),
                        *[
                            _turn(
                                tid,
                                t,
                                task_turns.get(_index(t), {}),
                                answers.get((tid, _index(t))),  # type: ignore[arg-type]
                                rubric_text,
                                images,
                            )
                            for t in turns
                        ],
                        *[
                            {
                                "h": f"Turn {text(t.get('index'))}",
                                "sub": compact(
                                    [
                                        block("Prompt", t.get("prompt"), True),
                                        block("Answer", "(no answer: not scored)"),
                                    ]
                                ),
                            }
                            for t in unscored
                        ],
                    ]
                ),
            }
        )
    seen = {r["id"] for r in out}
    for tid, task in tasks.items():
        if tid not in seen:
            out.append(_unscored(task, images))
    return out


def _unscored(task: dict[str, Any], images: Images) -> dict[str, Any]:
    """A task of the export the report has no result for (no answer to any turn)."""
    turns = [t for t in listed(task.get("turns")) if isinstance(t, dict)]
    return {
        "id": text(task.get("id")),
        "f": {
            "turncase": text(task.get("turncase")),
            "domain": text(task.get("domain", "")),
            "eval_focus": text(task.get("eval_focus")),
            "prompt_category": text(task.get("prompt_category")),
            "result": "unscored",
            "verdict": [],
            "status": ["missing"],
        },
        "n": {"ars": None, "apr": None},
        "v": [
            {
                "h": f"Turn {text(t.get('index'))}",
                "sub": compact(
                    [
                        block("Prompt", t.get("prompt"), True),
                        _images(t, images),
                        block("Answer", "(no answer: not scored)"),
                    ]
                ),
            }
            for t in turns
        ],
    }


def _images(turn: dict[str, Any], images: Images) -> dict[str, Any] | None:
    sources = [images.src(p) for p in listed(turn.get("images")) if isinstance(p, str)]
    shown = [s for s in sources if s]
    return {"h": "Images", "img": shown} if shown else None


def page_data(files: RunFiles, images: Images) -> dict[str, Any]:
    """Everything the run page shows, for a VisualToolBench report."""
    summary = files.report["summary"]
    diagnostics = mapping(summary.get("diagnostics"))
    notes = [f"{k.replace('_', ' ')}: {text(v)} (diagnostic)" for k, v in diagnostics.items()]
    if summary.get("context_policy"):
        notes.append(f"context policy: {text(summary['context_policy'])}")
    agent = summary.get("agent")
    if isinstance(agent, dict) and agent.get("code_isolated") is False:
        notes.append(NOT_ISOLATED)
    return {
        "benchmark": "VisualToolBench",
        "headline": headline(summary),
        "charts": charts(summary),
        "tables": [],
        "accounting": accounting(summary),
        "notes": notes,
        "browser": {
            "unit": "task",
            "facets": FACETS,
            "sorts": SORTS,
            "records": records(files, images),
            "line": LINE,
            "failure": {"facet": "result", "value": "fail"},
        },
    }
