"""The Levenshtein distance every edit-distance metric uses (ANLS, CC-OCR, OCRBench v2, TEDS)."""

from __future__ import annotations

from collections.abc import Callable

# rapidfuzz's distance, imported on the first call (not at start-up) and kept: an import
# statement inside the function cost more than the distance itself (about 1 µs a call,
# half a million calls in a 20,000-sample run).
_distance: list[Callable[[str, str], int]] = []


def levenshtein(first: str, second: str) -> int:
    """Unit-cost insert/delete/substitute distance over code points (``rapidfuzz``'s, which has
    one value whatever the algorithm, so it equals the reference's pure-Python loops)."""
    if not _distance:
        from rapidfuzz.distance import Levenshtein

        _distance.append(Levenshtein.distance)
    return _distance[0](first, second)
