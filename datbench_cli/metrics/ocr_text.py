"""Text primitives shared by the OCR scorers (CC-OCR, OCRBench v2).

Everything here runs in linear time on untrusted model output: the reference's lazy and greedy
box patterns are replaced by ``str.find`` scans that select exactly the same span.
"""

from __future__ import annotations

PIPE_BOX_OPEN = "<|begin_of_box|>"
PIPE_BOX_CLOSE = "<|end_of_box|>"

# U+FF01..U+FF5E (full-width ASCII forms) -> U+0021..U+007E, and the ideographic space -> " ".
_HALFWIDTH_TABLE = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def to_halfwidth(text: str) -> str:
    """Fold full-width ASCII forms and the ideographic space to their ASCII counterparts."""
    return text.translate(_HALFWIDTH_TABLE)


def first_pipe_box(text: str) -> str | None:
    """Content of the first ``<|begin_of_box|>...<|end_of_box|>`` block, or ``None``.

    Same span as the lazy DOTALL regex: the first opening marker that has a closing marker after
    it (if the first has none, no later one can), up to the nearest closing marker.
    """
    start = text.find(PIPE_BOX_OPEN)
    if start == -1:
        return None
    body = start + len(PIPE_BOX_OPEN)
    end = text.find(PIPE_BOX_CLOSE, body)
    if end == -1:
        return None
    return text[body:end]
