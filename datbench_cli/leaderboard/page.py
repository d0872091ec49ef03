"""The leaderboard page: one self-contained HTML file (no script, nothing fetched) with the
table and plots drawn by matplotlib as inline SVG. matplotlib is imported here only, so only
``leaderboard --html`` pays for it."""

from __future__ import annotations

import html
import io
import math
import re
from typing import Any

from datbench_cli.leaderboard.outputs import table
from datbench_cli.shown_text import MAX_CELL_CHARS, plain
from datbench_cli.version import __version__

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:12px 0}
th,td{padding:4px 8px;border-bottom:1px solid #ddd;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.warn{background:#fff3cd;border:1px solid #e0c060;padding:8px 12px}
.plot svg{max-width:100%;height:auto}
.scroll{overflow-x:auto}
"""


def _svg(figure: Any) -> str:
    """A figure as an inline ``<svg>`` element (text as text, no ids from the clock)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, selectable
    matplotlib.rcParams["svg.hashsalt"] = "datbench"  # the same ids every time
    matplotlib.rcParams["text.parse_math"] = False  # a label's "$" is a dollar sign
    matplotlib.rcParams["text.usetex"] = False
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _name(text: str) -> str:
    """A run label or group name (a model's or dataset's name: untrusted) as the plots and the
    table show it: a long one cut in the middle (a 1 MB name took matplotlib minutes), control,
    bidirectional and invisible characters shown escaped as on the terminal (an override
    reversed the rest of its line)."""
    return plain(text, one_line=True, limit=MAX_CELL_CHARS)


def _line(text: str) -> str:
    """A note or a different-data line (holding labels) as :func:`_name` shows a name."""
    return plain(text, one_line=True)


def _percent(value: float | None) -> float:
    """A fraction in percent; no score (no samples: ``-`` in the table) is NaN, which
    matplotlib leaves out, never a point at 0%."""
    return math.nan if value is None else 100 * value


def _errors(entries: list[dict[str, Any]]) -> tuple[list[float], list[list[float]]]:
    scores = [_percent(e["score"]) for e in entries]
    below = [score - _percent(e["low"]) for score, e in zip(scores, entries, strict=True)]
    above = [_percent(e["high"]) - score for score, e in zip(scores, entries, strict=True)]
    return scores, [below, above]


def headline_plot(board: dict[str, Any]) -> str:
    """The headline score of each run, best on top, with its 95% interval and letters."""
    runs = board["runs"]
    figure = _figure(7, 0.45 * len(runs) + 1.2)
    axes = figure.add_subplot()
    scores, errors = _errors([r["overall"] for r in runs])
    positions = list(range(len(runs)))[::-1]
    axes.errorbar(scores, positions, xerr=errors, fmt="o", capsize=4, color="#1f5fa8")
    axes.set_yticks(positions, [f"{_name(r['label'])}  ({r['group']})" for r in runs])
    axes.set_xlim(0, 100)
    axes.set_xlabel(f"{board['headline']['label']} (%), 95% interval")
    axes.grid(axis="x", alpha=0.3)
    return _svg(figure)


def groups_plot(board: dict[str, Any]) -> str:
    """Per group (capability), each run's score with its 95% interval, side by side."""
    names, runs = board["groups"], board["runs"]
    figure = _figure(max(7, 1.1 * len(names) + 2), 4.2)
    axes = figure.add_subplot()
    step = 0.8 / max(len(runs), 1)
    for k, run in enumerate(runs):
        scores, errors = _errors([run["capabilities"][n] for n in names])
        xs = [i - 0.4 + step * (k + 0.5) for i in range(len(names))]
        axes.errorbar(xs, scores, yerr=errors, fmt="o", capsize=2, label=_name(run["label"]))
    axes.set_xticks(range(len(names)), [_name(n) for n in names], rotation=30, ha="right")
    axes.set_ylim(0, 100)
    axes.set_ylabel(f"{board['headline']['label']} (%), 95% interval")
    axes.legend(fontsize="small", loc="best")
    axes.grid(axis="y", alpha=0.3)
    return _svg(figure)


def trend_plot(board: dict[str, Any]) -> str:
    """Overall and every group along the checkpoints, one small panel each, with the 95%
    band; checkpoints better than every earlier one are ringed."""
    by_label = {r["label"]: r for r in board["runs"]}
    axis = [by_label[a["label"]] for a in board["trend"]["axis"]]
    steps = [r["step"] for r in axis]
    better = [r["step"] for r in axis if r["better_than_every_earlier"]]
    series = [("overall", [r["overall"] for r in axis])]
    series += [(n, [r["capabilities"][n] for r in axis]) for n in board["groups"]]
    columns = min(3, len(series))
    rows = -(-len(series) // columns)
    figure = _figure(3.2 * columns, 2.4 * rows)
    panels = figure.subplots(rows, columns, squeeze=False, sharex=True, sharey=True)
    for k, (name, entries) in enumerate(series):
        axes = panels[k // columns][k % columns]
        scores = [_percent(e["score"]) for e in entries]
        lows = [_percent(e["low"]) for e in entries]
        highs = [_percent(e["high"]) for e in entries]
        color = "#1f5fa8" if name == "overall" else "#555555"
        axes.plot(steps, scores, marker="o", color=color)
        axes.fill_between(steps, lows, highs, color=color, alpha=0.15)
        if name == "overall" and better:
            marked = [scores[steps.index(step)] for step in better]
            axes.scatter(better, marked, s=120, facecolors="none", edgecolors="#c03030")
        axes.set_title(_name(name), fontsize="medium")
        axes.set_ylim(0, 100)
        axes.grid(alpha=0.3)
    for k in range(len(series), rows * columns):
        panels[k // columns][k % columns].set_visible(False)
        panels[k // columns - 1][k % columns].tick_params(labelbottom=True)  # the bottom one
    figure.supxlabel("checkpoint (the number in each label)")
    figure.supylabel(f"{board['headline']['label']} (%), 95% band")
    return _svg(figure)


# The table's columns of text (left-aligned); the others hold numbers.
_TEXT_COLUMNS = {"run", "group", "coverage"}


def _table_html(board: dict[str, Any]) -> str:
    t = table(board)
    numeric = [h not in _TEXT_COLUMNS for h in t.columns]
    head = "".join(
        f'<th class="{"num" if numeric[i] else ""}">{html.escape(_name(h))}</th>'
        for i, h in enumerate(t.columns)
    )
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if numeric[i] else ""}">{html.escape(_name(c))}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in t.sections[0]
    )
    return f'<div class="scroll"><table id="leaderboard"><tr>{head}</tr>{rows}</table></div>'


def _clean(svg: str) -> str:
    """Drop the comments and the metadata block matplotlib writes (they name its version)."""
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)


def page(board: dict[str, Any]) -> bytes:
    """The whole page."""
    from datbench_cli.leaderboard.outputs import notes

    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f'<meta name="generator" content="datbench {html.escape(__version__)}">',
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        "<title>datbench leaderboard</title>",
        f"<style>{_CSS}</style></head><body data-ready=1>",
        f"<h1>Leaderboard: {html.escape(board['benchmark'])}</h1>",
    ]
    if board["differences"]:
        items = "".join(f"<li>{html.escape(_line(d))}</li>" for d in board["differences"])
        parts.append(
            '<div class="warn" id="different-data"><b>Different data '
            f"(--allow-different-data)</b>: these runs are not strictly comparable.<ul>{items}"
            "</ul></div>"
        )
    parts.append(_table_html(board))
    parts.append(
        "<ul id=notes>" + "".join(f"<li>{html.escape(_line(n))}</li>" for n in notes(board))
    )
    parts.append("</ul>")
    parts.append(f"<h2>{html.escape(board['headline']['label'])}</h2>")
    parts.append(f'<div class="plot" id="plot-headline">{_clean(headline_plot(board))}</div>')
    if board["groups"]:
        parts.append(f"<h2>Per {html.escape(board['group_by'] or 'group')}</h2>")
        parts.append(f'<div class="plot" id="plot-groups">{_clean(groups_plot(board))}</div>')
    if board.get("trend"):
        parts.append("<h2>Trend</h2>")
        parts.append(f'<div class="plot" id="plot-trend">{_clean(trend_plot(board))}</div>')
    parts.append("</body></html>\n")
    return "".join(parts).encode()
