"""The page data's small vocabulary, shared by the views.

A record (one sample or task in the browser) is ``{"id", "f": facets, "n": sort numbers,
"v": blocks}``; a block is ``{"h": heading}`` plus one of ``t`` (text; ``s``: searchable),
``img`` (sources), ``kv`` (key/value rows), ``tbl`` (``{"c": columns, "r": rows}``) or ``sub``
(nested blocks). A table cell is a value, ``{"t": text, "facet": key, "value": v}`` (a link
that filters the browser) or ``{"p": fraction}`` (shown in percent, the one unit of the page;
``"s": 1`` signed). Everything the page shows as text is set as text.
"""

from __future__ import annotations

from typing import Any

from datbench_cli.files import jsonio


def text(value: Any) -> str:
    """A value as the text a block shows (JSON for anything that is not a string)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return jsonio.dumps(value).decode()


def block(heading: str, value: Any, searchable: bool = False) -> dict[str, Any] | None:
    """A text block, or ``None`` when there is nothing to show."""
    shown = text(value)
    if shown == "":
        return None
    out: dict[str, Any] = {"h": heading, "t": shown}
    if searchable:
        out["s"] = 1
    return out


def kv(heading: str, mapping: dict[str, Any]) -> dict[str, Any] | None:
    """A key/value block of a mapping (values as text), or ``None`` when it is empty."""
    rows = [[str(k), text(v)] for k, v in mapping.items()]
    return {"h": heading, "kv": rows} if rows else None


def link(shown: Any, facet: str, value: Any) -> dict[str, Any]:
    """A table cell that filters the browser to ``facet == value`` when clicked."""
    return {"t": text(shown), "facet": facet, "value": value}


def percent(value: Any, signed: bool = False) -> Any:
    """A fraction as a percent cell (the fraction itself stays in the data); anything that is
    not a number as it is."""
    if number(value) is None:
        return value
    return {"p": value, "s": 1} if signed else {"p": value}


def percent_text(value: float, signed: bool = False) -> str:
    """A fraction as the page writes it: ``61.18%`` (``+3.29%`` signed; never ``-0.00%``)."""
    shown = round(value * 100, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{shown:+.2f}%" if signed else f"{shown:.2f}%"


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else empty (a hand-edited or foreign report)."""
    return value if isinstance(value, dict) else {}


def listed(value: Any) -> list[Any]:
    """``value`` when it is a list, else empty (a hand-edited or foreign report)."""
    return value if isinstance(value, list) else []


def number(value: Any) -> float | None:
    """``value`` when it is a real number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def interval(value: Any) -> list[float] | None:
    """A ``[low, high]`` pair of numbers, or ``None``."""
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = number(value[0]), number(value[1])
        if low is not None and high is not None:
            return [low, high]
    return None


def flatten(mapping: Any, prefix: str = "") -> list[list[str]]:
    """Nested mappings as ``[dotted.key, text]`` rows (lists stay JSON text)."""
    rows: list[list[str]] = []
    if not isinstance(mapping, dict):
        return rows
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, f"{name}."))
        else:
            rows.append([name, text(value)])
    return rows


def compact(blocks: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The blocks that have something to show."""
    return [b for b in blocks if b is not None]
