"""The leaderboard's terminal table (laid out by the CLI's table module), the lines
under it, and its tidy CSV; and the guard every output file goes through."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.base import SummaryTable
from datbench_cli.files import jsonio


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}"


def cell(entry: dict[str, Any]) -> str:
    """``61.2 [59.8, 62.6]`` (percent), ``-`` over no samples."""
    if entry.get("score") is None:
        return "-"
    return f"{_points(entry['score'])} [{_points(entry['low'])}, {_points(entry['high'])}]"


def coverage_cell(detail: str | None) -> str:
    """The coverage check's count (``143 of 152 answered``, ``9 of 152 have no usable
    response``) without its details in brackets (the counts per capability or turncase, which
    :func:`notes` lists): a table cuts a cell past 200 characters in its middle, which took
    counts out of DatBench's nine capabilities."""
    return detail.partition(" (")[0] if detail else "-"


def table(board: dict[str, Any]) -> SummaryTable:
    """Rank, group letters, label, the headline with its interval, the metrics beside it,
    samples, coverage, warnings count, then one column per group (capability). With a trend
    the rows follow the checkpoints and a column says which beat every earlier one."""
    head = board["headline"]["label"]
    trend = board.get("trend")
    headers = ["rank", "group", "run", f"{head} [95%]"]
    if trend is not None:
        headers.insert(3, "better than all earlier")
    headers += [f"{m['label']} [95%]" for m in board["beside"]]
    headers += ["n", "coverage", "warnings"]
    fixed = len(headers)
    headers += list(board["groups"])
    rows = []
    ordered = board["runs"]
    if trend is not None:
        by_label = {run["label"]: run for run in ordered}
        ordered = [by_label[point["label"]] for point in trend["axis"]]
    for run in ordered:
        better = []
        if trend is not None:
            better = ["yes" if run["better_than_every_earlier"] else ""]
        rows.append(
            [
                str(run["rank"]),
                run["group"],
                run["label"],
                *better,
                cell(run["overall"]),
                *(cell(run["beside"][m["key"]]["overall"]) for m in board["beside"]),
                str(run["samples"]),
                coverage_cell(run["coverage"]),
                str(len(run["warnings"])),
                *(cell(run["capabilities"][name]) for name in board["groups"]),
            ]
        )
    # The run's label names the row; the per-group columns go first on a narrow terminal.
    order = [2, 0, 1, *range(3, len(headers))]
    return SummaryTable(
        title="",
        columns=[headers[i] for i in order],
        sections=[[[row[i] for i in order] for row in rows]],
        optional=list(range(fixed, len(headers))),
    )


def notes(board: dict[str, Any]) -> list[str]:
    """The lines under the table: what the letters and intervals mean, which test, whether
    the data differ, and each run's coverage details (unless a warning says them) and
    warnings."""
    out = [
        f"{board['headline']['label']} ranks the runs; [95%] Wilson intervals with continuity correction (%); "
        f"group: runs sharing a letter (a number, past 52 groups) are not significantly different ({board['test']}, "
        f"p < {board['alpha']:g})",
    ]
    if not board["paired"]:
        out.append("the runs did not score the same samples: tests are unpaired")
    if board["differences"]:
        out.append("DIFFERENT DATA (--allow-different-data): " + "; ".join(board["differences"]))
    trend = board.get("trend")
    if trend is not None:
        better = trend["better_than_every_earlier"]
        out.append(
            "trend: "
            + " -> ".join(a["label"] for a in trend["axis"])
            + "; significantly better than every earlier checkpoint: "
            + (", ".join(better) if better else "none")
        )
    for run in board["runs"]:
        detail = run["coverage"]
        said = any(detail in warning for warning in run["warnings"]) if detail else True
        if not said and coverage_cell(detail) != detail:
            out.append(f"{run['label']}: coverage: {detail}")
        for warning in run["warnings"]:
            out.append(f"{run['label']}: {warning}")
    return out


def csv_rows(board: dict[str, Any]) -> Iterable[list[Any]]:
    """Tidy long form: one row per run, group (``overall`` or a capability), metric; values
    as fractions; ``different_data`` true on every row when the runs were allowed to differ."""
    yield [
        "run",
        "rank",
        "group_letters",
        "capability",
        "metric",
        "value",
        "low",
        "high",
        "n",
        "different_data",
    ]
    different = bool(board["differences"])
    metrics = [board["headline"], *board["beside"]]
    for run in board["runs"]:
        for metric in metrics:
            block = (
                {"overall": run["overall"], "capabilities": run["capabilities"]}
                if metric is board["headline"]
                else run["beside"][metric["key"]]
            )
            named = [("overall", block["overall"]), *block["capabilities"].items()]
            for name, entry in named:
                yield [
                    run["label"],
                    run["rank"],
                    run["group"],
                    name,
                    metric["label"],
                    entry["score"],
                    entry["low"],
                    entry["high"],
                    entry["n"],
                    different,
                ]


# What a spreadsheet opening the CSV would run as a formula at the start of a text cell
# (a label from a model's name, a capability from the dataset): "=HYPERLINK(...)".
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell: ``None`` empty; a text a spreadsheet would take as a formula gets a leading
    apostrophe (shown as text, as OWASP advises); numbers as they are."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_text(board: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in csv_rows(board):
        writer.writerow([_cell(v) for v in row])
    return buffer.getvalue()


def write(path: Path, data: bytes) -> None:
    """A temp file renamed into place."""
    jsonio.write_bytes_atomic(jsonio.user_output(path), data)
