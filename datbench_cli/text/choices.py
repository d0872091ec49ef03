"""Multiple-choice letter parsing shared by the MCQ scorers (the reference's MMMU-style parser).

The reference repeats one algorithm in several scorer modules (ai2d, mmbench, mmmu, mmmupro,
logicvista): an optional explicit answer line, then a candidate search over the choice letters
("(X)", "X ", "X.", then option texts), then a last-mention tie-break. It lives here once; each
scorer supplies its own choice letters and option texts. There is no random guessing anywhere:
the reference's scoring path never imports its random-guessing MMMU copy (``mmmu_eval.py``).

Choice letters and option texts come from row metadata and are used exactly as the reference uses
them (iterated, formatted, ``str.lower``-ed), so malformed metadata fails with the reference's
exception types and messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from datbench_cli.text.extract import extract_final_answer

# The reference strips each of these characters from both ends, one after the other.
_TRIM_ORDER = (",", ".", "!", "?", ";", ":", "'")
# More whitespace tokens than this (padded text) enables matching by option text.
_CONTENT_MIN_TOKENS = 5

ANSWER_LINE_A_TO_E = re.compile(r"^(?:final\s+answer|answer)\s*:\s*([A-E])\b", re.IGNORECASE)
ANSWER_LINE_A_TO_H = re.compile(r"^(?:final\s+answer|answer)\s*:\s*([A-H])\b", re.IGNORECASE)


def lettered_choices(texts: Any, limit: int | None = None) -> tuple[list[str], dict[str, Any]]:
    """Letters ``A, B, ...`` for option texts (at most ``limit``) and the letter -> text map."""
    count = len(texts) if limit is None else min(len(texts), limit)
    letters = [chr(ord("A") + i) for i in range(count)]
    return letters, dict(zip(letters, texts, strict=False))


def choices_from_options(options: Iterable[Any]) -> tuple[dict[str, str], list[str]]:
    """The mmbench/mmmupro rebuild: ``(letter -> str(option), letters)`` in option order.

    Quirk: a string is iterated character by character, each character becoming an option.
    """
    index2ans: dict[str, str] = {}
    all_choices: list[str] = []
    for position, option in enumerate(options):
        letter = chr(ord("A") + position)
        index2ans[letter] = str(option)
        all_choices.append(letter)
    return index2ans, all_choices


def answer_line_letter(response: object, pattern: re.Pattern[str]) -> str | None:
    """The upper-cased letter of the last non-empty line matching ``pattern`` (from its start).

    The letter is not checked against the choices.
    """
    lines = [line.strip() for line in str(response).splitlines() if line.strip()]
    for line in reversed(lines):
        match = pattern.match(line)
        if match:
            return match.group(1).upper()
    return None


def letter_in_extracted(extracted: str, all_choices: Any) -> Any:
    """mmbench/mmmupro: a bare choice letter, else the first letter of the choice class, or None.

    Quirk: the class is built as ``[A|B|C]``, so ``|`` is a member and can be "predicted".
    """
    if len(extracted) == 1 and extracted in all_choices:
        return extracted
    match = re.search(rf"\b([{'|'.join(all_choices)}])\b", extracted)
    return match.group(1) if match else None


def pad_response(response: Any) -> str:
    """Trim the punctuation runs the reference removes, then pad with one space each side.

    Quirk: each character is stripped once in turn, so a later one can hide an earlier one
    (``"B.!"`` -> ``"B."``); whitespace is not stripped.
    """
    for char in _TRIM_ORDER:
        response = response.strip(char)
    return " " + response + " "


def candidate_letter(padded: str, all_choices: Iterable[Any], index2ans: Any) -> Any:
    """The MMMU candidate parser over an already padded response; ``None`` when nothing matches.

    Stages, each only if the previous found nothing: ``(X)``; ``X `` (Quirk: no leading space
    needed, so "NASA is" yields A); ``X.``; option text contained in a response of more than five
    tokens. Several candidates: the one mentioned last wins, the first listed on ties.
    """
    choices = list(all_choices)
    candidates = [c for c in choices if f"({c})" in padded]
    stage = "bracket"
    if not candidates:
        stage = "letter"
        candidates = [c for c in choices if f"{c} " in padded]
    if not candidates:
        candidates = [c for c in choices if f"{c}." in padded]
    lowered = ""
    if not candidates and len(padded.split()) > _CONTENT_MIN_TOKENS:
        stage = "content"
        lowered = padded.lower()
        # Quirk: an empty option text is contained in every response.
        candidates = [c for c, text in index2ans.items() if text.lower() in lowered]
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    if stage == "content":
        positions = [lowered.rfind(index2ans[c].lower()) for c in candidates]
    elif stage == "bracket":
        positions = [padded.rfind(f"({c})") for c in candidates]
    else:
        # Quirk: candidates found as "X " / "X." without a leading space get position -1.
        positions = [padded.rfind(f" {c} ") for c in candidates]
    best = max(range(len(positions)), key=positions.__getitem__)  # first maximum wins
    return candidates[best]


def mmbench_style_letter(response: Any, all_choices: Any, index2ans: Any) -> Any:
    """mmbench/mmmupro parsing: letter in the extracted final answer, else the candidate parser.

    The caller has already returned ``None`` when there are no choices. A non-string response
    gives an empty (unpadded) text to the candidate parser, as in the reference.
    """
    extracted = extract_final_answer(str(response)).strip().upper()
    letter = letter_in_extracted(extracted, all_choices)
    if letter is not None:
        return letter
    padded = pad_response(response) if isinstance(response, str) else ""
    return candidate_letter(padded, all_choices, index2ans)
