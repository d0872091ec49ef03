"""The leaderboard page in a real headless Chromium: the table holds every run with the
JSON's numbers, the plots are inline SVG, nothing is fetched, no script runs (an injected
label stays text), and the different-data banner shows when runs were allowed to differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.leaderboard.support import datbench_report, flipped
from tests.report_html.test_page_browser import _no_errors, _open, _shot

BASE = [i % 9 not in (0, 4, 8) for i in range(150)]
INJECT = "<b>x<i>y<script>alert(1)"  # no '=' or '/': a LABEL= label cannot hold them


def _build(
    tmp: Path, *extra: str, revision: str = "rev-1", first: str = f"step1000{INJECT}"
) -> tuple[Path, dict[str, Any]]:
    paths = [
        datbench_report(tmp / "c1" / "report.json", flipped(BASE, 30, False)),
        datbench_report(tmp / "c2" / "report.json", BASE),
        datbench_report(tmp / "c3" / "report.json", flipped(BASE, 30, True), revision=revision),
    ]
    args = [f"{first}={paths[0]}", f"step2000={paths[1]}", f"step3000={paths[2]}"]
    page = tmp / "board.html"
    result = run_cli("leaderboard", *args, "--trend", "--html", str(page), *extra)
    assert result.exit_code == 0, result.stderr
    data = run_cli("leaderboard", *args, "--trend", "--json", *extra)
    return page, json.loads(data.stdout)


def test_page_in_chromium(driver: Any, tmp_path: Path) -> None:  # noqa: F811
    page, data = _build(tmp_path)
    text = page.read_text()
    for fetch in ('src="http', "src='http", 'href="http', "url(http", "<link", "@import"):
        assert fetch not in text  # nothing to fetch
    assert "<script" not in text
    _open(driver, page)
    rows = driver.find_elements("css selector", "#leaderboard tr")
    assert len(rows) == 1 + len(data["runs"])
    headers = [c.text for c in rows[0].find_elements("css selector", "th")]
    at = headers.index("accuracy [95%]")
    by_label = {run["label"]: run for run in data["runs"]}
    axis = [by_label[point["label"]] for point in data["trend"]["axis"]]  # checkpoint order
    for row, run in zip(rows[1:], axis, strict=True):
        cells = [c.text for c in row.find_elements("css selector", "td")]
        assert cells[0] == run["label"]  # the injected markup, shown as text
        assert cells[1] == str(run["rank"])
        assert cells[2] == run["group"]
        assert cells[3] == ("yes" if run["better_than_every_earlier"] else "")
        score = run["overall"]
        assert cells[at] == (
            f"{score['score'] * 100:.1f} [{score['low'] * 100:.1f}, {score['high'] * 100:.1f}]"
        )
    for plot in ("plot-headline", "plot-groups", "plot-trend"):
        svg = driver.find_element("css selector", f"#{plot} svg")
        assert svg.size["width"] > 200 and svg.size["height"] > 100
    assert driver.find_elements("css selector", "#different-data") == []
    assert "step3000" in driver.find_element("id", "notes").text
    _no_errors(driver)


def test_page_marks_different_data(driver: Any, tmp_path: Path) -> None:  # noqa: F811
    page, data = _build(tmp_path, "--allow-different-data", revision="rev-2")
    assert data["differences"]
    _open(driver, page)
    banner = driver.find_element("id", "different-data")
    assert "revision differs" in banner.text
    _no_errors(driver)


def test_page_screenshot(driver: Any, tmp_path: Path) -> None:  # noqa: F811
    """The README's picture (DATBENCH_UPDATE_SCREENSHOTS=1 copies it into docs/screenshots)."""
    page, _ = _build(tmp_path, first="step1000")
    _open(driver, page)
    _shot(driver, "leaderboard", tmp_path)
    _no_errors(driver)


if __name__ == "__main__":
    pytest.main([__file__])
