"""The page builder without a browser: the embedded data cannot end its script element,
image paths stay inside the run directory, a page never replaces a file it did not write,
``--html`` without FILE, and ``view`` of a folder with no report."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from datbench_cli.cli.html_page import optional_value
from datbench_cli.errors import UsageError
from datbench_cli.report_html import write_page
from datbench_cli.report_html.inputs import Images
from datbench_cli.report_html.page import embed_json, render
from tests.cli_helpers import SAMPLE, png_bytes, run_cli


def test_embedded_json_cannot_end_the_script_element() -> None:
    hostile = {"id": "</script><script>alert(1)</script>", "out": "<!-- & -->"}
    embedded = embed_json(hostile)
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert orjson.loads(embedded) == hostile
    page = render("t</title><script>", {"x": hostile}).decode()
    assert page.count("</script>") == 2  # the data element's and the app's own
    assert "t&lt;/title&gt;&lt;script&gt;" in page


def test_only_the_app_script_may_run() -> None:
    page = render("t", {}).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "default-src 'none'" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1).split("script-src", 1)[1].split(";", 1)[0]


def test_image_paths_are_confined_to_the_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "images").mkdir(parents=True)
    (run / "images" / "a.png").write_bytes(png_bytes())
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    (run / "images" / "link.png").symlink_to(outside)
    images = Images(run, tmp_path / "pages")
    assert images.src("images/a.png") == "../run/images/a.png"
    for hostile in ("../secret.png", str(outside), "images/link.png", "images/none.png", "a\x00b"):
        assert images.src(hostile) is None
    assert images.refused == 5
    embedded = Images(run, run, embed=True)
    src = embedded.src("images/a.png")
    assert src is not None and src.startswith("data:image/jpeg;base64,")
    tight = Images(run, run, embed=True, budget=10)
    assert tight.src("images/a.png") == "images/a.png" and tight.not_embedded == 1


def test_a_page_never_replaces_a_file_it_did_not_write(tmp_path: Path) -> None:
    precious = tmp_path / "responses.jsonl"
    precious.write_text('{"id": "x"}\n')
    with pytest.raises(UsageError, match="not a datbench page"):
        write_page(precious, render("t", {}))
    assert precious.read_text() == '{"id": "x"}\n'
    link = tmp_path / "link.html"
    link.symlink_to(precious)
    with pytest.raises(UsageError, match="symlink"):
        write_page(link, render("t", {}))
    page = tmp_path / "report.html"
    write_page(page, render("one", {}))
    write_page(page, render("two", {}))  # its own page is replaced
    assert "<title>two</title>" in page.read_text()


def test_html_option_may_stand_without_its_file() -> None:
    assert optional_value(["score", "--html"]) == ["score", "--html", ""]
    assert optional_value(["score", "--html", "-q"]) == ["score", "--html", "", "-q"]
    assert optional_value(["score", "--html", "p.html"]) == ["score", "--html", "p.html"]


def test_view_of_a_folder_without_a_report(tmp_path: Path) -> None:
    result = run_cli("view", str(tmp_path))
    assert result.exit_code == 2
    assert "no report here" in result.stderr


def test_view_refuses_a_result_that_is_not_an_object(tmp_path: Path) -> None:
    # It was left out of the page without a word (exit 0); compare refuses the same report.
    report = tmp_path / "report.json"
    report.write_text('{"summary": {}, "results": [{"id": "a"}, 5]}')
    result = run_cli("view", str(report), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2
    assert f"{report}: results[1] is not an object" in result.stderr
    assert not (tmp_path / "page.html").exists()


def test_view_of_a_lone_report_file(tmp_path: Path) -> None:
    report = {
        "summary": {"overall_accuracy": 0.5, "total_samples": 2},
        "results": [
            {"id": "a", "score": 1.0, "is_correct": True, "vlm_output": "x", "metadata": {}},
            {"id": "b", "score": 0.0, "is_correct": False, "vlm_output": "y", "metadata": {}},
        ],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    result = run_cli("view", str(path), "-o", str(tmp_path / "p.html"), "-q")
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "p.html").read_text()
    data = re.search(r'<script id="datbench-data" type="application/json">(.*?)</script>', text)
    assert data is not None
    page = json.loads(data.group(1))
    assert page["headline"][0]["value"] == 0.5
    assert [r["id"] for r in page["browser"]["records"]] == ["a", "b"]


def _page_data(page: Path) -> dict:
    text = page.read_text()
    data = re.search(r'<script id="datbench-data" type="application/json">(.*?)</script>', text)
    assert data is not None
    return json.loads(data.group(1))


def test_keys_of_other_branches_are_shown_when_present(tmp_path: Path) -> None:
    """Intervals (summary.uncertainty), coverage, per-sample response_status and the
    provenance block are shown as the report has them; no number is computed."""
    report = {
        "summary": {
            "overall_accuracy": 0.5,
            "total_samples": 2,
            "capability_accuracy": {"chart": 0.5},
            "capability_counts": {"chart": 2},
            "coverage": {"expected": 3, "answered": 2, "coverage": 0.6667},
            "response_statuses": {"truncated": 1},
            "uncertainty": {
                "overall": {"n": 2, "accuracy": 0.5, "ci95": [0.1, 0.9]},
                "capabilities": {"chart": {"n": 2, "accuracy": 0.5, "ci95": [0.2, 0.8]}},
            },
        },
        "provenance": {"tool": "datbench", "dataset": {"revision": "abc123"}},
        "results": [
            {
                "id": "a",
                "score": 1.0,
                "is_correct": True,
                "vlm_output": "x",
                "metadata": {"capability": "chart", "response_status": "truncated"},
            },
            {"id": "b", "score": 0.0, "is_correct": False, "vlm_output": "y", "metadata": {}},
        ],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    assert run_cli("view", str(path), "-o", str(tmp_path / "p.html"), "-q").exit_code == 0
    page = _page_data(tmp_path / "p.html")
    overall = page["headline"][0]
    assert overall["ci"] == [0.1, 0.9] and overall["coverage"] == "2/3 answered"
    assert page["charts"][0]["bars"] == [
        {"name": "chart", "value": 0.5, "ci": [0.2, 0.8], "n": 2, "coverage": None}
    ]
    assert ["dataset.revision", "abc123"] in page["provenance"]
    linked = [a for a in page["accounting"] if a["key"] == "response_statuses.truncated"]
    assert linked == [
        {
            "label": "response status truncated",
            "key": "response_statuses.truncated",
            "value": 1,
            "facet": "status",
            "match": "truncated",
        }
    ]
    status = next(f for f in page["browser"]["facets"] if f["key"] == "status")
    index = [r["f"][page["browser"]["facets"].index(status)] for r in page["browser"]["records"]]
    assert [status["values"][i] for i in index] == ["truncated", "(not recorded)"]


def test_comparison_tables_show_the_compare_json_as_it_is(tmp_path: Path) -> None:
    """With ``datbench compare``'s JSON (shape of its tables), every number comes from it."""
    from datbench_cli.report_html.compare_view import comparison_tables

    comparison = {
        "metrics": [{"key": "score", "label": "accuracy", "exact_test": True}],
        "tables": [
            {
                "key": "capability",
                "title": "By capability",
                "group": "capability",
                "rows": [
                    {
                        "name": "chart",
                        "n": 23,
                        "metrics": {
                            "score": {
                                "a": 0.6,
                                "b": 0.5,
                                "difference": -0.1,
                                "ci95": [-0.2, 0.0],
                                "mcnemar": {"b": 3, "c": 1, "p": 0.6, "p_holm": 0.9},
                                "flips": {"right_to_wrong": 3, "wrong_to_right": 1},
                                "significant": False,
                            }
                        },
                    }
                ],
            }
        ],
    }
    (table,) = comparison_tables(comparison)
    assert table["title"] == "By capability"
    (row,) = table["rows"]
    assert row[0] == {"t": "chart", "facet": "capability", "value": "chart"}
    # Means and differences in percent on the page, the fractions kept in the data.
    assert row[1:9] == [
        23,
        "accuracy",
        {"p": 0.6},
        {"p": 0.5},
        {"p": -0.1, "s": 1},
        "[-20.00%, +0.00%]",
        "0.900",
        "no",
    ]
    assert row[9] == "right to wrong 3, wrong to right 1"
    # A p-value below 0.0001 showed as "0.0000"; it shows as the terminal shows it.
    score = comparison["tables"][0]["rows"][0]["metrics"]["score"]  # type: ignore[index]
    score["mcnemar"]["p_holm"] = 9.5e-07
    (table,) = comparison_tables(comparison)
    assert table["rows"][0][7] == "1e-06"


def test_the_page_build_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path) -> None:
    import gc

    from datbench_cli.report_html import run_page

    path = tmp_path / "r.json"
    path.write_text(json.dumps({"summary": {"overall_accuracy": 1.0}, "results": []}))
    assert gc.isenabled()
    run_page(path, tmp_path / "p.html")
    assert gc.isenabled()
    gc.disable()
    try:
        run_page(path, tmp_path / "p.html")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_page_goes_to_a_device_in_place(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"summary": {"overall_accuracy": 1.0}, "results": []}))
    result = run_cli("view", str(path), "-o", "/dev/null", "-q")
    assert result.exit_code == 0, result.stderr
    assert Path("/dev/null").is_char_device()


def test_compare_page_notes_say_what_the_terminal_says(tmp_path: Path) -> None:
    """The page of `compare --html` carries the terminal's notes: each side's profile and
    warnings (a failed coverage check), the gate and its verdict (it left out every one)."""
    runs = {}
    for name, keep in (("a", None), ("b", 100)):
        run = tmp_path / name
        exported = run_cli("export-tasks", "all", "--source", str(SAMPLE), "-d", str(run), "-q")
        assert exported.exit_code == 0, exported.stderr
        lines = [json.loads(x) for x in (SAMPLE / "responses.jsonl").read_text().splitlines()]
        if keep is not None:  # B: fewer answers (its coverage check fails), half wrong
            lines = [dict(x, raw_output="no idea") if i % 2 else x for i, x in enumerate(lines)]
        (run / "responses.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines[:keep]))
        scored = run_cli("score", "-d", str(run), "-q", "--allow-missing")
        assert scored.exit_code == 0, scored.stderr
        runs[name] = run
    page = tmp_path / "compare.html"
    args = ["compare", str(runs["a"]), str(runs["b"]), "--resamples", "50", "--html", str(page)]
    result = run_cli(*args, "--fail-if-worse", "0")
    assert result.exit_code == 1, result.stderr
    notes = _page_data(page)["notes"]
    assert notes[0].startswith(f"A: {runs['a']} (reference profile)  B: {runs['b']}")
    assert any(n.startswith("B's report: ") for n in notes), notes
    assert any(n.startswith("gate (FAIL): ") for n in notes), notes
    said = [x for x in result.stderr.splitlines() if x.startswith(("B's report: ", "gate ("))]
    assert said and all(line in notes for line in said), (said, notes)


@pytest.mark.parametrize("benchmark", ["datbench", "vistoolbench"])
def test_summary_blocks_of_the_wrong_type_are_left_out_not_an_internal_error(
    tmp_path: Path, benchmark: str
) -> None:
    # A hand-edited or foreign report: a summary object that is a string or a number is
    # skipped (view) or not counted (leaderboard), never exit 3.
    from tests.compare_support import scored_run

    run = scored_run(benchmark, tmp_path / "run")
    report = json.loads((run / "report.json").read_text())
    blocks = [k for k, v in report["summary"].items() if isinstance(v, dict)]
    for key in blocks:
        report["summary"][key] = "x"
    (run / "report.json").write_text(json.dumps(report))
    result = run_cli("view", str(run), "-q")
    assert result.exit_code == 0, result.stderr
    other = scored_run(benchmark, tmp_path / "other")
    result = run_cli("leaderboard", str(other), str(run), "--allow-different-data", "-q")
    assert result.exit_code == 0, result.stderr


def test_result_turns_of_the_wrong_type_are_left_out_not_an_internal_error(
    tmp_path: Path,
) -> None:
    from tests.compare_support import scored_run

    run = scored_run("vistoolbench", tmp_path / "run")
    report = json.loads((run / "report.json").read_text())
    first, second, third = report["results"][:3]
    first["turns"] = -1
    second["turns"][0]["index"] = [1]
    third["turns"][0]["rubrics"] = -1
    (run / "report.json").write_text(json.dumps(report))
    result = run_cli("view", str(run), "-q")
    assert result.exit_code == 0, result.stderr


def test_a_mean_absolute_error_is_shown_as_a_count_not_a_percent(tmp_path: Path) -> None:
    """The counting scorers' MAE is in counts: an MAE of 0.5 (half a count) once read as
    "50.00%" on the dataset table, beside the accuracy fractions it is listed with."""
    metrics = {"accuracy__TallyQA-Accuracy": 0.75, "accuracy__TallyQA-MAE": 0.5}
    report = {
        "summary": {"overall_accuracy": 0.75, "dataset_metrics": {"tallyqa": metrics}},
        "results": [],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    assert run_cli("view", str(path), "-o", str(tmp_path / "p.html"), "-q").exit_code == 0
    (row,) = _page_data(tmp_path / "p.html")["tables"][0]["rows"]
    assert row[3] == "accuracy__TallyQA-Accuracy: 75.00%; accuracy__TallyQA-MAE: 0.5000"


def _unanswered_run(tmp_path: Path, errored: list[str], dropped: list[str]) -> dict:
    """The page data of the sample's ``table`` capability with the ``errored`` samples
    answered by an errored line only and the ``dropped`` ones without a line."""
    from tests.cli_helpers import SAMPLE

    run = tmp_path / "run"
    result = run_cli("export-tasks", "table", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert result.exit_code == 0, result.stderr
    lines = []
    for line in (run / "tasks.jsonl").read_text().splitlines():
        sid = json.loads(line)["id"]
        if sid in errored:
            lines.append({"id": sid, "raw_output": None, "error": "HTTP 500"})
        elif sid not in dropped:
            lines.append({"id": sid, "raw_output": "A"})
    (run / "responses.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = run_cli("score", "-d", str(run), "-q", "--allow-missing", "--html", "")
    assert result.exit_code == 0, result.stderr
    return _page_data(run / "report.html")


def _status_of(page: dict) -> dict[str, str]:
    browser = page["browser"]
    at = [f["key"] for f in browser["facets"]].index("status")
    values = browser["facets"][at]["values"]
    return {r["id"]: values[r["f"][at]] for r in browser["records"]}


def _links(page: dict) -> dict[str, str]:
    return {a["key"]: a["match"] for a in page["accounting"] if a["value"] and a["facet"]}


def test_errored_samples_are_not_shown_as_missing_and_their_counts_link_to_them(
    tmp_path: Path,
) -> None:
    """A sample whose only line is a transport error once read "Response status: missing" on
    the page, and the "errored responses" count linked to a status no sample had (the browser
    then showed every sample)."""
    page = _unanswered_run(tmp_path / "e", ["db_table_000000", "db_table_000001"], [])
    statuses = _status_of(page)
    assert statuses["db_table_000000"] == statuses["db_table_000001"] == "errored"
    assert "missing" not in statuses.values()
    links = _links(page)
    for key in (
        "errored_responses",
        "response_statuses.errored",
        "missing_responses",
        "unanswered_samples",
    ):
        assert links[key] == "errored", key
    # Both kinds at once: the report does not say which sample is which.
    page = _unanswered_run(tmp_path / "b", ["db_table_000000"], ["db_table_000001"])
    statuses = _status_of(page)
    assert statuses["db_table_000000"] == statuses["db_table_000001"] == "missing or errored"
    links = _links(page)
    for key in ("response_statuses.errored", "response_statuses.missing", "missing_responses"):
        assert links[key] == "missing or errored", key


def test_view_refuses_a_run_directory_changed_since_the_report(tmp_path: Path) -> None:
    """The page showed an edited tasks.jsonl's prompt (or a later export's) beside the
    results scored on the original, with exit 0; score and make-judge-tasks refuse both."""
    run = tmp_path / "run"
    exported = run_cli("export-tasks", "chart", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert exported.exit_code == 0, exported.stderr
    (run / "responses.jsonl").write_bytes((SAMPLE / "responses.jsonl").read_bytes())
    scored = run_cli("score", "-d", str(run), "--allow-missing", "-q")
    assert scored.exit_code == 0, scored.stderr
    page = tmp_path / "page.html"
    assert run_cli("view", str(run), "-o", str(page), "-q").exit_code == 0
    tasks = run / "tasks.jsonl"
    original = tasks.read_bytes()
    tasks.write_bytes(original.replace(b'"question":"', b'"question":"EDITED ', 1))
    edited = run_cli("view", str(run), "-o", str(page), "-q")
    assert edited.exit_code == 2
    assert f"{tasks}: tasks.jsonl does not match the manifest" in edited.stderr
    assert "EDITED" not in page.read_text()
    tasks.write_bytes(original)
    again = run_cli("export-tasks", "chart", "--source", str(SAMPLE), "-d", str(run), "-q",
                    "--limit", "2")  # fmt: skip
    assert again.exit_code == 0, again.stderr
    other = run_cli("view", str(run), "-o", str(page), "-q")
    assert other.exit_code == 2
    assert "scored against another export" in other.stderr
    alone = tmp_path / "kept" / "report.json"
    alone.parent.mkdir()
    alone.write_bytes((run / "report.json").read_bytes())
    assert run_cli("view", str(alone), "-o", str(page), "-q").exit_code == 0


def test_a_very_long_text_is_cut_on_the_page_saying_so(tmp_path: Path) -> None:
    # A model looping to its token limit writes 100 KB to 1 MB: 50 such outputs made a 78 MB
    # page (each output held twice: raw output and score details), 45,000 of them gigabytes.
    long_output = "word " * 200_000 + "THE-END"
    results = [
        {
            "id": f"s{i}",
            "score": 0.0,
            "is_correct": False,
            "vlm_output": long_output,
            "metadata": {"score_details": {"model_output": long_output, "pred_answer": "x"}},
        }
        for i in range(5)
    ]
    report = {"summary": {"overall_accuracy": 0.0, "total_samples": 5}, "results": results}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    result = run_cli("view", str(path), "-o", str(tmp_path / "p.html"), "-q")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "p.html").stat().st_size < 1_000_000
    record = _page_data(tmp_path / "p.html")["browser"]["records"][0]
    shown = json.dumps(record)
    assert "characters not shown" in shown and "report" in shown
    assert shown.count("THE-END") >= 1  # the end of a cut text stays


def test_the_page_of_a_run_rescored_late_says_which_input_changed(tmp_path: Path) -> None:
    # The page shows the report's numbers; responses.jsonl rewritten since (not scored again)
    # is named among the page's notes, as compare and the leaderboard name it.
    from datbench_cli.compare.inputs import changed_inputs
    from datbench_cli.report_html.build import _run_data
    from datbench_cli.report_html.inputs import locate

    run = tmp_path / "run"
    exported = run_cli("export-tasks", "chart", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert exported.exit_code == 0, exported.stderr
    responses = run / "responses.jsonl"
    responses.write_bytes((SAMPLE / "responses.jsonl").read_bytes())
    scored = run_cli("score", "-d", str(run), "--allow-missing", "-q")
    assert scored.exit_code == 0, scored.stderr

    def notes_of(folder: Path) -> list[str]:
        files = locate(folder)
        data = _run_data(files, Images(folder, folder))
        return [n for n in data["notes"] if "changed after" in n]

    def notes() -> list[str]:
        return notes_of(run)

    later = (run / "report.json").stat().st_mtime_ns + 10**9
    os.utime(responses, ns=(later, later))  # newer, the same bytes: not named
    assert notes() == []
    responses.write_bytes(
        responses.read_bytes().replace(b'"raw_output": "', b'"raw_output": "x', 1)
    )
    os.utime(responses, ns=(later, later))
    assert notes() == [
        f"{responses} changed after this report was written (not the bytes it scored): "
        "score the run again"
    ]
    # A run directory moved since (the recorded path leads nowhere): its files are judged.
    moved = run.rename(tmp_path / "moved")
    assert [n.split(" changed")[0] for n in notes_of(moved)] == [str(moved / "responses.jsonl")]
    run = moved.rename(run)
    # A copy of the run (cp -r; the original, which the recorded path leads to, still there):
    # the copy's own files are judged; beside another run's manifest, the file scored is.
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)  # the files' times too
    assert [n.split(" changed")[0] for n in notes_of(copy)] == [str(copy / "responses.jsonl")]
    # The same with the times cp -r gives (the report written after the answers): named too.
    plain = tmp_path / "plain-copy"
    shutil.copytree(run, plain, copy_function=shutil.copy)
    after = (plain / "responses.jsonl").stat().st_ctime_ns + 10**9
    os.utime(plain / "report.json", ns=(after, after))
    assert [n.split(" changed")[0] for n in notes_of(plain)] == [str(plain / "responses.jsonl")]
    (copy / "datbench.json").write_bytes((copy / "datbench.json").read_bytes() + b"\n")
    (copy / "responses.jsonl").write_bytes((SAMPLE / "responses.jsonl").read_bytes())
    report = json.loads((copy / "report.json").read_bytes())
    assert [n.split(" changed")[0] for n in changed_inputs(report, copy / "report.json")] == [
        str(responses)
    ]
    # A report written outside the run (score -o) judges the files it scored.
    outside = tmp_path / "reports" / "report.json"
    outside.parent.mkdir()
    shutil.copy2(run / "report.json", outside)  # as written, before the change
    assert [n.split(" changed")[0] for n in changed_inputs(report, outside)] == [str(responses)]
    # A file moved into place keeps its older modification time: still named.
    older = tmp_path / "older.jsonl"
    older.write_bytes((SAMPLE / "responses.jsonl").read_bytes() + b"\n")
    os.utime(older, ns=(1, 1))
    saved = responses.read_bytes()
    older.replace(responses)
    assert [n.split(" changed")[0] for n in notes()] == [str(responses)]
    responses.write_bytes(saved)
    # A report of another file of that name (score -d run other/responses.jsonl) does not
    # judge the run's own file.
    other = tmp_path / "other" / "responses.jsonl"
    other.parent.mkdir()
    other.write_bytes((SAMPLE / "responses.jsonl").read_bytes())
    rescored = run_cli("score", "-d", str(run), str(other), "--allow-missing", "-q")
    assert rescored.exit_code == 0, rescored.stderr
    later = (run / "report.json").stat().st_mtime_ns + 10**9
    os.utime(responses, ns=(later, later))
    assert notes() == []


def test_a_stale_report_is_judged_from_any_folder_and_a_fifo_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # score records the path as given: relative to where it ran. Read from elsewhere, where
    # that relative path leads to another file, the run's own file is still the one judged.
    from datbench_cli.report_html.build import _run_data
    from datbench_cli.report_html.inputs import locate

    run = tmp_path / "run"
    exported = run_cli("export-tasks", "chart", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert exported.exit_code == 0, exported.stderr
    responses = run / "responses.jsonl"
    responses.write_bytes((SAMPLE / "responses.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    scored = run_cli("score", "-d", "run", "--allow-missing", "-q")
    assert scored.exit_code == 0, scored.stderr
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "run").mkdir(parents=True)
    (elsewhere / "run" / "responses.jsonl").write_bytes(b"{}\n")
    monkeypatch.chdir(elsewhere)
    later = (run / "report.json").stat().st_mtime_ns + 10**9

    def notes() -> list[str]:
        data = _run_data(locate(run), Images(run, run))
        return [n for n in data["notes"] if "changed after" in n]

    responses.write_bytes(responses.read_bytes() + b"\n")
    os.utime(responses, ns=(later, later))
    assert [n.split(" changed")[0] for n in notes()] == [str(responses)]
    # A FIFO of that name is never opened (reading it would wait for a writer).
    responses.unlink()
    os.mkfifo(responses)
    os.utime(responses, ns=(later, later))
    assert notes() == []


def test_each_dataset_interval_is_shown_beside_the_mean_it_belongs_to() -> None:
    # The interval of a dataset's mean score (all its samples) stood beside its scorer's own
    # metrics (direct samples only, or a category average): "accuracy: 18.29%" beside
    # "[8.80%, 90.42%]", while the mean it belongs to (49.1%) was shown nowhere on the page.
    from datbench_cli.benchmarks.datbench.page_view import dataset_table

    summary = {
        "dataset_metrics": {"ocrbench-v2": {"accuracy": 0.1829, "score": 0.1829}},
        "uncertainty": {
            "datasets": {"ocrbench-v2": {"n": 4, "accuracy": 0.491, "ci95": [0.088, 0.9042]}}
        },
    }
    table = dataset_table(summary, {"ocrbench-v2": "document"})
    (row,) = table["rows"]
    cols = table["cols"]
    assert row[cols.index("mean score")] == "49.10%"
    assert row[cols.index("mean score") + 1] == "[8.80%, 90.42%]"
    assert cols[cols.index("mean score") + 1].startswith("95% interval of the mean score")
    assert row[cols.index("metrics")] == "accuracy: 18.29%; score: 18.29%"
    assert cols[table["defect_col"]] == "known reference defect"


@pytest.mark.parametrize(
    ("edit", "name"),
    [
        (lambda s: s.update(overall_accuracy=1.7), "overall_accuracy"),
        (lambda s: s["uncertainty"]["overall"].update(ci95=[-0.5, 1.9]), "overall_accuracy"),
        (lambda s: s["capability_accuracy"].update(table=-3), "table"),
    ],
)
def test_a_summary_number_that_is_no_fraction_is_refused(
    tmp_path: Path, edit: Any, name: str
) -> None:
    """A hand-edited summary: the page drew an accuracy of 1.7 as 170%, an interval of
    [-0.5, 1.9] as [-50.00%, 190.00%] and a capability at -300%, where compare and the
    leaderboard (computed from the results) said 70.9%. Now bad input: one error line."""
    path, result = _view_edited_summary(tmp_path, edit)
    assert result.stderr.startswith(f"error: {path}: the summary's {name} (")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "p.html").exists()


def _view_edited_summary(tmp_path: Path, edit: Any) -> tuple[Path, Any]:
    """``view`` of the table capability's report after ``edit(summary)``: refused (exit 2)."""
    run = tmp_path / "run"
    export = ("export-tasks", "table", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert run_cli(*export).exit_code == 0
    shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
    assert run_cli("score", "-d", str(run), "-q", "--allow-missing").exit_code == 0
    report = json.loads((run / "report.json").read_text())
    edit(report["summary"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(report))
    result = run_cli("view", str(path), "-o", str(tmp_path / "p.html"))
    assert result.exit_code == 2, result.stderr
    return path, result


@pytest.mark.parametrize(
    ("edit", "name"),
    [
        (lambda s: s["capability_counts"].update(table=-1), "table"),
        (lambda s: s["capability_counts"].update(table="6"), "table"),
        (lambda s: s.update(total_samples=None, direct_samples=-2), "direct_accuracy"),
    ],
)
def test_a_summary_count_that_is_no_count_is_refused(tmp_path: Path, edit: Any, name: str) -> None:
    """A hand-edited count: the page drew the bar of a capability over "n -1"."""
    path, result = _view_edited_summary(tmp_path, edit)
    assert result.stderr.startswith(f"error: {path}: the summary's {name} is over ")
    assert "not a count" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "p.html").exists()


def test_an_ars_outside_0_1_from_its_results_is_drawn(tmp_path: Path) -> None:
    """Negative rubric weights take a task's ARS below 0 (the VisualToolBench spec, 4.2): the
    page refused such a report as "not a fraction (an edited report?)". An ARS that is its
    results' mean is drawn; one its results do not give is still refused."""
    from datbench_cli import stats
    from tests.compare_support import scored_run

    run = scored_run("vistoolbench", tmp_path / "run")
    report = json.loads((run / "report.json").read_text())
    for entry in report["results"][:3]:
        entry["ars"] = -0.4
    scores = [entry["ars"] for entry in report["results"]]
    report["summary"]["ars"] = sum(scores) / len(scores)
    report["summary"]["uncertainty"]["overall"]["ars"] = stats.describe(scores)
    assert report["summary"]["ars"] < 0
    (run / "report.json").write_text(json.dumps(report))
    result = run_cli("view", str(run), "-o", str(tmp_path / "p.html"))
    assert result.exit_code == 0, result.stderr
    report["summary"]["ars"] = -0.9  # not what its results give
    (run / "report.json").write_text(json.dumps(report))
    result = run_cli("view", str(run), "-o", str(tmp_path / "q.html"))
    assert result.exit_code == 2 and 'the summary\'s "ars" is -0.9' in result.stderr
