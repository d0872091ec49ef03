"""The browser records of a run's page without its images: what two run directories of the
same export (a shard's and an unsharded one) must show alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datbench_cli.report_html.build import _run_data
from datbench_cli.report_html.inputs import Images, locate


def _without_images(value: Any) -> Any:
    if isinstance(value, list):
        return [
            _without_images(v)
            for v in value
            if not (isinstance(v, dict) and v.get("h") in ("Image", "Images"))
        ]
    if isinstance(value, dict):
        return {k: _without_images(v) for k, v in value.items()}
    return value


def page_records(run_dir: Path) -> dict[str, Any]:
    """Record id -> the page's record of it, image blocks left out (a shard has only its own)."""
    files = locate(run_dir)
    data = _run_data(files, Images(files.run_dir, run_dir))
    return {r["id"]: _without_images(r) for r in data["browser"]["records"]}
