"""Boxes, points and masks in normalized [0, 1] image coordinates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def clamp_unit(value: float) -> float:
    """``value`` clamped to [0, 1].

    The argument order matters and is the reference's: ``-0.0`` becomes ``0.0`` and ``nan``
    becomes ``1.0``.
    """
    return max(0.0, min(1.0, value))


def box_iou(first: Sequence[float], second: Sequence[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes; 0.0 when the union is empty.

    Inverted boxes have zero area. The operations run in the reference's order so the float
    result is bit-identical.
    """
    left = max(first[0], second[0])
    top = max(first[1], second[1])
    right = min(first[2], second[2])
    bottom = min(first[3], second[3])
    inter = max(0.0, right - left) * max(0.0, bottom - top)
    area_first = max(0.0, first[2] - first[0]) * max(0.0, first[3] - first[1])
    area_second = max(0.0, second[2] - second[0]) * max(0.0, second[3] - second[1])
    union = area_first + area_second - inter
    return inter / union if union > 0 else 0.0


def center_inside(box: Sequence[float], other: Sequence[float]) -> bool:
    """Whether the centre of ``other`` lies in ``box`` (edges included)."""
    center_x = 0.5 * (other[0] + other[2])
    center_y = 0.5 * (other[1] + other[3])
    return box[0] <= center_x <= box[2] and box[1] <= center_y <= box[3]


def point_in_mask(point: Sequence[float], mask: Any) -> bool:
    """Whether a normalized ``(x, y)`` point falls on a truthy cell of ``mask[row][col]``.

    The cell is found by truncating ``x * width`` and ``y * height``; a point on the far edge
    (coordinate 1.0) is outside, as is any point when the mask or its first row is empty.
    """
    if not mask or not mask[0]:
        return False
    height = len(mask)
    width = len(mask[0])
    col = int(point[0] * width)
    row = int(point[1] * height)
    if row < 0 or row >= height or col < 0 or col >= width:
        return False
    return bool(mask[row][col])


def distance_matrix(points: Sequence[Sequence[float]], targets: Sequence[Sequence[float]]) -> Any:
    """``D[i][j]`` = Euclidean distance from ``points[i]`` to ``targets[j]`` (a NumPy array).

    Computed elementwise as ``sqrt(dx*dx + dy*dy)`` in float64, bit-identical to doing it one
    pair at a time with Python floats.
    """
    import numpy as np

    point_array = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    target_array = np.asarray(targets, dtype=np.float64).reshape(-1, 2)
    squared = np.subtract.outer(point_array[:, 0], target_array[:, 0])
    np.multiply(squared, squared, out=squared)
    dy = np.subtract.outer(point_array[:, 1], target_array[:, 1])
    np.multiply(dy, dy, out=dy)
    np.add(squared, dy, out=squared)
    del dy
    return np.sqrt(squared, out=squared)
