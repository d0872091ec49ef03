"""Fixtures shared across the suite. Under pytest-xdist each worker is its own process, so a
session-scoped fixture is built once per worker: one headless browser per worker at most."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not CHROMIUM.is_file() or not DRIVER.is_file():
        return "chromium / chromium-driver are not installed (.ci/run installs them)"
    return None


@pytest.fixture(scope="session")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium for the page tests, started once per worker (only if a test asks)."""
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser test cannot run under CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1100,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:
        yield browser
    finally:
        browser.quit()


# Tests of what the operating system does with our processes and files (kills, full disks,
# locks, renames, a browser, the README's shell, the sandbox under the wheel's binary and as
# an ordinary user): they depend on the kernel and the tools, not on the Python version, so
# `make test` runs them on the oldest supported Python only (marker `one_python`). Everything
# that runs Python code differently per version (scorers, parsing, the pool, the CLI, the
# sandbox under the system's bwrap) runs on both.
ONE_PYTHON = (
    "tests/robustness/",
    "tests/project/test_readme.py",
    "tests/report_html/test_page_browser.py",
    "tests/leaderboard/test_page_browser.py",
    "tests/cli/test_vtb_agent_kill.py",
    "tests/benchmarks/test_vtb_sandbox.py::WheelBwrapTests",
    "tests/benchmarks/test_vtb_sandbox.py::OrdinaryUserTests",
)
BOTH_PYTHONS = ("tests/robustness/test_pool.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(ONE_PYTHON) and not item.nodeid.startswith(BOTH_PYTHONS):
            item.add_marker(pytest.mark.one_python)
