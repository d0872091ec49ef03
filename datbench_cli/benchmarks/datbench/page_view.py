"""A DatBench report as page data: headline, capability chart, dataset table, accounting,
and one browser record per scored sample (prompt and image from ``tasks.jsonl``, references
from ``references.jsonl``, the judge prompt sent from ``judge_tasks.jsonl``)."""

from __future__ import annotations

from typing import Any

from datbench_cli.benchmarks.datbench.judge_prompt import judge_text
from datbench_cli.files.rundir import JUDGE_TASKS, REFERENCES, TASKS
from datbench_cli.report_html.blocks import (
    block,
    compact,
    interval,
    kv,
    link,
    mapping,
    number,
    percent_text,
    text,
)
from datbench_cli.report_html.inputs import Images, RunFiles, by_id

FACETS = [
    {"key": "capability", "label": "Capability"},
    {"key": "dataset", "label": "Dataset"},
    {"key": "result", "label": "Result"},
    {"key": "eval_mode", "label": "Eval mode"},
    {"key": "verdict", "label": "Judge verdict"},
    {"key": "status", "label": "Response status"},
]
SORTS = [
    {"key": "score", "label": "score", "percent": True},
    {"key": "discrimination", "label": "eval_metrics.discrimination"},
]
# What a collapsed row shows in a line: the first block under each heading.
LINE = {"question": ["Prompt"], "output": ["Raw output"], "expected": ["Reference"]}
# summary key -> (label, facet, value): accounting numbers that link to their samples.
_ACCOUNTING = [
    ("judge_missing_responses", "judge verdict missing", "verdict", "missing"),
    ("judge_unparsed_verdicts", "judge verdict unparsed", "verdict", "unparsed"),
    ("judge_stale_verdicts", "judge verdict stale", "verdict", "stale"),
    ("missing_responses", "no VLM response", "status", "missing"),
    ("errored_responses", "errored responses", "status", "errored"),
    ("truncated_responses", "truncated responses", "status", "truncated"),
    ("unanswered_samples", "unanswered samples", None, None),
    ("duplicate_response_ids", "duplicate response ids", None, None),
    ("unknown_response_ids", "unknown response ids", None, None),
    ("judge_errored_responses", "judge verdict errored", "verdict", "errored"),
    ("judge_refused_responses", "judge refused", "verdict", "refused"),
    ("judge_truncated_responses", "truncated judge responses", None, None),
    ("unknown_judge_response_ids", "unknown judge response ids", None, None),
    ("direct_judge_response_ids", "judge response ids of direct-mode samples", None, None),
    ("unanswered_judge_response_ids", "judge response ids of unanswered samples", None, None),
    ("duplicate_judge_response_ids", "duplicate judge response ids", None, None),
]
# Shown in their own blocks (or as the score and the verdict facet), not again in the details.
_DETAIL_SKIP = {
    "model_output",
    "judge_raw_output",
    "ground_truth",
    "pred_answer",
    "all_ground_truth_answers",
    "score",
    "judge_verdict",
}


def _uncertainty(summary: dict[str, Any], *path: str) -> dict[str, Any]:
    node: Any = summary.get("uncertainty")
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _coverage_text(entry: Any) -> str | None:
    if isinstance(entry, dict) and "answered" in entry and "expected" in entry:
        return f"{entry['answered']}/{entry['expected']} answered"
    return None


def headline(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Overall, direct and judge accuracy with their intervals, counts and coverage; an
    accuracy over no sample is ``None`` (shown "-"), as ``score`` records it: the library's
    report keeps the reference's 0.0, which read as a model that got everything wrong."""
    rows = []
    for key, count, label, unc in (
        ("overall_accuracy", "total_samples", "Overall accuracy", "overall"),
        ("direct_accuracy", "direct_samples", "Direct accuracy", "direct"),
        ("judge_accuracy", "judge_samples", "Judge accuracy", "judge"),
    ):
        if key not in summary:
            continue
        bars = _uncertainty(summary, unc)
        rows.append(
            {
                "key": key,
                "label": label,
                "value": None if summary.get(count) == 0 else number(summary.get(key)),
                "ci": interval(bars.get("ci95")),
                "n": summary.get(count),
                "coverage": _coverage_text(summary.get("coverage")) if unc == "overall" else None,
            }
        )
    return rows


def chart(summary: dict[str, Any]) -> dict[str, Any]:
    """Per-capability accuracy with error bars (the report's ``uncertainty`` intervals)."""
    accuracy = mapping(summary.get("capability_accuracy"))
    counts = mapping(summary.get("capability_counts"))
    caps = _uncertainty(summary, "capabilities")
    coverage = mapping(mapping(summary.get("coverage")).get("by_capability"))
    return {
        "title": "Accuracy by capability",
        "facet": "capability",
        "bars": [
            {
                "name": name,
                "value": number(value),
                "ci": interval(mapping(caps.get(name)).get("ci95")),
                "n": counts.get(name),
                "coverage": _coverage_text(coverage.get(name)),
            }
            for name, value in accuracy.items()
        ],
    }


def dataset_table(summary: dict[str, Any], capability_of: dict[str, str]) -> dict[str, Any]:
    """One row per source dataset: its scorer's own metrics, the mean score of all its samples
    with that mean's interval (as the terminal table shows them), known defect. The scorer's
    metrics may cover its direct samples only, or average categories: the interval is the
    mean score's, shown beside it."""
    defects = mapping(summary.get("known_reference_defects"))
    datasets = _uncertainty(summary, "datasets")
    rows = []
    for name, metrics in mapping(summary.get("dataset_metrics")).items():
        bars = mapping(datasets.get(name))
        ci = interval(bars.get("ci95"))
        mean = number(bars.get("accuracy"))
        shown = "; ".join(f"{k}: {_metric(k, v)}" for k, v in mapping(metrics).items())
        rows.append(
            [
                link(name, "dataset", name),
                capability_of.get(name, ""),
                bars.get("n", ""),
                shown,
                "" if mean is None else percent_text(mean),
                "" if ci is None else f"[{percent_text(ci[0])}, {percent_text(ci[1])}]",
                text(defects.get(name, "")),
            ]
        )
    return {
        "title": "Per-dataset metrics (each scorer's own)",
        "cols": [
            "dataset",
            "capability",
            "n",
            "metrics",
            "mean score",
            "95% interval of the mean score",
            "known reference defect",
        ],
        "rows": rows,
        "defect_col": 6,
    }


def _metric(key: Any, value: Any) -> str:
    """A scorer metric: a fraction (a float in [0, 1]) in percent, anything else as it is.
    A mean absolute error (the counting scorers' ``-MAE``) is a count, never a fraction: an
    MAE of 0.5 is half a count, not 50%."""
    is_count = isinstance(key, str) and key.endswith("MAE")
    if isinstance(value, float) and 0.0 <= value <= 1.0 and not is_count:
        return percent_text(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    return text(value)


def unanswered_status(summary: dict[str, Any]) -> str:
    """The response status of the samples the report has no result for: the report counts
    them (``response_statuses``: ``missing``, no line; ``errored``, only errored lines) but
    does not say which is which, so both kinds present read ``missing or errored``."""
    statuses = mapping(summary.get("response_statuses"))
    if not number(statuses.get("errored")):
        return "missing"
    return "errored" if not number(statuses.get("missing")) else "missing or errored"


def accounting(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Censoring and judge accounting: each count from the summary, linked to its samples
    (the unanswered ones by the status their records carry, :func:`unanswered_status`)."""
    unanswered = unanswered_status(summary)

    def status_match(value: str | None) -> str | None:
        combined = unanswered == "missing or errored" and value in ("missing", "errored")
        return unanswered if combined else value

    rows = []
    for key, label, facet, value in _ACCOUNTING:
        if key in ("missing_responses", "unanswered_samples"):
            facet, value = "status", unanswered  # both count every unanswered sample
        elif facet == "status":
            value = status_match(value)
        if key in summary:
            count = summary[key]
            shown = len(count) if isinstance(count, list | dict) else count
            rows.append(
                {"label": label, "key": key, "value": shown, "facet": facet, "match": value}
            )
    for status, count in mapping(summary.get("response_statuses")).items():
        rows.append(
            {
                "label": f"response status {status}",
                "key": f"response_statuses.{status}",
                "value": count,
                "facet": "status",
                "match": status_match(status),
            }
        )
    return rows


def _verdict(details: dict[str, Any], eval_mode: Any, judge_status: Any = None) -> Any:
    """The verdict facet: the verdict, and beside a missing or unparsed one why the judge gave
    none (``judge_status``: its lines all errored, or it refused). Both values, as the
    summary counts such a sample twice: in ``judge_missing_responses`` or
    ``judge_unparsed_verdicts`` (the seed's counts) and in its ``judge_errored_responses`` or
    ``judge_refused_responses``; each count's link selects exactly the samples it counts."""
    verdict = details.get("judge_verdict")
    if not isinstance(verdict, str):
        verdict = "missing" if details.get("judge_missing_response") else None
    if verdict is None:
        return "(direct)" if eval_mode != "judge" else "(none)"
    if judge_status in ("errored", "refused"):
        return [verdict, str(judge_status)]
    return verdict


def _result(sample: dict[str, Any]) -> str:
    if sample.get("is_correct") is True:
        return "correct"
    if sample.get("is_correct") is False:
        return "incorrect"
    return "unscored"


def _task_from_reference(reference: dict[str, Any]) -> dict[str, Any]:
    """A sample's task as its reference line tells it (the prompt as sent, no image)."""
    question = reference.get("question")
    if isinstance(question, str):
        fmt = mapping(reference.get("prompt_format"))
        question = f"{text(fmt.get('prefix', ''))}{question}{text(fmt.get('suffix', ''))}"
    return {
        "capability": reference.get("capability"),
        "eval_mode": reference.get("eval_mode"),
        "question": question,
    }


def records(files: RunFiles, images: Images) -> list[dict[str, Any]]:
    """One browser record per result of the report, and one per exported sample without."""
    tasks = by_id(files.run_dir, TASKS)
    references = by_id(files.run_dir, REFERENCES)
    # A shard's tasks.jsonl holds only its shard; references.jsonl holds every sample.
    for sid, reference in references.items():
        if sid not in tasks:
            tasks[sid] = _task_from_reference(reference)
    judge_tasks = by_id(files.run_dir, JUDGE_TASKS)
    out = []
    for sample in files.report["results"]:
        if not isinstance(sample, dict):
            continue
        sid = text(sample.get("id"))
        meta = mapping(sample.get("metadata"))
        details = mapping(meta.get("score_details"))
        task = tasks.get(sid, {})
        reference = references.get(sid, {})
        eval_mode = meta.get("eval_mode")
        status = meta.get("response_status", sample.get("response_status"))
        image_paths = task.get("images") or ([task["image"]] if task.get("image") else [])
        sources = [images.src(p) for p in image_paths if isinstance(p, str)]
        judge_prompt = judge_text(judge_tasks[sid]) if sid in judge_tasks else None
        refs = details.get("all_ground_truth_answers", reference.get("all_answers"))
        if refs == [sample.get("ground_truth")]:
            refs = None  # the one reference, already shown
        out.append(
            {
                "id": sid,
                "f": {
                    "capability": text(meta.get("capability")),
                    "dataset": text(meta.get("dataset")),
                    "result": _result(sample),
                    "eval_mode": text(eval_mode),
                    "verdict": _verdict(details, eval_mode, meta.get("judge_status")),
                    "status": text(status) if status is not None else "(not recorded)",
                },
                "n": {
                    "score": number(sample.get("score")),
                    "discrimination": number(meta.get("discrimination")),
                },
                "v": compact(
                    [
                        {"h": "Image", "img": [s for s in sources if s]} if sources else None,
                        block("Prompt", task.get("question", reference.get("question")), True),
                        block("Raw output", sample.get("vlm_output"), True),
                        block("Extracted answer", details.get("pred_answer")),
                        block("Reference", sample.get("ground_truth")),
                        block("All references", refs),
                        kv(
                            "Score details",
                            {k: v for k, v in details.items() if k not in _DETAIL_SKIP},
                        ),
                        block("Judge prompt sent", judge_prompt),
                        block("Judge raw output", details.get("judge_raw_output")),
                    ]
                ),
            }
        )
    seen = {r["id"] for r in out}
    unanswered = unanswered_status(files.report["summary"])
    for sid, task in tasks.items():
        if sid not in seen:
            out.append(_unscored(sid, task, references.get(sid, {}), images, unanswered))
    return out


def _unscored(
    sid: str, task: dict[str, Any], reference: dict[str, Any], images: Images, status: str
) -> dict[str, Any]:
    """A sample of the export the report has no result for (no usable response: ``status``,
    see :func:`unanswered_status`)."""
    image_paths = task.get("images") or ([task["image"]] if task.get("image") else [])
    sources = [s for s in (images.src(p) for p in image_paths if isinstance(p, str)) if s]
    source_info = mapping(reference.get("source_info"))
    return {
        "id": sid,
        "f": {
            "capability": text(task.get("capability")),
            "dataset": text(source_info.get("dataset", "")),
            "result": "unscored",
            "eval_mode": text(task.get("eval_mode")),
            "verdict": "(none)",
            "status": status,
        },
        "n": {"score": None, "discrimination": None},
        "v": compact(
            [
                {"h": "Image", "img": sources} if sources else None,
                block("Prompt", task.get("question"), True),
                block("Raw output", "(no response: not scored)"),
                block("Reference", reference.get("answer")),
            ]
        ),
    }


def page_data(files: RunFiles, images: Images) -> dict[str, Any]:
    """Everything the run page shows, for a DatBench report."""
    summary = files.report["summary"]
    recs = records(files, images)
    capability_of = {r["f"]["dataset"]: r["f"]["capability"] for r in recs}
    notes = []
    if summary.get("known_reference_defects"):
        notes.append(
            "Known reference defects are kept for parity with the reference scorer; they are "
            "shown on the dataset rows they affect (docs/known-defects.md)."
        )
    return {
        "benchmark": "DatBench",
        "headline": headline(summary),
        "charts": [chart(summary)],
        "tables": [dataset_table(summary, capability_of)],
        "accounting": accounting(summary),
        "notes": notes,
        "browser": {
            "unit": "sample",
            "facets": FACETS,
            "sorts": SORTS,
            "records": recs,
            "line": LINE,
            "failure": {"facet": "result", "value": "incorrect"},
        },
    }
