"""The browser's records in their compact embedded form (one pass, after the views).

Facet values become indices into one table per facet (``facets[i].values``), sort numbers a
list in the order of ``sorts``, block headings indices into ``headings``: 45,000 samples then
cost their own text and a few bytes each, not their key names again and again.
"""

from __future__ import annotations

from typing import Any

from datbench_cli.shown_text import shortened

# The longest text one block, key/value row or table cell shows whole: a model looping to its
# token limit writes 100 KB to 1 MB, and the page holds every sample. A longer text keeps its
# start and end around a note saying what is cut (the report holds it whole).
MAX_SHOWN_CHARS = 20_000
_TAIL_CHARS = 4_000
_CUT_NOTE = "\n[... {} characters not shown here; the report holds the whole text ...]\n"


def cut(value: Any) -> Any:
    """``value``, or when a string over :data:`MAX_SHOWN_CHARS` characters, its start and end
    around a line saying how many characters the page leaves out."""
    if not isinstance(value, str):
        return value
    return shortened(value, MAX_SHOWN_CHARS, tail=_TAIL_CHARS, note=_CUT_NOTE)


def _cell(value: Any) -> Any:
    if isinstance(value, dict) and "t" in value:
        return dict(value, t=cut(value["t"]))
    return cut(value)


def _headings(blocks: list[dict[str, Any]], table: dict[str, int]) -> list[dict[str, Any]]:
    """The blocks with each heading an index into ``table`` and every text cut to
    :data:`MAX_SHOWN_CHARS` (in place: every block belongs to the one record being encoded)."""
    for b in blocks:
        b["h"] = table.setdefault(b["h"], len(table))
        if "t" in b:
            b["t"] = cut(b["t"])
        for row in b.get("kv", ()):
            row[1] = cut(row[1])
        for row in b["tbl"]["r"] if "tbl" in b else ():
            row[:] = [_cell(c) for c in row]
        if "sub" in b:
            _headings(b["sub"], table)
    return blocks


def encode(browser: dict[str, Any]) -> dict[str, Any]:
    """``browser`` with ``records`` in the compact form the page reads."""
    facets = browser["facets"]
    sorts = browser["sorts"]
    values: list[dict[str, int]] = [{} for _ in facets]
    headings: dict[str, int] = {}
    records = []
    for record in browser["records"]:
        indices: list[Any] = []
        for table, facet in zip(values, facets, strict=True):
            value = record["f"].get(facet["key"], "")
            if isinstance(value, list):
                indices.append([table.setdefault(v, len(table)) for v in value])
            else:
                indices.append(table.setdefault(value, len(table)))
        out: dict[str, Any] = {
            "id": record["id"],
            "f": indices,
            "n": [record["n"].get(s["key"]) for s in sorts],
        }
        for side in ("v", "va", "vb"):
            if side in record:
                out[side] = _headings(record[side], headings)
        records.append(out)
    return {
        "unit": browser.get("unit", "sample"),
        "line": browser.get("line"),
        "failure": browser.get("failure"),
        "facets": [dict(f, values=list(t)) for f, t in zip(facets, values, strict=True)],
        "sorts": sorts,
        "headings": list(headings),
        "records": records,
    }
