"""docs/exactness.md's table of what the corrected profile changes on the bundled sample data.

Scores the sample run with both profiles, runs ``datbench compare reference.json
corrected.json --json`` and renders its overall, capability and (for every dataset a fix
applies to) dataset rows as Markdown. ``python scripts/corrections_table.py`` rewrites the block
between the markers of docs/exactness.md; ``--check`` exits 1 when that page differs from
what compare gives now (the test suite runs that check).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "datbench"
README = ROOT / "docs" / "exactness.md"
START = "<!-- corrections-table:start -->"
END = "<!-- corrections-table:end -->"


def _datbench(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "datbench_cli", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    if result.returncode != 0:
        raise SystemExit(f"datbench {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def comparison(work: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The comparison JSON of the sample run's two profiles, and the corrected summary."""
    run = work / "run"
    _datbench("export-tasks", "all", "--source", str(SAMPLE), "--dir", str(run), "--quiet")
    shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
    shutil.copy(SAMPLE / "judge_responses.jsonl", run / "judge_responses.jsonl")
    for profile in ("reference", "corrected"):
        _datbench(
            "score", "--dir", str(run), "--profile", profile, "-o", str(run / f"{profile}.json"),
            "--quiet",
        )  # fmt: skip
    out = _datbench("compare", str(run / "reference.json"), str(run / "corrected.json"), "--json")
    corrected = json.loads((run / "corrected.json").read_text(encoding="utf-8"))
    return json.loads(out), corrected["summary"]


def _points(value: float) -> str:
    return f"{value * 100:.1f}"


def _row(label: str, row: dict[str, Any], fixes: str) -> str:
    block = row["metrics"]["accuracy"]
    test = block["mcnemar"]
    return (
        f"| {label} | {row['n']} | {_points(block['a'])} | {_points(block['b'])} | "
        f"{block['difference'] * 100:+.1f} | {test['c']} / {test['b']} | {fixes} |"
    )


def render(compared: dict[str, Any], summary: dict[str, Any]) -> str:
    """The Markdown table: overall, each capability, each dataset with a fix."""
    corrections: dict[str, dict[str, int]] = summary["corrections"]
    tables = {table["key"]: table for table in compared["tables"]}
    lines = [
        "| group | n | reference % | corrected % | Δ points | wrong→right / right→wrong "
        "| fixes (samples changed) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in tables["overall"]["rows"]:
        lines.append(_row("**overall**", row, ""))
    for row in tables["capabilities"]["rows"]:
        lines.append(_row(f"**{row['name']}**", row, ""))
    for row in tables["datasets"]["rows"]:
        fixes = corrections.get(row["name"])
        if fixes:
            named = ", ".join(f"`{fix}` {count}" for fix, count in fixes.items())
            lines.append(_row(f"`{row['name']}`", row, named))
    return "\n".join(lines)


def current_table() -> str:
    with tempfile.TemporaryDirectory() as work:
        return render(*comparison(Path(work)))


def readme_table(text: str) -> str:
    """The table between the page's markers."""
    start, end = text.index(START) + len(START), text.index(END)
    return text[start:end].strip("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/exactness.md is stale")
    args = parser.parse_args()
    table = current_table()
    text = README.read_text(encoding="utf-8")
    if args.check:
        if readme_table(text) != table:
            print(
                "docs/exactness.md's corrections table differs from compare's numbers",
                file=sys.stderr,
            )
            return 1
        return 0
    start, end = text.index(START) + len(START), text.index(END)
    README.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
