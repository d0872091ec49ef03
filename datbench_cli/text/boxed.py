r"""Every ``\boxed{...}`` finder the scorers use: one function per reference regex (or scan).

Each returns exactly what the named reference expression returns, but scans with ``str.find``
so that hostile output (a million backslashes, unclosed ``\boxed{`` runs) costs linear time;
the regexes themselves backtrack quadratically there. ``tests/text/test_boxed.py`` checks each
function against its regex on random inputs.
"""

from __future__ import annotations

import re

from datbench_cli.text.scan import require_text

BOXED_OPEN = "\\boxed{"
_BOX_WORD = "boxed{"
_LETTER_BODY_RE = re.compile(r"\s*([A-E])\s*\}")
_BRACE_RE = re.compile(r"[{}]")
_ANY_CASE_LETTER_BODY_RE = re.compile(r"\s*([A-Ea-e])\s*\}")


def last_boxed(text: str) -> str | None:
    r"""Group 1 of the last ``re.finditer(r"\\+boxed\{([^}]+)\}", text)`` match, or ``None``.

    The final-answer extractor's rule (``erma_utils``). Quirk: braces are not balanced, so
    ``\boxed{\frac{1}{2}}`` gives ``\frac{1``; an empty ``\boxed{}`` is skipped.
    """
    last = None
    pos = 0  # where finditer would resume
    at = text.find(_BOX_WORD)
    while at != -1:
        if at - 1 >= pos and text[at - 1] == "\\":
            start = at + len(_BOX_WORD)
            close = text.find("}", start)
            if close == -1:
                break  # no "}" left: no later match either
            if close > start:
                last = text[start:close]
                pos = close + 1
                at = text.find(_BOX_WORD, pos)
                continue
        at = text.find(_BOX_WORD, at + 1)
    return last


def all_boxed(text: str) -> list[str]:
    r"""``re.findall(r"\\+boxed\{([^}]*)\}", text)`` (PixMo points, RefCOCO boxes).

    Every match holds the literal ``\boxed{`` (the last backslash of its run), and its content
    runs to the next ``}``; matches do not overlap, so the scan resumes after that brace. When an
    opening has no closing brace after it, no later opening has one either. A non-string raises
    the ``TypeError`` that ``re`` raises.
    """
    require_text(text)
    found: list[str] = []
    position = 0
    while True:
        start = text.find(BOXED_OPEN, position)
        if start < 0:
            return found
        content_start = start + len(BOXED_OPEN)
        end = text.find("}", content_start)
        if end < 0:
            return found
        found.append(text[content_start:end])
        position = end + 1


def greedy_boxed(text: str) -> str | None:
    r"""The greedy box: from the first ``\boxed{`` to the LAST ``}`` of the text, or ``None``.

    Reproduces two reference regexes, which select the same span:
    ``re.search(r"\\boxed\{(.*)\}", text, re.DOTALL).group(1)`` (CC-OCR document parsing) and
    ``re.findall(r"\\+boxed\{(.*)\}", text, re.S)[-1]`` (MathVision's ``find_math_answer``:
    the leftmost match runs to the last ``}``, so it is the only one). When no ``}`` follows the
    first opening, no later opening matches either.
    """
    start = text.find(BOXED_OPEN)
    if start == -1:
        return None
    body = start + len(BOXED_OPEN)
    end = text.rfind("}")
    if end < body:
        return None
    return text[body:end]


def balanced_boxed(text: str) -> str | None:
    r"""CC-OCR KIE's scan (a loop, not a regex): from the first ``\boxed{`` to the ``}`` that
    brings the brace count back to 0 (braces counted naively, inside strings too), or ``None``."""
    start = text.find(BOXED_OPEN)
    if start == -1:
        return None
    body = start + len(BOXED_OPEN)
    depth = 1
    for brace in _BRACE_RE.finditer(text, body):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return text[body : brace.start()]
    return None


def boxed_letter(text: str) -> str | None:
    r"""Group 1 of ``re.search(r"\\+boxed\{\s*([A-E])\s*\}", text)``, or ``None`` (MathVista's
    multiple-choice parser).

    A match begins in the backslash run before some ``\boxed{``, so the leftmost match is the
    first ``\boxed{`` whose body matches ``\s*([A-E])\s*\}``.
    """
    return _first_boxed_body(text, _LETTER_BODY_RE)


def boxed_letter_any_case(text: str) -> str | None:
    r"""Group 1 of ``re.search(r"\\+boxed\{\s*([A-Ea-e])\s*\}", text)``, or ``None``: the
    upstream fix of MME-RealWorld's boxed pattern (datologyai/DatBench PR #3), used by its
    corrected profile. Same scan as :func:`boxed_letter`."""
    return _first_boxed_body(text, _ANY_CASE_LETTER_BODY_RE)


def _first_boxed_body(text: str, body: re.Pattern[str]) -> str | None:
    """Group 1 of ``body`` matched right after the first ``\\boxed{`` where it matches."""
    require_text(text)
    at = text.find(BOXED_OPEN)
    while at != -1:
        found = body.match(text, at + len(BOXED_OPEN))
        if found:
            return found.group(1)
        at = text.find(BOXED_OPEN, at + 1)
    return None
