"""The terminal view of a comparison: one table per grouping, from the comparison data
alone (no statistics computed here); the lines under it are :mod:`datbench_cli.compare.notes`."""

from __future__ import annotations

from typing import Any

from datbench_cli.benchmarks.common import mdd_points
from datbench_cli.cli.tables import TextTable
from datbench_cli.compare.notes import p_text, points


def _difference(block: dict[str, Any]) -> str:
    low, high = block["ci95"]
    return f"{points(block['difference'], True)} [{points(low, True)}, {points(high, True)}]"


def comparison_tables(comparison: dict[str, Any]) -> list[TextTable]:
    """A table per grouping: both means (percent), B - A with its 95% paired-bootstrap
    interval (points), McNemar's b/c and Holm-adjusted p, MDD80, and * on significant rows;
    MDD80, b/c and p go first when the width is short."""
    metrics = comparison["metrics"]
    headers = ["group", "n"]
    optional: list[int] = []
    for metric in metrics:
        label = metric["label"]
        headers += [f"{label} A", f"{label} B", f"Δ {label} [95%]"]
        if metric["exact_test"]:
            optional.append(len(headers) + 1)  # p Holm dropped last
            optional.append(len(headers))
            headers += ["b/c", "p Holm"]
        optional.append(len(headers))
        headers.append("MDD80")
    headers.append("sig")
    settings = comparison["settings"]
    legend = [
        (
            "sig",
            "percent; sig * = significant (Holm p < 0.05: McNemar's exact test, or the exact "
            "sign test where there are no 0/1 outcomes)",
        ),
        *(
            (
                f"Δ {m['label']} [95%]",
                "Δ = B - A in points with its 95% paired-bootstrap interval "
                f"({settings['resamples']} resamples, seed {settings['seed']})",
            )
            for m in metrics
        ),
        ("b/c", "b/c = right->wrong / wrong->right (McNemar exact)"),
        ("p Holm", "p Holm = McNemar's p, Holm-adjusted per table"),
        ("MDD80", "MDD80 = smallest difference detectable at 80% power"),
    ]
    tables = []
    for spec in comparison["tables"]:
        rows: list[list[str] | None] = []
        for row in spec["rows"]:
            cells: list[str] = [str(row["name"]), str(row["n"])]
            marked = False
            for metric in metrics:
                block = row["metrics"][metric["key"]]
                cells += [points(block["a"]), points(block["b"]), _difference(block)]
                if metric["exact_test"]:
                    test = block["mcnemar"]
                    cells += [f"{test['b']}/{test['c']}", p_text(test["p_holm"])]
                cells.append(mdd_points(block["mdd80"]))
                marked = marked or block["significant"]
            cells.append("*" if marked else "")
            rows.append(cells)
        tables.append(
            TextTable(
                headers=headers,
                rows=rows,
                optional=optional,
                legend=legend,
                title=f"B vs A, {spec['title']}",
            )
        )
    return tables
