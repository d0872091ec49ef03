"""Helpers that turn the reference's test vectors into checks (one sub-test per line)."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from datbench_cli import DatBenchEvaluator, SampleScore, VLMResponse

DATA = Path(__file__).parent / "data"

# Lists the reference builds from Python sets: their order depends on hashing.
SET_LIST_KEYS = frozenset({"parsed_response", "extracted_output"})
# Vector files that are not per-scorer module files.
GLUE_STEMS = frozenset({"evaluator", "evaluator_summary", "erma_utils", "erma_utils_direct"})


def load_lines(path: Path) -> list[dict[str, Any]]:
    """All JSON lines of a vector file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def round_trip(value: Any) -> Any:
    """What the reference recorded: JSON with ``default=str``."""
    return json.loads(json.dumps(value, default=str))


def _multiset(items: list[Any]) -> Counter[str]:
    return Counter(json.dumps(item, sort_keys=True) for item in items)


def assert_same(case: Any, actual: Any, expected: Any, where: str = "") -> None:
    """Deep equality (floats exact); set-derived lists compare as multisets."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        case.assertEqual(list(actual), list(expected), f"keys differ at {where or '<top>'}")
        for key, value in expected.items():
            if key in SET_LIST_KEYS and isinstance(value, list) and isinstance(actual[key], list):
                case.assertEqual(_multiset(actual[key]), _multiset(value), f"{where}.{key}")
            else:
                assert_same(case, actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(actual, list):
        case.assertEqual(len(actual), len(expected), f"length differs at {where}")
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(case, a, e, f"{where}[{index}]")
    else:
        case.assertEqual(type(actual), type(expected), f"type differs at {where}: {actual!r}")
        case.assertEqual(actual, expected, f"value differs at {where}")


def score_file(path: Path) -> list[SampleScore]:
    """Every line of a vector file scored through the evaluator, as the reference scored each
    alone: one evaluator call per capability and batch of distinct ids (a call's fixed cost,
    its worker pool, is paid per batch instead of per line), results in line order."""
    lines = load_lines(path)
    batches: list[tuple[str, dict[str, int]]] = []  # (capability, {row id: line index})
    for index, line in enumerate(lines):
        sample_id = line["row"]["id"]
        batch = next(
            (ids for capability, ids in batches
             if capability == line["capability"] and sample_id not in ids),
            None,
        )  # fmt: skip
        if batch is None:
            batch = {}
            batches.append((line["capability"], batch))
        batch[sample_id] = index
    results: list[SampleScore | None] = [None] * len(lines)
    for capability, ids in batches:
        rows = [dict(lines[index]["row"], image=None) for index in ids.values()]
        evaluator = DatBenchEvaluator(rows, capability)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluator.compute_metrics(
                [VLMResponse(row["id"], lines[ids[row["id"]]]["raw_output"]) for row in rows]
            )
        assert [result.id for result in report.results] == list(ids)
        for result in report.results:
            results[ids[result.id]] = result
    assert all(result is not None for result in results)
    return results  # type: ignore[return-value]


_SCORED: dict[Path, list[SampleScore]] = {}


def scored_line(path: Path, number: int) -> SampleScore:
    """The result of line ``number`` (from 1) of a vector file (the file scored once)."""
    if path not in _SCORED:
        _SCORED[path] = score_file(path)
    return _SCORED[path][number - 1]


def check_line(case: Any, line: dict[str, Any], result: SampleScore) -> None:
    """One standard or raises line's ``result``: same score, is_correct and score_details, or
    same error."""
    details = round_trip(result.metadata["score_details"])
    if line["row"].get("eval_mode") == "judge":
        # The seed overrides the reference here: judge-mode rows are scored only from a judge
        # verdict, and there is none in a vector, so the sample is a missing verdict scoring 0.
        case.assertEqual(details["judge_verdict"], "missing")
        case.assertEqual(result.score, 0.0)
        return
    if "expected_error" in line:
        case.assertEqual(details.get("error"), line["expected_error"])
        case.assertEqual(result.score, 0.0)
        case.assertFalse(result.is_correct)
        return
    expected = line["expected"]
    case.assertEqual(result.score, expected["score"])
    case.assertIs(result.is_correct, expected["is_correct"])
    assert_same(case, details, expected["score_details"])


def check_metrics_file(case: Any, metrics_path: Path, lines: list[dict[str, Any]]) -> None:
    """One compute_metrics call over every line of the module file equals the recorded summary."""
    expected = json.loads(metrics_path.read_text(encoding="utf-8"))
    rows = [dict(line["row"], image=None) for line in lines]
    evaluator = DatBenchEvaluator(rows, expected["capability"])
    responses = [VLMResponse(line["row"]["id"], line["raw_output"]) for line in lines]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluator.compute_metrics(responses)
    summary = round_trip(report.summary)
    for key, value in expected["summary"].items():
        assert_same(case, summary[key], value, key)


def check_direct_line(case: Any, module: Any, line: dict[str, Any]) -> None:
    """A module-level ``score_sample`` call equals the recorded details."""
    if "function" in line:
        function = getattr(module, line["function"])
        arguments = line["input"]
        if isinstance(arguments, dict):
            actual = function(**arguments)
        elif isinstance(arguments, list):
            actual = function(*arguments)
        else:
            actual = function(arguments)
        assert_same(case, round_trip(actual), line["output"])
        return
    actual = module.score_sample(line["scorer_sample"], line["model_output"])
    assert_same(case, round_trip(actual), line["expected_score_details"])
