"""PixMo-Points-Eval pointing: predicted points matched to target points, checked on masks."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from datbench_cli.metrics.averaging import float_sum
from datbench_cli.metrics.geometry import clamp_unit, distance_matrix, point_in_mask
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers.base import SampleFields, default_input
from datbench_cli.text.boxed import all_boxed
from datbench_cli.text.scan import DigitLedPattern

KNOWN_DEFECT = (
    "Predicted points in percent (0-100) are read as a 0-1000 grid, and object-absent answers "
    "count as correct only when they contain one of a fixed list of phrases."
)

Point = tuple[float, float]

_NUMBER = r"(\d+(?:\.\d+)?)"
_COMMA_PAIR = DigitLedPattern(_NUMBER + r"\s*,\s*" + _NUMBER)
_SPACE_PAIR = DigitLedPattern(_NUMBER + r"\s+([0-9]+(?:\.\d+)?)")
_PAREN_PAIR_RE = re.compile(r"\(" + _NUMBER + r"\s*,\s*" + _NUMBER + r"\)")
_BRACKET_PAIR_RE = re.compile(r"\[" + _NUMBER + r"\s*,\s*" + _NUMBER + r"\]")

_NO_TARGET_PHRASES = (
    "no target",
    "no such object",
    "no object",
    "no object found",
    "no target found",
    "no target present",
    "target not found",
    "object not found",
    "not present",
    "is not present",
    "absent",
    "missing",
    "cannot find",
    "cannot locate",
    "can't find",
    "can't locate",
)

# The assignment needs an n_pred x n_gt float64 cost matrix (plus temporaries) and SciPy's solver
# takes about min(n)^2 * max(n) steps without ever yielding to the time budget's signal. Past
# either limit the sample is recorded as a scorer error instead of exhausting memory or stalling
# the run (a 1000 x 1000 worst case takes about a second; real samples are far below both).
MAX_ASSIGNMENT_CELLS = 5_000_000
MAX_ASSIGNMENT_WORK = 1_000_000_000


class AssignmentTooLarge(ValueError):
    """The point assignment for one sample would need an unreasonably large cost matrix."""


def _normalize(x: float, y: float, percent_scale: bool) -> Point | None:
    """Map a point to [0, 1]: kept if both |coords| <= 1, else percent (targets only) or 0-1000.

    A 0-1000 point with a negative coordinate is dropped.
    """
    largest = max(abs(x), abs(y))
    # Quirk: a percent target with both coordinates <= 1 is taken as already normalized.
    if largest <= 1.0:
        scaled = (x, y)
    # Quirk: predictions have no percent branch: "(64.8, 69.0)" becomes (0.0648, 0.069).
    elif percent_scale and largest <= 100.0:
        scaled = (x / 100.0, y / 100.0)
    else:
        if min(x, y) < 0.0:
            return None
        scaled = (min(x, 1000.0) / 1000.0, min(y, 1000.0) / 1000.0)
    return (clamp_unit(scaled[0]), clamp_unit(scaled[1]))


def _predicted(pairs: Iterable[tuple[str, str]]) -> list[Point]:
    points = []
    for x_text, y_text in pairs:
        point = _normalize(float(x_text), float(y_text), percent_scale=False)
        if point is not None:
            points.append(point)
    return points


def parse_points(model_output: str) -> list[Point]:
    """Points from the last boxed block that has any, else ``(x, y)``, ``[x, y]`` or ``x, y``."""
    response = model_output.strip()
    for content in reversed(all_boxed(response)):
        # Quirk: comma pairs and whitespace pairs are both collected, so "\boxed{120 870, 300 400}"
        # gives (870, 300) and then (120, 870), (300, 400).
        points = _predicted(_COMMA_PAIR.findall(content)) + _predicted(_SPACE_PAIR.findall(content))
        if points:
            return points
    for pattern in (_PAREN_PAIR_RE, _BRACKET_PAIR_RE):
        points = _predicted(pattern.findall(response))
        if points:
            return points
    return _predicted(_COMMA_PAIR.findall(response))


def _target_points(raw_points: Iterable[Any]) -> list[Point]:
    """Targets given as ``{"x", "y"}`` dicts or ``[x, y, ...]`` lists, normalized."""
    points = []
    for entry in raw_points:
        if isinstance(entry, dict) and "x" in entry and "y" in entry:
            # Quirk: a dict value that is not a number raises (list entries are skipped instead).
            x, y = float(entry["x"]), float(entry["y"])
        elif isinstance(entry, (list, tuple)) and len(entry) >= 2:
            try:
                x, y = float(entry[0]), float(entry[1])
            except (ValueError, TypeError):
                continue
        else:
            continue
        point = _normalize(x, y, percent_scale=True)
        if point is not None:
            points.append(point)
    return points


def _check_assignment_size(n_predicted: int, n_targets: int) -> None:
    smaller, larger = sorted((n_predicted, n_targets))
    if n_predicted * n_targets > MAX_ASSIGNMENT_CELLS or (
        smaller * smaller * larger > MAX_ASSIGNMENT_WORK
    ):
        raise AssignmentTooLarge(
            f"matching {n_predicted} predicted to {n_targets} target points exceeds the "
            f"assignment size limit ({MAX_ASSIGNMENT_CELLS} cells, "
            f"{MAX_ASSIGNMENT_WORK} min^2*max steps)"
        )


@functools.cache
def _linear_sum_assignment() -> Callable[..., Any]:
    """SciPy's ``linear_sum_assignment``, the very function: loaded from its extension module
    ``scipy.optimize._lsap`` alone when that file is where SciPy 1.17 keeps it, since importing
    ``scipy.optimize`` costs ~0.2 s of a small run's start-up (linprog, sparse, linalg) and
    the assignment needs none of it; else through the package."""
    try:
        spec = importlib.util.find_spec("scipy")  # locates the package without importing it
        folder = Path(spec.submodule_search_locations[0]) / "optimize"  # type: ignore[union-attr,index]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if (folder / f"_lsap{suffix}").is_file():
                module_spec = importlib.util.spec_from_file_location(
                    "scipy.optimize._lsap", folder / f"_lsap{suffix}"
                )
                module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
                module_spec.loader.exec_module(module)  # type: ignore[union-attr]
                return module.linear_sum_assignment  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - any surprise in SciPy's layout: the public import
        pass
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment


def _assign(predicted: Sequence[Point], targets: Sequence[Point]) -> list[tuple[int, int]]:
    """Minimum-total-distance matching; SciPy's tie-breaking decides some scores."""
    rows, cols = _linear_sum_assignment()(distance_matrix(predicted, targets))
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _says_no_target(model_output: str) -> bool:
    lowered = model_output.lower()
    return any(phrase in lowered for phrase in _NO_TARGET_PHRASES)


_REQUIRED_METADATA = ("points_target", "points_mask", "has_target")


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus the required target points (``points``), masks and flag."""
    out = default_input(sample, metadata)
    missing = [name for name in _REQUIRED_METADATA if name not in metadata]
    if missing:
        raise ValueError(f"Pixmo sample {sample.id} missing required metadata: {missing}")
    out["points"] = metadata["points_target"]
    out["masks"] = metadata["points_mask"]
    out["has_target"] = metadata["has_target"]
    return out


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """F1 of mask hits for present targets; for absent targets, 1.0 if the output says so."""
    predicted = parse_points(model_output)
    targets = _target_points(sample.get("points", []))
    masks = sample.get("masks", [])
    # Quirk: only the truthiness of has_target counts (the string "false" means present).
    has_target = sample.get("has_target", len(targets) > 0)
    score = precision = recall = 0.0
    if not has_target:
        # Quirk: a substring test on the raw output ("None found." is not recognized).
        score = 1.0 if _says_no_target(model_output) else 0.0
    elif targets and predicted:
        _check_assignment_size(len(predicted), len(targets))
        try:
            # Quirk: the mask tested is the one of the assigned target, not any mask that
            # holds the point; targets without a mask never count.
            hits = sum(
                1
                for pred_index, target_index in _assign(predicted, targets)
                if target_index < len(masks)
                and point_in_mask(predicted[pred_index], masks[target_index])
            )
            precision = hits / len(predicted)
            recall = hits / len(targets)
            total = precision + recall
            score = 2 * (precision * recall) / total if total > 0 else 0.0
        except SampleTimeout:
            raise  # the time budget must stay a recorded error, never a silent 0
        # Quirk: any failure in the matching scores 0 (precision/recall keep their values).
        except Exception:  # noqa: BLE001
            score = 0.0
    return {
        "score": score,
        "predicted_points": predicted,
        "ground_truth_points": targets,
        "has_target": has_target,
        "precision": precision,
        "recall": recall,
        "model_output": model_output,
    }


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean precision, recall and recomputed F1; no-target accuracy; parsing-failure rate."""
    if not predictions:
        return {}
    precisions: list[float] = []
    recalls: list[float] = []
    f1s: list[float] = []
    no_target: list[float] = []
    failures: list[float] = []
    for details in predictions:
        precision = details.get("precision", 0.0)
        recall = details.get("recall", 0.0)
        precisions.append(precision)
        recalls.append(recall)
        # Quirk: F1 is recomputed from precision/recall, so a correct no-target answer adds 0.
        f1s.append(_f1(precision, recall))
        if not details.get("has_target", True):
            no_target.append(1.0 if details.get("score", 0.0) >= 0.5 else 0.0)
        failed = details.get("has_target") and not details.get("predicted_points")
        failures.append(1.0 if failed else 0.0)
    return {
        "precision__PixmoPointsEval-Precision": float_sum(precisions) / len(precisions),
        "recall__PixmoPointsEval-Recall": float_sum(recalls) / len(recalls),
        "f1__PixmoPointsEval-F1": float_sum(f1s) / len(f1s),
        "accuracy__PixmoPointsEval-NoTargetAccuracy": (
            float_sum(no_target) / len(no_target) if no_target else 0.0
        ),
        "accuracy__PixmoPointsEval-ParsingFailureRate": float_sum(failures) / len(failures),
    }
