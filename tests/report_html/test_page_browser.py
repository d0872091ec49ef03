"""The HTML pages in a real headless Chromium: numbers equal report.json, filters show exactly
the expected samples, images load, injected markup stays text and never runs, no console
errors. Screenshots go to a temp folder (DATBENCH_UPDATE_SCREENSHOTS=1: into docs/)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from datbench_cli.cli.html_page import optional_value
from tests.cli_helpers import ROOT, SAMPLE, make_dataset, make_row, run_cli
from tests.runner_lines import azure_prompt_filtered, vllm_ok

INJECT = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"></script>'
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _datbench_run(root: Path, name: str, wrong: set[str] = frozenset()) -> Path:  # type: ignore[assignment]
    run = root / name
    assert (
        run_cli("export-tasks", "all", "--source", str(SAMPLE), "--dir", str(run), "-q").exit_code
        == 0
    )
    responses = _lines(SAMPLE / "responses.jsonl")
    for line in responses:
        if line["id"] == "db_chart_000001":
            line["raw_output"] = INJECT
        if line["id"] in wrong:
            line["raw_output"] = "certainly not the answer"
    _write_lines(run / "responses.jsonl", responses)
    assert run_cli("make-judge-tasks", "--dir", str(run), "-q").exit_code == 0
    shutil.copy(SAMPLE / "judge_responses.jsonl", run / "judge_responses.jsonl")
    # As the console script sees it: `--html` last, without its FILE.
    result = run_cli(*optional_value(["score", "--dir", str(run), "-q", "--html"]))
    assert result.exit_code == 0, result.stderr
    return run


def _open(driver: Any, page: Path) -> None:
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get(page.resolve().as_uri())
    deadline = time.monotonic() + 20
    while driver.execute_script("return document.body.dataset.ready") != "1":
        assert time.monotonic() < deadline, "the page never finished rendering"
        time.sleep(0.05)


def _no_errors(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    assert driver.execute_script("return window.__pwned") is None


def _select(driver: Any, facet: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", f"filter-{facet}")).select_by_value(value)


def _shown_ids(driver: Any) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#list li.rec')).map(li => li.dataset.id)"
    )


def _count(driver: Any) -> int:
    return int(driver.find_element("id", "count").get_attribute("data-count"))


def _headline(driver: Any, key: str) -> str:
    return driver.find_element("css selector", f'.card[data-key="{key}"] .value').get_attribute(
        "data-value"
    )


def _open_record(driver: Any, sample_id: str) -> Any:
    items = driver.find_elements("css selector", "#list li.rec")
    item = next(i for i in items if i.get_attribute("data-id") == sample_id)
    item.find_element("css selector", ".head").click()
    return item


def _image_loaded(driver: Any, item: Any) -> None:
    image = item.find_element("css selector", "img.thumb")
    deadline = time.monotonic() + 10
    while not driver.execute_script(
        "return arguments[0].complete && arguments[0].naturalWidth > 0", image
    ):
        assert time.monotonic() < deadline, f"image {image.get_attribute('src')} did not load"
        time.sleep(0.05)


def _shot(driver: Any, name: str, tmp: Path) -> None:
    driver.execute_script("window.scrollTo(0, 0)")
    target = tmp / f"{name}.png"
    driver.save_screenshot(str(target))
    assert target.stat().st_size > 0
    if os.environ.get("DATBENCH_UPDATE_SCREENSHOTS") == "1":
        docs = ROOT / "docs" / "screenshots"
        docs.mkdir(parents=True, exist_ok=True)
        shutil.copy(target, docs / target.name)


def test_datbench_page(driver: Any, tmp_path: Path) -> None:
    run = _datbench_run(tmp_path, "run")
    report = json.loads((run / "report.json").read_text())
    # An id that tries to end the data script and inject markup, shown through `view`.
    report["results"][0]["id"] = "id-" + INJECT
    (run / "report.json").write_text(json.dumps(report))
    assert run_cli("view", str(run), "-q").exit_code == 0
    _open(driver, run / "report.html")
    summary = report["summary"]
    assert float(_headline(driver, "overall_accuracy")) == summary["overall_accuracy"]
    assert float(_headline(driver, "judge_accuracy")) == summary["judge_accuracy"]
    bars = driver.execute_script(
        "return Array.from(document.querySelectorAll('.chart rect.bar')).map(r => [r.dataset.name, r.dataset.value])"
    )
    assert {name: float(v) for name, v in bars} == summary["capability_accuracy"]
    # Every result, and every exported sample the report has none for (here the renamed one).
    ids = {r["id"] for r in report["results"]}
    unscored = [t["id"] for t in _lines(run / "tasks.jsonl") if t["id"] not in ids]
    assert unscored == ["db_chart_000000"]
    assert _count(driver) == len(report["results"]) + len(unscored)
    # The accounting number links to its samples: judge verdict unparsed.
    unparsed = [
        r["id"]
        for r in report["results"]
        if r["metadata"]["score_details"].get("judge_verdict") == "unparsed"
    ]
    assert unparsed and summary["judge_unparsed_verdicts"] == len(unparsed)
    driver.find_element(
        "css selector", '#accounting tr[data-key="judge_unparsed_verdicts"] button'
    ).click()
    assert _shown_ids(driver) == unparsed
    _select(driver, "verdict", "")
    _select(driver, "dataset", "chartqa")
    _select(driver, "result", "incorrect")
    expected = [
        r["id"]
        for r in report["results"]
        if r["metadata"]["dataset"] == "chartqa" and r["is_correct"] is False
    ]
    assert expected and _shown_ids(driver) == expected
    # Injected output and id: shown verbatim as text, nothing ran.
    _select(driver, "result", "")
    item = _open_record(driver, "db_chart_000001")
    assert INJECT in item.text
    _image_loaded(driver, item)
    head = driver.find_element("css selector", "#list li.rec .rid")
    assert head.text == "id-" + INJECT
    _select(driver, "dataset", "")
    driver.find_element("id", "search").send_keys("peaks in 2019")
    assert _shown_ids(driver) == [
        r["id"] for r in report["results"] if "peaks in 2019" in r["vlm_output"].lower()
    ]
    driver.find_element("id", "search").clear()
    _no_errors(driver)
    _shot(driver, "datbench", tmp_path)


def test_vistoolbench_page(driver: Any, tmp_path: Path) -> None:
    run = tmp_path / "vtb"
    assert (
        run_cli(
            "export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "--dir", str(run), "-q"
        ).exit_code
        == 0
    )
    responses = _lines(VTB_SAMPLE / "responses.jsonl")
    for line in responses:
        if line.get("id") == "vtb-a-medical-001::0":
            line["raw_output"] = INJECT
    _write_lines(run / "responses.jsonl", responses)
    assert run_cli("make-judge-tasks", "--dir", str(run), "-q").exit_code == 0
    shutil.copy(VTB_SAMPLE / "judge_responses.jsonl", run / "judge_responses.jsonl")
    page = tmp_path / "elsewhere" / "vtb.html"
    page.parent.mkdir()
    # A page outside the run directory, with its images embedded (data: URIs under the CSP).
    result = run_cli(
        "score", "--dir", str(run), "-q", "--html", str(page), "--embed-images", "--allow-missing"
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads((run / "report.json").read_text())
    _open(driver, page)
    assert float(_headline(driver, "apr")) == report["summary"]["apr"]
    assert float(_headline(driver, "ars")) == report["summary"]["ars"]
    _select(driver, "turncase", "multi-turn")
    assert _shown_ids(driver) == [
        t["id"] for t in _lines(run / "tasks.jsonl") if t["turncase"] == "multi-turn"
    ]
    _select(driver, "turncase", "")
    _select(driver, "verdict", "unparsed")
    assert _shown_ids(driver) == [
        r["id"]
        for r in report["results"]
        if any(rb["status"] == "unparsed" for t in r["turns"] for rb in t["rubrics"])
    ]
    _select(driver, "verdict", "")
    # The unanswered turns' count links to the task the report has no result for.
    scored = {r["id"] for r in report["results"]}
    unanswered = [t["id"] for t in _lines(run / "tasks.jsonl") if t["id"] not in scored]
    assert unanswered and report["summary"]["responses"]["missing_turns"] > 0
    driver.find_element(
        "css selector", '#accounting tr[data-key="responses.missing_turns"] button'
    ).click()
    assert _shown_ids(driver) == unanswered
    _select(driver, "status", "")
    item = _open_record(driver, "vtb-a-medical-001")
    assert INJECT in item.text
    assert "Rubric verdicts" in item.text.title() or "RUBRIC VERDICTS" in item.text
    _image_loaded(driver, item)
    sources = driver.execute_script(
        "return Array.from(document.querySelectorAll('img.thumb')).map(i => i.src)"
    )
    assert sources and all(src.startswith("data:image/") for src in sources)
    _no_errors(driver)
    _shot(driver, "vistoolbench", tmp_path)


def test_compare_page(driver: Any, tmp_path: Path) -> None:
    run_a = _datbench_run(tmp_path, "a")
    run_b = _datbench_run(tmp_path, "b", wrong={"db_chart_000000", "db_table_000000"})
    page = tmp_path / "compare.html"
    result = run_cli("compare", str(run_a), str(run_b), "--html", str(page), "-q")
    assert result.exit_code == 0, result.stderr
    report_a = json.loads((run_a / "report.json").read_text())
    report_b = json.loads((run_b / "report.json").read_text())
    _open(driver, page)
    assert float(_headline(driver, "overall_accuracy")) == report_a["summary"]["overall_accuracy"]
    assert float(_headline(driver, "b.overall_accuracy")) == report_b["summary"]["overall_accuracy"]
    b_correct = {r["id"]: r["is_correct"] for r in report_b["results"]}
    flipped = [
        r["id"] for r in report_a["results"] if r["is_correct"] and b_correct[r["id"]] is False
    ]
    assert flipped
    _select(driver, "change", "right->wrong")
    assert _shown_ids(driver) == flipped
    b_score = {r["id"]: r["score"] for r in report_b["results"]}
    _select(driver, "change", "different")
    assert _shown_ids(driver) == [
        r["id"]
        for r in report_a["results"]
        if r["score"] != b_score[r["id"]] or r["is_correct"] != b_correct[r["id"]]
    ]
    _select(driver, "change", "right->wrong")
    item = _open_record(driver, flipped[0])
    assert item.find_element("css selector", ".side-a").is_displayed()
    assert "certainly not the answer" in item.find_element("css selector", ".side-b").text
    _image_loaded(driver, item)
    _select(driver, "change", "")
    item = _open_record(driver, "db_chart_000001")
    assert item.find_element("css selector", ".side-a").text.count(INJECT) >= 1
    _no_errors(driver)
    _shot(driver, "compare", tmp_path)


def test_the_page_opens_on_the_samples_with_each_row_in_a_line(driver: Any, tmp_path: Path) -> None:
    """The sample list starts within the first screen; a failing sample's collapsed row shows
    its question, output and expected answer; failures are one click away; percent throughout."""
    run = _datbench_run(tmp_path, "first-screen", wrong={"db_chart_000000"})
    report = json.loads((run / "report.json").read_text())
    _open(driver, run / "report.html")
    height = driver.execute_script("return window.innerHeight")
    top = driver.execute_script(
        "return document.querySelector('#list li.rec').getBoundingClientRect().top"
    )
    assert 0 < top < height
    tasks = {t["id"]: t for t in _lines(run / "tasks.jsonl")}
    failing = next(r for r in report["results"] if r["is_correct"] is False)
    row = driver.find_element("css selector", f'#list li.rec[data-id="{failing["id"]}"]')
    line = row.find_element("css selector", ".line")
    words = " ".join(tasks[failing["id"]]["question"].split())
    shown = driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.line > span')).map(s => s.lastChild.textContent)",
        row,
    )
    assert shown[0] == words
    assert shown[1] == " ".join(str(failing["vlm_output"]).split())
    assert shown[2] == " ".join(str(failing["ground_truth"]).split())
    assert line.is_displayed() and row.find_elements("css selector", ".detail") == []
    # Failures are one click away.
    driver.find_element("id", "failures").click()
    expected = [r["id"] for r in report["results"] if r["is_correct"] is False]
    assert _shown_ids(driver) == expected
    # One unit: every percent-looking number on the page is a percent, no bare fractions in
    # the tables; the data keeps the fraction.
    cells = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tables td')).map(td => td.textContent)"
    )
    assert not [c for c in cells if __import__("re").fullmatch(r"0\.\d{4}", c)]
    fraction = driver.find_element("css selector", '.card[data-key="overall_accuracy"] .value')
    assert fraction.text.endswith("%")
    assert float(fraction.get_attribute("data-value")) == report["summary"]["overall_accuracy"]
    _no_errors(driver)


def test_a_count_links_only_to_samples_that_carry_it(driver: Any, tmp_path: Path) -> None:
    """An errored line of an id the export does not have is counted as an unknown id (once
    also as ``errored_responses``) and leaves no sample errored: its count once linked to a
    status no sample had, and
    clicking it showed every sample. Errored samples show "errored" (they once read
    "missing"), and their count selects them."""
    run = tmp_path / "run"
    result = run_cli("export-tasks", "table", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert result.exit_code == 0, result.stderr
    ids = [t["id"] for t in _lines(run / "tasks.jsonl")]
    lines = [{"id": i, "raw_output": "A"} for i in ids]
    lines.append({"id": "not-exported", "raw_output": None, "error": "HTTP 500"})
    _write_lines(run / "responses.jsonl", lines)
    assert run_cli("score", "-d", str(run), "-q").exit_code == 0
    summary = json.loads((run / "report.json").read_text())["summary"]
    assert summary["unknown_response_ids"] == 1 and summary["errored_responses"] == 0
    assert summary["response_statuses"]["errored"] == 0
    assert run_cli("view", str(run), "-q").exit_code == 0
    _open(driver, run / "report.html")
    row = driver.find_element("css selector", '#accounting tr[data-key="unknown_response_ids"]')
    assert row.text.startswith("1") and row.find_elements("css selector", "button") == []
    _no_errors(driver)
    # A sample whose only line errored: "errored", and its count selects it alone.
    lines[-1]["id"] = ids[-1]
    _write_lines(
        run / "responses.jsonl",
        [line for line in lines if line.get("raw_output") is None or line["id"] != ids[-1]],
    )
    assert run_cli("score", "-d", str(run), "-q", "--allow-missing", "--html", "").exit_code == 0
    _open(driver, run / "report.html")
    for key in ("errored_responses", "response_statuses.errored", "unanswered_samples"):
        _select(driver, "status", "")
        driver.find_element("css selector", f'#accounting tr[data-key="{key}"] button').click()
        assert _shown_ids(driver) == [ids[-1]], key
    head = driver.find_element("css selector", f'#list li.rec[data-id="{ids[-1]}"] .head')
    assert "Response status: errored" in head.text
    _no_errors(driver)


def test_a_null_accuracy_reads_as_a_dash(driver: Any, tmp_path: Path) -> None:
    """No judge-mode sample (counting has none): the judge accuracy is null, which the card
    showed as the word "null" where the terminal shows "-"."""
    run = tmp_path / "run"
    result = run_cli("export-tasks", "counting", "--source", str(SAMPLE), "-d", str(run), "-q")
    assert result.exit_code == 0, result.stderr
    _write_lines(
        run / "responses.jsonl",
        [{"id": t["id"], "raw_output": "2"} for t in _lines(run / "tasks.jsonl")],
    )
    assert run_cli("score", "-d", str(run), "-q", "--html", "").exit_code == 0
    assert json.loads((run / "report.json").read_text())["summary"]["judge_accuracy"] is None
    _open(driver, run / "report.html")
    card = driver.find_element("css selector", '.card[data-key="judge_accuracy"] .value')
    assert card.text == "-" and _headline(driver, "judge_accuracy") == "null"
    _no_errors(driver)


def test_an_accuracy_over_no_sample_reads_as_a_dash(driver: Any, tmp_path: Path) -> None:
    """The library's report keeps the reference's 0.0 for an accuracy over no sample (judge
    accuracy without a judge-mode sample; everything in a report of no sample): the page
    showed "0.00%, n = 0", a model that got everything wrong."""
    from datbench_cli import DatBenchEvaluator, VLMResponse

    row = dict(make_row("db_counting_000000", answer="2"), image=None)
    for name, responses in (("some", [VLMResponse("db_counting_000000", "2")]), ("none", [])):
        evaluator = DatBenchEvaluator([row] if responses else [], "counting")
        report = evaluator.compute_metrics(responses)
        assert report.summary["judge_accuracy"] == 0.0  # the reference's value, kept
        report.save(tmp_path / f"{name}.json")
        page = tmp_path / f"{name}.html"
        result = run_cli("view", str(tmp_path / f"{name}.json"), "-o", str(page), "-q")
        assert result.exit_code == 0, result.stderr
        _open(driver, page)
        empty = {"judge_accuracy"} | (
            {"overall_accuracy", "direct_accuracy"} if not responses else set()
        )
        for key in ("overall_accuracy", "direct_accuracy", "judge_accuracy"):
            card = driver.find_element("css selector", f'.card[data-key="{key}"]')
            value = card.find_element("css selector", ".value").text
            assert (value == "-") == (key in empty), (name, key, card.text)
        _no_errors(driver)


def _no_wider_than_the_window(driver: Any) -> None:
    width = driver.execute_script("return document.documentElement.clientWidth")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width


def test_a_huge_dataset_name_does_not_widen_the_page(driver: Any, tmp_path: Path) -> None:
    """A 5,000-character dataset name (untrusted dataset text, one word) made its filter's
    select and each sample's badge 35,000 pixels wide: the page scrolled sideways. So did the
    comparison page's per-dataset table, its cell as wide as the name."""
    name = "set" + "x" * 5000
    source = make_dataset(tmp_path, {"table": [make_row("s0", dataset=name)]})
    runs = []
    for label, answer in (("a", "yes"), ("b", "no")):
        run = tmp_path / label
        exported = run_cli("export-tasks", "table", "--source", str(source), "-d", str(run), "-q")
        assert exported.exit_code == 0, exported.stderr
        _write_lines(run / "responses.jsonl", [{"id": "s0", "raw_output": answer}])
        assert run_cli("score", "-d", str(run), "-q", "--html", "").exit_code == 0
        runs.append(run)
    _open(driver, runs[0] / "report.html")
    assert name.startswith(
        driver.execute_script(
            "return document.querySelector('#filter-dataset option:last-child').value"
        )[:100]
    )
    _no_wider_than_the_window(driver)
    _no_errors(driver)
    page = tmp_path / "compare.html"
    args = ["compare", str(runs[0]), str(runs[1]), "--resamples", "50", "--html", str(page)]
    assert run_cli(*args, "-q").exit_code == 0
    _open(driver, page)
    assert name[:100] in driver.find_element("id", "tables").text
    _no_wider_than_the_window(driver)
    # Only the long name's cell breaks inside a word: every percent stays on one line.
    broken = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tables td'))"
        ".filter(td => /^[-+]?[0-9.]+%$/.test(td.textContent)).filter(td => {"
        " const r = document.createRange(); r.selectNodeContents(td);"
        " return new Set(Array.from(r.getClientRects()).map(c => Math.round(c.top))).size > 1;"
        "}).length"
    )
    assert broken == 0
    _no_errors(driver)


def test_controls_in_untrusted_text_are_shown_escaped(driver: Any, tmp_path: Path) -> None:
    """A right-to-left override in a dataset name or an output showed the rest of its text
    reversed on the page ("set" + U+202E + "live" read "setevil"), an escape sequence or a
    zero-width space showed nothing: each is shown as its escape, as the terminal shows it."""
    name = "set\u202elive"
    source = make_dataset(tmp_path, {"table": [make_row("s0", dataset=name)]})
    run = tmp_path / "run"
    assert (
        run_cli("export-tasks", "table", "--source", str(source), "-d", str(run), "-q").exit_code
        == 0
    )
    output = "yes\x1b[2J\u200b\u2066done\nnext line"
    _write_lines(run / "responses.jsonl", [{"id": "s0", "raw_output": output}])
    assert run_cli("score", "-d", str(run), "-q", "--html", "").exit_code == 0
    _open(driver, run / "report.html")
    _open_record(driver, "s0")
    shown = driver.execute_script("return document.body.innerText")
    for raw in ("\u202e", "\x1b", "\u200b", "\u2066"):
        assert raw not in shown
    assert "set\\u202elive" in shown and "yes\\x1b[2J\\u200b\\u2066done" in shown
    titles = driver.execute_script(
        "return Array.from(document.querySelectorAll('[title]')).map(e => e.title).join('')"
    )
    assert "\x1b" not in titles and "\\x1b" in titles
    # The filter still selects the sample by its dataset's (raw) name.
    _select(driver, "dataset", name)
    assert _shown_ids(driver) == ["s0"]
    _no_errors(driver)


def test_an_opened_comparison_record_fits_the_window(driver: Any, tmp_path: Path) -> None:
    """Two VisualToolBench runs side by side: each side's rubric table (criterion, weight,
    verdict, explanation, raw judge output) needs 650 px, so an opened task pushed the
    comparison page to 1,400 px in a 1,100 px window. Each side now scrolls on its own."""
    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        exported = run_cli(
            "export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(run), "-q"
        )
        assert exported.exit_code == 0, exported.stderr
        for file in ("responses.jsonl", "judge_responses.jsonl"):
            shutil.copy(VTB_SAMPLE / file, run / file)
        assert run_cli("score", "-d", str(run), "-q", "--allow-missing").exit_code == 0
        runs.append(run)
    page = tmp_path / "compare.html"
    args = ["compare", str(runs[0]), str(runs[1]), "--resamples", "50", "--html", str(page)]
    assert run_cli(*args, "-q").exit_code == 0
    _open(driver, page)
    item = _open_record(driver, "vtb-a-medical-001")
    assert item.find_elements("css selector", ".side-a table")
    _no_wider_than_the_window(driver)
    _no_errors(driver)


def _clicked_accounting(driver: Any) -> dict[str, tuple[int, int, int]]:
    """Each linked accounting row: key -> (its number, the count its note says the link shows,
    the count of samples clicking it shows), clicked after another row of another facet (a
    link shows its samples alone)."""
    driver.find_element("id", "failures").click()
    found = {}
    for row in driver.find_elements("css selector", "#accounting tr"):
        buttons = row.find_elements("css selector", "button")
        if not buttons:
            continue
        cell = row.find_element("css selector", "td")
        number, shows = int(buttons[0].text.replace(",", "")), int(cell.get_attribute("data-shows"))
        buttons[0].click()
        found[row.get_attribute("data-key")] = (number, shows, _count(driver))
        assert (f"(shows {shows} " in cell.text) == (shows != number), cell.text
    return found


def test_each_judge_count_shows_the_samples_it_counts(driver: Any, tmp_path: Path) -> None:
    """A sample whose judge refused it, or whose judge lines all errored, is counted twice in
    the summary (in the seed's judge_missing_responses or judge_unparsed_verdicts, and as
    errored or refused): each of those rows' links shows exactly its number of samples. A
    sample without a response line and one whose line errored both read "missing or errored"
    (the report does not say which is which): their rows say their links show both."""
    run = tmp_path / "run"
    assert (
        run_cli("export-tasks", "all", "--source", str(SAMPLE), "-d", str(run), "-q").exit_code == 0
    )
    responses = _lines(SAMPLE / "responses.jsonl")
    direct = [t["id"] for t in _lines(run / "tasks.jsonl") if t["eval_mode"] != "judge"]
    responses = [line for line in responses if line["id"] != direct[0]]
    for line in responses:
        if line["id"] == direct[1]:
            line.update(raw_output=None, error="HTTP 500")
    _write_lines(run / "responses.jsonl", responses)
    assert run_cli("make-judge-tasks", "-d", str(run), "-q").exit_code == 0
    ids = [t["id"] for t in _lines(run / "judge_tasks.jsonl")]
    refused, filtered, errored, unparsed, _absent, *rest = ids
    _write_lines(
        run / "judge_responses.jsonl",
        [
            vllm_ok(refused, "", finish_reason="SAFETY"),
            azure_prompt_filtered(filtered),
            {"id": errored, "raw_judge_output": None, "error": "timed out"},
            {"id": unparsed, "raw_judge_output": "perhaps"},
            *({"id": i, "raw_judge_output": "true"} for i in rest),
        ],
    )
    result = run_cli("score", "-d", str(run), "-q", "--allow-missing", "--html", "")
    assert result.exit_code == 0, result.stderr
    summary = json.loads((run / "report.json").read_text())["summary"]
    assert summary["judge_missing_responses"] == 3 and summary["judge_unparsed_verdicts"] == 2
    assert summary["judge_errored_responses"] == 1 and summary["judge_refused_responses"] == 2
    _open(driver, run / "report.html")
    found = _clicked_accounting(driver)
    for key in (
        "judge_missing_responses",
        "judge_unparsed_verdicts",
        "judge_errored_responses",
        "judge_refused_responses",
    ):
        assert found[key] == (summary[key], summary[key], summary[key]), key
    assert summary["response_statuses"]["missing"] == summary["errored_responses"] == 1
    for key in ("errored_responses", "response_statuses.missing", "response_statuses.errored"):
        assert found[key] == (1, 2, 2), key
    assert all(shows == count for _, shows, count in found.values()), found
    _no_errors(driver)


def test_each_rubric_count_says_the_tasks_its_link_shows(driver: Any, tmp_path: Path) -> None:
    """VisualToolBench counts rubrics and turns, its page shows tasks: beside each linked count
    the page says how many tasks its link shows, and clicking shows that many."""
    run = tmp_path / "vtb"
    export = run_cli("export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(run))
    assert export.exit_code == 0, export.stderr
    shutil.copy(VTB_SAMPLE / "responses.jsonl", run / "responses.jsonl")
    assert run_cli("make-judge-tasks", "-d", str(run), "-q").exit_code == 0
    ids = [t["id"] for t in _lines(run / "judge_tasks.jsonl")]
    refused, filtered, errored, unparsed, _absent, *rest = ids
    met = json.dumps({"explanation": "ok", "judge_result": "Met"})
    _write_lines(
        run / "judge_responses.jsonl",
        [
            vllm_ok(refused, None, finish_reason="PROHIBITED_CONTENT"),
            azure_prompt_filtered(filtered),
            {"id": errored, "raw_judge_output": None, "error": "timed out"},
            {"id": unparsed, "raw_judge_output": "perhaps"},
            *({"id": i, "raw_judge_output": met} for i in rest),
        ],
    )
    result = run_cli("score", "-d", str(run), "-q", "--allow-missing", "--html", "")
    assert result.exit_code == 0, result.stderr
    report = json.loads((run / "report.json").read_text())
    judge = report["summary"]["judge"]
    assert (judge["refused"], judge["errored"], judge["unparsed"], judge["missing"]) == (2, 1, 1, 1)
    _open(driver, run / "report.html")
    found = _clicked_accounting(driver)
    for status in ("missing", "unparsed", "errored", "refused", "met"):
        tasks = sum(
            any(rb["status"] == status for t in r["turns"] for rb in t["rubrics"])
            for r in report["results"]
        )
        assert found[f"judge.{status}"] == (judge[status], tasks, tasks), status
    assert all(shows == count for _, shows, count in found.values()), found
    _no_errors(driver)
