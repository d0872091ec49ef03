"""The MATH-benchmark answer normaliser in the variant MathVision's reference uses.

``strip_string`` differs from the original MATH code in one place: the ``\\frac`` repair runs
only when the text contains ``sqrt``. Every step is a plain string operation.
"""

from __future__ import annotations

SQRT = "\\sqrt"
FRAC = "\\frac"

# (old, new) replacements applied in order before the unit cut.
_LEADING_REPLACEMENTS = (
    ("\n", ""),
    ("\\!", ""),
    ("\\\\", "\\"),
    ("tfrac", "frac"),
    ("dfrac", "frac"),
    ("\\left", ""),
    ("\\right", ""),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("\\$", ""),
    ("$", ""),
)


def fix_sqrt(text: str) -> str:
    """Brace the single character after each ``\\sqrt`` that lacks braces (``\\sqrt2``)."""
    head, *pieces = text.split(SQRT)
    parts = [head]
    for piece in pieces:
        if piece and piece[0] != "{":
            parts.append(SQRT + "{" + piece[0] + "}" + piece[1:])
        else:
            parts.append(SQRT + piece)
    return "".join(parts)


def fix_fracs(text: str) -> str:
    """Brace the two characters after each brace-less ``\\frac``; give up on a short tail."""
    head, *pieces = text.split(FRAC)
    parts = [head]
    for piece in pieces:
        parts.append(FRAC)
        if piece and piece[0] == "{":
            parts.append(piece)
            continue
        if len(piece) < 2:
            return text
        first, second, rest = piece[0], piece[1], piece[2:]
        if second == "{":
            parts.append("{" + first + "}" + second + rest)
        else:
            parts.append("{" + first + "}{" + second + "}" + rest)
    return "".join(parts)


def fix_a_slash_b(text: str) -> str:
    """``a/b`` of two canonical integers becomes ``\\frac{a}{b}``; anything else is kept."""
    pieces = text.split("/")
    if len(pieces) != 2:
        return text
    try:
        numerator, denominator = int(pieces[0]), int(pieces[1])
    except ValueError:
        return text
    if text != f"{numerator}/{denominator}":
        return text
    return "\\frac{" + str(numerator) + "}{" + str(denominator) + "}"


def _right_of_single(text: str, separator: str) -> str:
    pieces = text.split(separator)
    return pieces[-1] if len(pieces) == 2 else text


def strip_string(text: str) -> str:
    """Normalise a LaTeX answer string (MATH ``_strip_string``, MathVision variant)."""
    for old, new in _LEADING_REPLACEMENTS:
        text = text.replace(old, new)
    text = text.split("\\text{ ")[0]  # drop trailing units written as "\text{ cm}"
    text = text.replace("\\%", "")  # Quirk: "10\%" becomes 10, never equal to a gold 0.1
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    text = _right_of_single(text, "=")
    text = _right_of_single(text, "\\approx")
    if "sqrt" in text:
        text = fix_sqrt(text)
    text = text.replace(" ", "")
    # Quirk: the \frac repair runs only when "sqrt" occurs, so "\frac12" stays as it is.
    if "sqrt" in text:
        text = fix_fracs(text)
    if text == "0.5":
        text = "\\frac{1}{2}"
    return fix_a_slash_b(text)
