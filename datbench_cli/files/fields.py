"""The one rule for a field of an input file that holds the wrong JSON type: which types a
field may hold, and the sentence that says it does not (``"split" must be a string, got 5``).

Readers give their own table of fields (no benchmark knowledge here) and raise the
:class:`InputError` naming their file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

#: The JSON types a field may hold, as Python types (``NULL`` for null).
NULL = type(None)
STRING: tuple[type, ...] = (str,)
OBJECT: tuple[type, ...] = (dict,)
NUMBER: tuple[type, ...] = (int, float)

_WORDS = {
    str: "a string",
    dict: "an object",
    list: "a list",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    NULL: "null",
}
_SHOWN = 40


def _expected(kinds: tuple[type, ...]) -> str:
    words = list(dict.fromkeys(_WORDS[kind] for kind in kinds))
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def _holds(value: Any, kinds: tuple[type, ...]) -> bool:
    # true and false are no numbers, though Python's bool is an int.
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def wrong_type(record: Mapping[str, Any], rules: Mapping[str, tuple[type, ...]]) -> str | None:
    """The sentence for the first field of ``record`` named in ``rules`` whose value is of none
    of its types (an absent field is left to the reader), else ``None``."""
    for name, kinds in rules.items():
        if name in record and not _holds(record[name], kinds):
            shown = jsonio.dumps(record[name]).decode()
            shown = shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."
            return f'"{name}" must be {_expected(kinds)}, got {shown}'
    return None


def check_line(
    record: Mapping[str, Any], rules: Mapping[str, tuple[type, ...]], path: Path, line: int
) -> None:
    """:func:`wrong_type` of line ``line`` of a JSONL file, as an :class:`InputError`."""
    problem = wrong_type(record, rules)
    if problem is not None:
        raise InputError(problem, path, line)


def check_document(
    document: Mapping[str, Any], rules: Mapping[str, tuple[type, ...]], path: Path, hint: str
) -> None:
    """:func:`wrong_type` of a JSON document's top-level fields, as an :class:`InputError`
    naming the line of the field (``hint``: how to make the file again)."""
    problem = wrong_type(document, rules)
    if problem is not None:
        name = problem.split('"', 2)[1]
        raise InputError(problem, path, line_of_key(path, name), hint=hint)


# A JSON string, or a bracket: what the depth of a key is told from.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:?|[{}\[\]]')


def line_of_key(path: Path, name: str) -> int | None:
    """The line of the last top-level ``"name":`` in ``path`` (the one a JSON reader keeps),
    or ``None`` when it cannot be told (read only to say where an error is)."""
    try:
        data = jsonio.read_bounded(path)
    except InputError:
        return None
    key = jsonio.dumps(name)
    depth, found = 0, None
    for token in _TOKEN.finditer(data):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and text.endswith(b":") and text[:-1].rstrip() == key:
            found = token.start()
    return data.count(b"\n", 0, found) + 1 if found is not None else None
