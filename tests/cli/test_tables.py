"""Every table (score's summary of both benchmarks, compare of both) rendered at 60, 80 and
120 columns and piped: no number is cut (no ellipsis, every cell of every shown column whole),
the columns that cannot go never go, the legend names only the columns shown, and the command
line prints the same through a pipe and on a (forced) terminal."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from datbench_cli.cli.compare_table import comparison_tables
from datbench_cli.cli.tables import TextTable, legend_lines, render
from datbench_cli.compare.comparison import compare
from tests.cli_helpers import export_samples, run_cli

WIDTHS = (60, 80, 120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("tables")
    made = {}
    for name, (run, sample) in export_samples(tmp).items():
        shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
        shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")
        assert run_cli("score", "-d", str(run), "--allow-missing", "-q").exit_code == 0
        # Run B: the same export, a few answers changed, so that compare has differences.
        other = tmp / f"{name}-b"
        shutil.copytree(run, other)
        lines = (other / "responses.jsonl").read_text(encoding="utf-8").splitlines()
        changed = [json.loads(line) for line in lines]
        for line in changed[::3]:
            line["raw_output"] = "no idea"
        (other / "responses.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in changed), encoding="utf-8"
        )
        assert run_cli("score", "-d", str(other), "--allow-missing", "-q").exit_code == 0
        made[name], made[f"{name}-b"] = run, other
    yield made


def every_table(runs: dict[str, Path]) -> list[tuple[str, TextTable]]:
    tables = []
    for name in ("dat", "vtb"):
        captured: list[TextTable] = []
        with mock.patch("datbench_cli.cli.score.show", lambda out, ts, c=captured: c.extend(ts)):
            result = run_cli("score", "-d", str(runs[name]), "--allow-missing")
        assert result.exit_code == 0, result.stderr
        tables.append((f"score {name}", captured[0]))
        comparison = compare(runs[name], runs[f"{name}-b"], seed=0, resamples=200)
        for number, table in enumerate(comparison_tables(comparison)):
            tables.append((f"compare {name} {number}", table))
    return tables


def tokens(lines: list[str]) -> str:
    return "\n".join(lines)


def assert_whole(text: str, cell: str, where: str) -> None:
    """``cell`` appears in ``text`` whole, between spaces (or line ends)."""
    pattern = r"(?<!\S)" + re.escape(cell) + r"(?!\S)"
    assert re.search(pattern, text), f"{where}: {cell!r} not shown whole"


@pytest.mark.parametrize("width", [*WIDTHS, None])
def test_no_number_is_ever_cut(runs: dict[str, Path], width: int | None) -> None:
    for where, table in every_table(runs):
        rendered = render(table, width or 80, terminal=width is not None)
        text = tokens(rendered.lines)
        assert "\u2026" not in text and "..." not in text, where
        shown = [i for i, h in enumerate(table.headers) if h in rendered.shown]
        required = [i for i in range(len(table.headers)) if i not in table.optional]
        assert set(required) <= set(shown), where
        if width is None:
            assert shown == list(range(len(table.headers))), where
            assert text.count("\n| ") >= len([r for r in table.rows if r is not None]), where
        for row in table.rows:
            for i in shown if row is not None else ():
                if row[i].strip():
                    assert_whole(text, row[i].strip(), f"{where} at {width}")
        if width is not None:
            aligned = any(set(line) == {"\u2500"} for line in rendered.lines)
            if aligned:
                assert max(len(line) for line in rendered.lines) <= width, where


def test_no_number_is_cut_on_the_narrowest_terminals(runs: dict[str, Path]) -> None:
    # At 20 to 24 columns a value too wide for its own line ("      100.0 [39.6, 100.0]",
    # 25 wide) was put there anyway: the terminal wrapped it inside a number.
    for where, table in every_table(runs):
        names = {row[0] for row in table.rows if row is not None}
        for width in range(20, 41):
            rendered = render(table, width, terminal=True)
            # Only a row's name (a dataset's, text) may be wider than the line.
            wide = [line for line in rendered.lines if len(line) > width]
            assert set(wide) <= names, (where, width, wide)
            text = tokens(rendered.lines)
            shown = [i for i, h in enumerate(table.headers) if h in rendered.shown]
            for row in table.rows:
                for i in shown if row is not None else ():
                    for token in row[i].split():
                        assert_whole(text, token, f"{where} at {width}")


def test_aligned_layout_drops_optional_columns_before_stacking() -> None:
    table = TextTable(
        headers=["group", "n", "score", "extra"],
        rows=[
            ["overall", "152", "70.9 ±7.0", "123456789"],
            None,
            ["  chart_dataset", "23", "64.9", "1"],
        ],
        optional=[3],
        legend=[("extra", "extra: a column that may go"), ("±", "± the interval")],
    )
    wide = render(table, 120, terminal=True)
    assert wide.shown == ["group", "n", "score", "extra"]
    narrow = render(table, 34, terminal=True)
    assert narrow.shown == ["group", "n", "score"]
    assert "123456789" not in "\n".join(narrow.lines)
    stacked = render(table, 20, terminal=True)
    assert stacked.lines[0] == "overall"
    assert "n 152" in "\n".join(stacked.lines) and "score 70.9 ±7.0" in "\n".join(stacked.lines)
    assert "  chart_dataset" in stacked.lines  # a dataset name stays on its own line, whole
    legend = legend_lines(table.legend, table.headers, narrow.shown, 80)
    assert legend == ["± the interval"]
    assert len(legend_lines(table.legend, table.headers, wide.shown, 80)) == 2


def test_legend_wraps_at_words() -> None:
    text = "censored: " + " ".join(["truncated"] * 30)
    lines = legend_lines([("censored", text)], ["censored"], ["censored"], 60)
    assert len(lines) > 1
    assert all(len(line) <= 60 for line in lines)
    assert " ".join(line.strip() for line in lines) == text


def test_markdown_escapes_pipes_and_keeps_every_column() -> None:
    table = TextTable(headers=["group", "n"], rows=[["a|b", "1"]], optional=[1])
    lines = render(table, 10, terminal=False).lines
    assert lines[0].startswith("| group") and "a\\|b" in lines[2]


def test_markdown_shows_untrusted_markup_as_text() -> None:
    # A model's name, a label or a group off a terminal: the markdown table was pasted into a
    # page (a pull request, a wiki) where `<img ... onerror=...>` ran and `[x](url)` linked.
    from markdown_it import MarkdownIt

    hostile = [
        "<img src=x onerror=alert(1)>",
        "\\<img src=y onerror=alert(2)\\>",
        "[click](http://evil.example) ![i](http://evil.example/i.png)",
        "&lt;b&gt; a|b <http://evil.example>",
    ]
    table = TextTable(
        headers=["run", "<i>group</i>"], rows=[[text, "1"] for text in hostile], title="<b>t</b>"
    )
    source = "\n".join(render(table, 80, terminal=False).lines)
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(source)
    assert "<img" not in page and "<a " not in page and "<b>" not in page and "<i>" not in page
    cells = re.findall(r"<td>(.*?)</td>", page)
    unescaped = [c.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for c in cells]
    assert unescaped == hostile
    interval = TextTable(headers=["run", "s"], rows=[["a", "70.9 [62.9, 77.8]"]])
    assert "70.9 [62.9, 77.8]" in render(interval, 80, terminal=False).lines[2]  # untouched


@pytest.mark.parametrize("width", WIDTHS)
def test_score_on_a_terminal_fits_and_its_legend_names_only_shown_columns(
    runs: dict[str, Path], width: int
) -> None:
    result = run_cli(
        "score",
        "-d",
        str(runs["dat"]),
        "--allow-missing",
        env={"COLUMNS": str(width), "TTY_COMPATIBLE": "1"},
    )
    assert result.exit_code == 0, result.stderr
    assert "\u2026" not in result.stdout
    lines = result.stdout.splitlines()
    assert all(len(line) <= width for line in lines), width
    header = next((line for line in lines if line.startswith("group")), "")
    if "MDD80" not in header:
        assert "MDD80:" not in result.stderr
    legend = result.stderr.split("item statistics")[0].splitlines()
    assert legend and legend[0].startswith("[low, high]: the 95% interval")
    for line in legend:
        assert len(line) <= width


def test_score_piped_is_markdown_with_every_column(runs: dict[str, Path]) -> None:
    result = run_cli("score", "-d", str(runs["dat"]), "--allow-missing", env={"COLUMNS": "60"})
    assert result.exit_code == 0
    header = next(line for line in result.stdout.splitlines() if line.startswith("| group"))
    assert [c.strip() for c in header.strip("|").split("|")][-2:] == ["n direct", "n judge"]
    report = json.loads((runs["dat"] / "report.json").read_text(encoding="utf-8"))
    summary = report["summary"]
    overall = next(line for line in result.stdout.splitlines() if line.startswith("| overall"))
    cells = [c.strip() for c in overall.strip("|").split("|")]
    assert cells[1:4] == [
        f"{summary['expected_samples']}/{summary['expected_samples']}",
        str(summary["total_samples"]),
        f"{100 * summary['overall_accuracy']:.1f} ±{100 * summary['uncertainty']['overall']['ci95_half_width']:.1f}"
        if "ci95_half_width" in summary.get("uncertainty", {}).get("overall", {})
        else cells[3],
    ]
    # Datasets sit under their capability, a defect marked.
    capability_of = {
        r["metadata"]["dataset"]: r["metadata"]["capability"] for r in report["results"]
    }
    current = None
    for line in result.stdout.splitlines()[4:]:
        name = line.strip("|").split("|")[0]
        if name.strip() == "overall" or not name.strip():
            continue
        if not name.startswith("   "):
            current = name.strip()
            continue
        dataset = name.split()[0]
        assert capability_of[dataset] == current, line
        marked = name.split()[-1] == "*"
        assert marked == (dataset in summary["known_reference_defects"]), line


def test_compare_piped_and_at_80_columns_cuts_nothing(runs: dict[str, Path]) -> None:
    for env in ({"COLUMNS": "80"}, {"COLUMNS": "80", "TTY_COMPATIBLE": "1"}):
        result = run_cli("compare", str(runs["dat"]), str(runs["dat-b"]), env=env)
        assert result.exit_code == 0, result.stderr
        assert "\u2026" not in result.stdout
        if "TTY_COMPATIBLE" in env:
            assert all(len(line) <= 80 for line in result.stdout.splitlines())


def test_columns_left_out_on_a_narrow_terminal_are_named(runs: dict[str, Path]) -> None:
    # docs/leaderboard.md: per-capability columns are left out "with a line saying so".
    narrow = {"COLUMNS": "80", "TTY_COMPATIBLE": "1"}
    result = run_cli("leaderboard", f"A={runs['dat']}", f"B={runs['dat-b']}", env=narrow)
    assert result.exit_code == 0, result.stderr
    header = result.stdout.splitlines()[0]
    assert "chart" not in header
    said = " ".join(line.strip() for line in result.stderr.splitlines())
    assert "column(s) left out at this width: chart, counting" in said
    score = run_cli("score", "-d", str(runs["dat"]), "--allow-missing", env=narrow)
    said = " ".join(line.strip() for line in score.stderr.splitlines())
    assert "left out at this width: MDD80" in said
    lines = score.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "left out" in line)
    assert all(len(line) <= 80 for line in lines[start : start + 2])
    piped = run_cli("leaderboard", f"A={runs['dat']}", f"B={runs['dat-b']}")
    assert "left out" not in piped.stderr


def test_a_detectable_difference_past_the_whole_scale_reads_over_100() -> None:
    from datbench_cli.benchmarks.common import mdd_cell, mdd_points

    assert mdd_points(1.401) == ">100"  # a group of two samples
    assert mdd_points(1.0) == "100.0"
    assert mdd_points(0.146) == "14.6"
    assert mdd_points(None) == "-"
    assert mdd_cell({"mdd80": 2.8}) == ">100"
    assert mdd_cell(None) == "-"


def test_bidirectional_controls_are_shown_escaped() -> None:
    # The overrides and isolates were escaped, the marks (U+061C, U+200E, U+200F) were not.
    from datbench_cli.shown_text import plain

    for char in "\u061c\u200e\u200f\u202e\u2067":
        assert plain(f"a{char}b") == f"a\\u{ord(char):04x}b"
    assert plain("plain text, é, 中文") == "plain text, é, 中文"


def test_columns_left_out_of_one_table_only_are_named(runs: dict[str, Path]) -> None:
    # At 80 columns compare's per-dataset table drops b/c and p Holm, which the per-capability
    # table still shows: the note named MDD80 alone, as if every table showed b/c and p Holm.
    narrow = {"COLUMNS": "80", "TTY_COMPATIBLE": "1"}
    result = run_cli("compare", str(runs["dat"]), str(runs["dat-b"]), env=narrow)
    assert result.exit_code == 0, result.stderr
    blocks = result.stdout.split("\n\n")
    capability = next(b for b in blocks if "per capability" in b).splitlines()[1]
    dataset = next(b for b in blocks if "per source dataset" in b).splitlines()[1]
    assert "b/c" in capability and "b/c" not in dataset
    said = " ".join(line.strip() for line in result.stderr.splitlines())
    assert "column(s) left out at this width: MDD80" in said
    assert "b/c, p Holm left out of B vs A, per source dataset" in said


def test_warnings_wrap_at_words_on_a_terminal(runs: dict[str, Path]) -> None:
    # "warning: 2 of 9 turn(s) have no model answer (...): <ids>" went out as one line that
    # the terminal wrapped where its width fell, inside an id or a number. Piped: one line.
    command = (
        "score",
        "-d",
        str(runs["vtb"]),
        "--allow-missing",
        "-o",
        str(runs["vtb"] / "w.json"),
    )
    result = run_cli(*command, env={"COLUMNS": "40", "TTY_COMPATIBLE": "1"})
    assert result.exit_code == 0, result.stderr
    blocks: list[list[str]] = []
    within = False  # in a warning (its first line, then the lines indented under it)
    for line in result.stderr.splitlines():
        if line.startswith("warning: "):
            blocks.append([line])
        elif within and line.startswith("  "):
            blocks[-1].append(line)
        within = line.startswith("warning: ") or (within and line.startswith("  "))
    piped = run_cli(*command, env={"COLUMNS": "40"})
    said = [line for line in piped.stderr.splitlines() if line.startswith("warning: ")]
    assert any(len(line) > 40 for line in said)
    assert [" ".join(part.strip() for part in block) for block in blocks] == said
    assert all(len(line) <= 40 for block in blocks for line in block)


def test_a_stacked_pair_wider_than_the_terminal_puts_its_value_below() -> None:
    # At 40 columns compare's card line "  Δ accuracy [95%] -100.0 [-100.0, -100.0]" was 42
    # wide: the terminal wrapped it inside the interval, cutting a number in two.
    table = TextTable(
        headers=["group", "n", "accuracy A", "accuracy B", "Δ accuracy [95%]"],
        rows=[
            ["counting", "8", "100.0", "0.0", "-100.0 [-100.0, -100.0]"],
            ["math", "16", "56.2", "25.0", "-31.2 [-56.2, +0.0]"],
        ],
    )
    lines = render(table, 40, terminal=True).lines
    assert max(len(line) for line in lines) <= 40, lines
    assert lines[:5] == [
        "counting",
        "  n 8   accuracy A 100.0",
        "  accuracy B 0.0",
        "  Δ accuracy [95%]",
        "    -100.0 [-100.0, -100.0]",
    ]
    assert "  Δ accuracy [95%] -31.2 [-56.2, +0.0]" in lines  # a pair that fits stays whole


def test_invisible_characters_are_shown_escaped() -> None:
    # A zero-width space, joiner, word joiner, byte order mark, soft hyphen or tag character
    # shows nothing: "gpt-4o" and "gpt-4o\u200b" were two labels a terminal showed alike.
    from datbench_cli.shown_text import plain

    assert plain("a\u00adb") == "a\\xadb"
    for char in "\u180e\u200b\u200c\u200d\u2060\u2064\ufeff\ufffb":
        assert plain(f"a{char}b") == f"a\\u{ord(char):04x}b"
    assert plain("a\U000e0041b") == "a\\U000e0041b"
    assert plain("emoji 😀, ß") == "emoji 😀, ß"


def test_json_output_escapes_invisible_characters_as_valid_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from datbench_cli.cli.output import Output

    value = "a\u200b\ufeff\U000e0041\x9bz"
    Output().json(json.dumps({"k": value}, ensure_ascii=False).encode())
    written = capsys.readouterr().out
    assert written.isascii()
    assert json.loads(written) == {"k": value}


def test_a_very_long_header_is_cut_like_a_cell() -> None:
    # A leaderboard's columns are the reports' capability names (untrusted): a 100,000
    # character one made a column 4,000 characters wide where a cell is cut at 200.
    table = TextTable(headers=["run", "c" * 100_000], rows=[["a" * 100_000, "61.2"]])
    for terminal in (False, True):
        rendered = render(table, 80, terminal=terminal)
        assert max(len(line) for line in rendered.lines) < 600
        assert "61.2" in "\n".join(rendered.lines)
        assert rendered.shown == list(table.headers)  # not named as a column left out


@pytest.mark.parametrize("width", WIDTHS)
def test_notes_under_the_tables_wrap_at_words_on_a_terminal(
    runs: dict[str, Path], width: int
) -> None:
    """The lines under a table (score's item statistics, compare's sides and gate, the
    leaderboard's method) went out whole: the terminal wrapped them where the width fell, in
    the middle of a number ("66." then "7" at 60 columns). On a terminal each is wrapped at
    words, as the legend is; piped, each stays one line."""
    commands = [
        ("score", "-d", str(runs["dat"]), "--allow-missing"),
        ("compare", str(runs["dat"]), str(runs["dat-b"])),
        ("leaderboard", f"A={runs['dat']}", f"B={runs['dat-b']}"),
    ]
    for command in commands:
        result = run_cli(*command, env={"COLUMNS": str(width), "TTY_COMPATIBLE": "1"})
        assert result.exit_code == 0, result.stderr
        notes = [
            x
            for x in result.stderr.splitlines()
            if not x.startswith("warning:") and " written to " not in x  # a path: not a note
        ]
        assert notes and all(len(line) <= width for line in notes), (command, notes)
        piped = run_cli(*command, env={"COLUMNS": str(width)})
        said = [x for x in piped.stderr.splitlines() if not x.startswith("warning:")]
        assert any(len(line) > width for line in said), command


def test_a_difference_of_float_noise_never_reads_minus_zero() -> None:
    from datbench_cli.compare.notes import points
    from datbench_cli.report_html.blocks import percent_text

    noise = 0.3 - (0.1 + 0.2)  # two equal means, apart by a float's last bit
    assert noise < 0
    assert points(noise, True) == "+0.0"
    assert points(noise) == "0.0"
    assert percent_text(noise, True) == "+0.00%"
    assert points(-0.0004, True) == "+0.0"
    assert points(-0.0006, True) == "-0.1"  # a real difference keeps its sign
    assert percent_text(-0.00006, True) == "-0.01%"
    assert points(0.1234) == "12.3"
