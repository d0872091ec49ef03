"""What a comparison says besides its tables: the join, each side's warnings, the data check,
the profiles and the gate; the terminal prints these lines and the comparison page shows them
(each escapes them its own way)."""

from __future__ import annotations

from typing import Any

from datbench_cli.errors import name_ids


def p_text(value: float | None) -> str:
    """A p-value as the terminal and the page show it: three decimals, or its order of
    magnitude below 0.001 (never "0.0000")."""
    if value is None:
        return "-"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.0e}"


def points(value: float | None, signed: bool = False) -> str:
    """A fraction as percentage points with one decimal (``-`` when absent); a difference
    that rounds to zero reads ``+0.0``, never ``-0.0`` (two equal means can differ by a
    float's last bit)."""
    if value is None:
        return "-"
    shown = round(value * 100, 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{shown:+.1f}" if signed else f"{shown:.1f}"


def comparison_notes(comparison: dict[str, Any]) -> list[str]:
    """The join, the data check, what the columns mean, and the gate."""
    join, data = comparison["join"], comparison["data"]
    a, b, profiles = comparison["a"], comparison["b"], comparison["profiles"]
    notes = [f"A: {a['path']} ({a['profile']} profile)  B: {b['path']} ({b['profile']} profile)"]
    for label, side in (("A", a), ("B", b)):
        for warning in side.get("warnings", []):
            notes.append(f"{label}'s report: {warning}")
    if not profiles["same"] and profiles["same_inputs"]:
        notes.append(
            "same responses and judge verdicts scored with two profiles: every difference "
            "in these tables is what the corrections change (docs/known-defects.md)"
        )
    elif not profiles["same"]:
        notes.append(
            "the runs were scored with different profiles: differences mix the corrections "
            "with any change of responses"
        )
    line = f"{join['paired']} sample(s) in both runs"
    for key, label in (("only_in_a_ids", "only in A"), ("only_in_b_ids", "only in B")):
        if join[key]:
            shown = name_ids([str(i) for i in join[key]])
            line += f"; {len(join[key])} {label} (not compared): {shown}"
    notes.append(line)
    if data["differences"]:
        differences = "; ".join(map(str, data["differences"]))
        notes.append(f"different exports, compared on request: {differences}")
    elif not data["verified"]:
        notes.append(
            "could not verify that both runs used the same export (no manifest or provenance "
            "on both sides); compare run directories to check"
        )
    gate = comparison.get("gate")
    if gate is not None:
        verdict = "FAIL" if gate["failed"] else "pass"
        notes.append(f"gate ({verdict}): {gate['rule']}")
        for row in gate["failing"]:
            where = "overall" if row["table"] == "overall" else f"{row['table']}: {row['row']}"
            notes.append(
                f"  {where}: {row['metric']} upper bound {points(row['upper'], True)} points"
            )
    return notes
