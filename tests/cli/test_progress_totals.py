"""Progress totals where they are knowable: an export of local parquet files knows its rows
from the files' footers (not "2007/?"), capped by --limit."""

from __future__ import annotations

import json

from datbench_cli.benchmarks.datbench import export
from tests.cli_helpers import SAMPLE


def test_local_export_knows_its_total_before_reading_rows() -> None:
    manifest_counts = {"math": 16, "chart": 23}
    plan = export.plan_export(list(manifest_counts), str(SAMPLE), "test", None)
    assert plan.rows == manifest_counts
    assert plan.total == sum(manifest_counts.values())
    limited = export.plan_export(list(manifest_counts), str(SAMPLE), "test", 5)
    assert limited.total == 10


def test_the_totals_agree_with_what_is_exported(tmp_path: object) -> None:
    from tests.cli_helpers import run_cli

    run = tmp_path / "run"  # type: ignore[operator]
    assert (
        run_cli("export-tasks", "math", "--source", str(SAMPLE), "-d", str(run), "-q").exit_code
        == 0
    )
    counts = json.loads((run / "datbench.json").read_text(encoding="utf-8"))["counts"]
    assert export.plan_export(["math"], str(SAMPLE), "test", None).total == counts["samples"]
