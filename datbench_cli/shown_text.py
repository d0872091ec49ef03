"""Untrusted text made safe to show (dataset names and ids, model and judge output, file
names, foreign reports' fields): control, bidirectional and invisible characters escaped, a very
long text cut in the middle saying how much. Used by the terminal output and by the pages; no
terminal library here."""

from __future__ import annotations

import re

# The longest untrusted text a message shows whole (a table cell: MAX_CELL_CHARS, far longer
# than any number), and the share of a longer one's end that is kept (where a message says
# what to do).
MAX_LINE_CHARS = 4000
MAX_CELL_CHARS = 200
_TAIL_SHARE = 4


def shortened(
    text: str,
    limit: int = MAX_LINE_CHARS,
    *,
    tail: int | None = None,
    note: str = " ... ({} characters not shown) ... ",
) -> str:
    """``text`` when at most ``limit`` characters, else its start and its last ``tail``
    characters (a quarter of ``limit`` by default), ``limit`` in all, around ``note`` saying
    how many are not shown (a 10 MB id or model name in a message, a looping output on a
    page)."""
    if len(text) <= limit:
        return text
    kept_tail = limit // _TAIL_SHARE if tail is None else tail
    return text[: limit - kept_tail] + note.format(len(text) - limit) + text[-kept_tail:]


# C0 and C1 controls but tab and newline, DEL, the Unicode line separators and bidirectional
# controls (embeddings, overrides, isolates and the marks ALM, LRM and RLM), and the characters
# that show nothing (soft hyphen, zero-width space, joiners, word joiner and invisible
# operators, byte order mark, annotation marks, tag characters): each can disguise what a
# terminal shows ("gpt-4o" and "gpt-4o" + U+200B look alike); and lone surrogates (a file or
# folder name that is not UTF-8, as Python decodes it), which no UTF-8 stream can write.
CONTROL_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)
_CELL_CONTROL_RE = re.compile("[\n\t]|" + CONTROL_RE.pattern)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def json_escaped(match: re.Match[str]) -> str:
    """A character as a JSON ``\\u`` escape (a surrogate pair beyond the first plane)."""
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def plain(text: str, *, one_line: bool = False, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``); ``one_line``
    escapes newlines and tabs too (table cells) and cuts a text over ``limit`` characters in
    the middle (:func:`shortened`)."""
    if not one_line:
        return CONTROL_RE.sub(_escaped, text)
    return _CELL_CONTROL_RE.sub(_escaped, shortened(text, limit))
