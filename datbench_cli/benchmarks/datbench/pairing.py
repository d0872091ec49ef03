"""DatBench's side of ``datbench compare``: samples from report results, metric and tables."""

from __future__ import annotations

import math
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from datbench_cli.compare.paired import Sample
from datbench_cli.compare.spec import Columns, Metric, Side, TableSpec
from datbench_cli.errors import InputError

ACCURACY = "accuracy"


def _bad(path: Path, index: int, what: str) -> InputError:
    return InputError(f"results[{index}] {what}", path)


def _sample(entry: Any, index: int, path: Path) -> Sample:
    if not isinstance(entry, dict):
        raise _bad(path, index, "is not an object")
    sample_id, score, correct = entry.get("id"), entry.get("score"), entry.get("is_correct")
    meta = entry.get("metadata")
    if not isinstance(sample_id, str):
        raise _bad(path, index, 'has no string "id"')
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise _bad(path, index, f'({sample_id}) has no finite number "score"')
    if not 0 <= score <= 1:
        # A score is in [0, 1] (docs/report.md): another one is an edited report, never a run.
        raise _bad(path, index, f'({sample_id}) has a "score" of {score}, outside [0, 1]')
    if not isinstance(correct, bool):
        raise _bad(path, index, f'({sample_id}) has no true/false "is_correct"')
    if not isinstance(meta, dict):
        raise _bad(path, index, f'({sample_id}) has no "metadata" object')
    groups = {
        "capability": str(meta.get("capability")),
        "dataset": str(meta.get("dataset")),
        "eval_mode": str(meta.get("eval_mode")),
    }
    check = (entry.get("ground_truth"), groups["capability"], groups["dataset"])
    return Sample(sample_id, groups, {ACCURACY: float(score)}, {ACCURACY: correct}, check)


def read(results: list[Any], path: Path) -> list[Sample]:
    """The samples of a DatBench report's ``results``."""
    return [_sample(entry, index, path) for index, entry in enumerate(results)]


class _Metadata(msgspec.Struct, gc=False):
    # A missing field is "None", as str(meta.get(...)) makes it; any other non-string value
    # (null included) fails the schema and the entry is read by :func:`read`.
    capability: str = "None"
    dataset: str = "None"
    eval_mode: str = "None"


class _Entry(msgspec.Struct, gc=False):
    """The fields of a result entry the comparison reads (the others are skipped unbuilt)."""

    id: str
    score: float  # a JSON integer is accepted as a float; true/false is not
    is_correct: bool
    metadata: _Metadata
    ground_truth: Any = None


_ENTRIES = msgspec.json.Decoder(list[_Entry])
_ID, _SCORE, _IS_CORRECT, _GROUND_TRUTH, _METADATA = map(
    attrgetter, ("id", "score", "is_correct", "ground_truth", "metadata")
)
_CAPABILITY, _DATASET, _EVAL_MODE = map(attrgetter, ("capability", "dataset", "eval_mode"))


def columns(data: bytes) -> Columns | None:
    """A JSON array of result entries as columns, what :func:`read` makes of it; ``None`` when
    an entry is not in the plain shape (:func:`read` then names what is wrong)."""
    try:
        entries = _ENTRIES.decode(data)
    except msgspec.DecodeError:
        return None
    scores = np.array(list(map(_SCORE, entries)), dtype=float)
    if not np.isfinite(scores).all() or not ((scores >= 0) & (scores <= 1)).all():
        return None
    metadata = list(map(_METADATA, entries))
    capability = list(map(_CAPABILITY, metadata))
    dataset = list(map(_DATASET, metadata))
    return Columns(
        ids=list(map(_ID, entries)),
        groups={
            "capability": capability,
            "dataset": dataset,
            "eval_mode": list(map(_EVAL_MODE, metadata)),
        },
        values={ACCURACY: scores},
        correct={ACCURACY: np.array(list(map(_IS_CORRECT, entries)), dtype=bool)},
        checks=[list(map(_GROUND_TRUTH, entries)), capability, dataset],
    )


def pair_fields(a: Sample, b: Sample) -> dict[str, Any]:
    """One joined sample as the comparison lists it."""
    return {
        "id": a.id,
        "capability": a.groups["capability"],
        "dataset": a.groups["dataset"],
        "eval_mode": a.groups["eval_mode"],
        "score_a": a.values[ACCURACY],
        "score_b": b.values[ACCURACY],
        "correct_a": a.correct[ACCURACY],
        "correct_b": b.correct[ACCURACY],
    }


SIDE = Side(
    metrics=(Metric(ACCURACY, "accuracy", exact_test=True),),
    tables=(
        TableSpec("overall", "overall", None, "dataset", gated=True),
        TableSpec("capabilities", "per capability", "capability", "dataset", gated=True),
        TableSpec("datasets", "per source dataset", "dataset", None, gated=False),
    ),
    read=read,
    pair_fields=pair_fields,
    columns=columns,
    counted="total_samples",
    means=(("overall_accuracy", ACCURACY),),
)
