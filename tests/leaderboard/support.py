"""Synthetic reports of known differences for the leaderboard tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CAPABILITIES = ("chart", "math", "spatial")


def datbench_report(
    path: Path,
    correct: list[bool],
    *,
    revision: str = "rev-1",
    model: str | None = None,
    ids: list[str] | None = None,
    indent: int | None = None,
) -> Path:
    """A DatBench report over ``len(correct)`` samples spread over three capabilities (score 1
    for a right answer, 0 otherwise)."""
    ids = ids or [f"s{i:04d}" for i in range(len(correct))]
    results = [
        {
            "id": sample_id,
            "score": 1.0 if right else 0.0,
            "is_correct": right,
            "ground_truth": f"answer {sample_id}",
            "metadata": {
                "capability": CAPABILITIES[i % 3],
                "dataset": f"{CAPABILITIES[i % 3]}_set",
                "eval_mode": "direct",
            },
        }
        for i, (sample_id, right) in enumerate(zip(ids, correct, strict=True))
    ]
    n = len(correct)
    report: dict[str, Any] = {
        "summary": {
            "overall_accuracy": sum(correct) / n,
            "checks": [{"name": "coverage", "passed": True, "detail": f"{n} of {n} answered"}],
        },
        "provenance": {
            "dataset": {"split": "test", "resolved_revision": revision},
            "inputs": {"responses": {"sha256": "0" * 64, "models": {model: n}}} if model else {},
        },
        "results": results,  # last, as `score` writes it
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=indent))
    return path


def vistoolbench_report(path: Path, passed: list[bool]) -> Path:
    """A VisualToolBench report: APR 0/1 per task, ARS 0.9 when passed and 0.3 otherwise."""
    results = [
        {
            "id": f"t{i:04d}",
            "ars": 0.9 if ok else 0.3,
            "apr": 1 if ok else 0,
            "turncase": "single-turn" if i % 2 else "multi-turn",
            "domain": "d",
            "eval_focus": "f",
            "total_weight": 10,
        }
        for i, ok in enumerate(passed)
    ]
    report = {"benchmark": "vistoolbench", "summary": {}, "results": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report))
    return path


def flipped(correct: list[bool], count: int, to: bool) -> list[bool]:
    """``correct`` with the first ``count`` answers that are ``not to`` turned into ``to``."""
    out = list(correct)
    left = count
    for i, value in enumerate(out):
        if left and value is not to:
            out[i] = to
            left -= 1
    assert left == 0
    return out
