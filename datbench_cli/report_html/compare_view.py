"""Two runs on one page: the comparison's tables (numbers from ``datbench compare``'s JSON) and
the samples joined by id, with a "change" facet (right->wrong, wrong->right) and both sides'
views side by side."""

from __future__ import annotations

from typing import Any

from datbench_cli.compare.notes import p_text
from datbench_cli.report_html.blocks import number, percent, percent_text, text

_OK = {"correct", "pass"}
_BAD = {"incorrect", "fail"}


def change(a: str, b: str) -> str:
    """How one sample's result moved from run A to run B."""
    if a in _OK and b in _BAD:
        return "right->wrong"
    if a in _BAD and b in _OK:
        return "wrong->right"
    return "same" if a == b else f"{a}->{b}"


def joined(
    records_a: list[dict[str, Any]], records_b: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One record per id present in both runs (A's order); ``change`` lists how the result
    moved and ``different`` when the result or any sort number (the score) differs."""
    index_b = {r["id"]: r for r in records_b}
    out = []
    for a in records_a:
        b = index_b.get(a["id"])
        if b is None:
            continue
        moved = change(a["f"].get("result", ""), b["f"].get("result", ""))
        facets = {k: v for k, v in a["f"].items() if k != "result"}
        facets["result_a"] = a["f"].get("result", "")
        facets["result_b"] = b["f"].get("result", "")
        scores_differ = a["n"] != b["n"]
        facets["change"] = (
            [moved] if moved == "same" and not scores_differ else [moved, "different"]
        )
        numbers = {f"{k}_a": v for k, v in a["n"].items()}
        numbers.update({f"{k}_b": v for k, v in b["n"].items()})
        out.append({"id": a["id"], "f": facets, "n": numbers, "va": a["v"], "vb": b["v"]})
    return out


def facets(run_facets: list[dict[str, Any]], result_label: str) -> list[dict[str, Any]]:
    """The run page's facets, result split per side, and the change between them."""
    out = [f for f in run_facets if f["key"] != "result"]
    out.append({"key": "change", "label": "Change A->B"})
    out.append({"key": "result_a", "label": f"{result_label} A"})
    out.append({"key": "result_b", "label": f"{result_label} B"})
    return out


def sorts(run_sorts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run sort, for A and for B."""
    return [
        dict(s, key=f"{s['key']}_{side}", label=f"{s['label']} ({side.upper()})")
        for s in run_sorts
        for side in ("a", "b")
    ]


def _ci(value: Any) -> str:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(number(v) is not None for v in value)
    ):
        return f"[{percent_text(value[0], True)}, {percent_text(value[1], True)}]"
    return text(value)


def comparison_tables(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """``datbench compare``'s tables as page tables (every number as the JSON has it; means
    and differences shown in percent, the fraction kept beside)."""
    labels = {m.get("key"): m.get("label", m.get("key")) for m in comparison.get("metrics") or []}
    out = []
    for table in comparison.get("tables") or []:
        rows = []
        group = table.get("group")
        for row in table.get("rows") or []:
            for key, m in (row.get("metrics") or {}).items():
                name = row.get("name")
                test = m.get("mcnemar") or m.get("sign_test")
                mcnemar = test if isinstance(test, dict) else {}
                flips = m.get("flips") if isinstance(m.get("flips"), dict) else {}
                rows.append(
                    [
                        {"t": text(name), "facet": group, "value": name} if group else text(name),
                        row.get("n"),
                        labels.get(key, key),
                        percent(m.get("a")),
                        percent(m.get("b")),
                        percent(m.get("difference"), signed=True),
                        _ci(m.get("ci95")),
                        _p_cell(mcnemar.get("p_holm", m.get("p_holm"))),
                        "yes" if m.get("significant") else "no",
                        ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in flips.items()),
                    ]
                )
        out.append(
            {
                "title": text(table.get("title")),
                "cols": [
                    "row",
                    "n",
                    "metric",
                    "A",
                    "B",
                    "B - A",
                    "95% interval",
                    "p (Holm)",
                    "significant",
                    "flips",
                ],
                "rows": rows,
            }
        )
    return out


def headline_table(head_a: list[dict[str, Any]], head_b: list[dict[str, Any]]) -> dict[str, Any]:
    """Each report's own headline numbers side by side (no statistic computed here)."""
    index_b = {h["key"]: h for h in head_b}
    rows = [
        [
            h["label"],
            percent(h.get("value")),
            percent((index_b.get(h["key"]) or {}).get("value")),
        ]
        for h in head_a
    ]
    return {
        "title": "Headline numbers (each run's report)",
        "cols": ["metric", "A", "B"],
        "rows": rows,
    }


def _p_cell(value: Any) -> Any:
    """A p-value as the terminal shows it (0.0000 hid 9.5e-07); anything else as it is."""
    return p_text(value) if isinstance(value, float) else value
