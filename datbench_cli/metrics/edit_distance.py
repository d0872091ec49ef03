"""The Levenshtein distance every edit-distance metric uses (ANLS, CC-OCR, OCRBench v2, TEDS)."""

from __future__ import annotations


def levenshtein(first: str, second: str) -> int:
    """Unit-cost insert/delete/substitute distance over code points (``rapidfuzz``'s, which has
    one value whatever the algorithm, so it equals the reference's pure-Python loops)."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(first, second)
