"""docs/architecture.md, the newcomer's map, names every module of the packages it lists file
by file (a module added without a line there is a place the map does not show)."""

from __future__ import annotations

import re

import pytest

from tests.cli_helpers import ROOT

MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
# Packages the map lists module by module, by file name or (the last five) by module name
# (scorers/, metrics/ and text/ are described as a whole: one module per scorer, primitives,
# helpers).
BY_FILE = ("files", "batch", "runtime", "cli", "report_html", "benchmarks")
BY_NAME = (
    "compare",
    "leaderboard",
    "benchmarks/datbench",
    "benchmarks/vistoolbench",
    "benchmarks/vistoolbench/agent",
)


@pytest.mark.parametrize("package", BY_FILE + BY_NAME)
def test_every_module_is_on_the_map(package: str) -> None:
    folder = ROOT / "datbench_cli" / package
    missing = [
        path.name
        for path in sorted(folder.glob("*.py"))
        if path.name != "__init__.py"
        and not re.search(
            rf"(?<![\w.]){re.escape(path.name if package in BY_FILE else path.stem)}(?![\w])",
            MAP,
        )
    ]
    assert missing == [], f"datbench_cli/{package}/ modules missing from docs/architecture.md"
