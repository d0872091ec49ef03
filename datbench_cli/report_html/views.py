"""The table of report views: which module turns a benchmark's report into page data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datbench_cli.report_html import datbench_view, vistoolbench_view
from datbench_cli.report_html.inputs import Images, RunFiles

PageData = Callable[[RunFiles, Images], dict[str, Any]]
Records = Callable[[RunFiles, Images], list[dict[str, Any]]]

VIEWS: dict[str, tuple[PageData, Records]] = {
    "datbench": (datbench_view.page_data, datbench_view.records),
    "vistoolbench": (vistoolbench_view.page_data, vistoolbench_view.records),
}


def benchmark_of(files: RunFiles) -> str:
    """The report's benchmark: its own ``benchmark`` key, else the manifest's, else DatBench
    (whose reports follow the seed API's shape, without the key)."""
    for source in (files.report, files.manifest or {}):
        name = source.get("benchmark")
        if isinstance(name, str) and name in VIEWS:
            return name
    return "datbench"
