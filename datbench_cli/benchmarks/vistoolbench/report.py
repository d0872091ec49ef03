"""The VisualToolBench report object: ``summary``, ``results`` (one per scored task), ``save``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.vistoolbench.model import BENCHMARK
from datbench_cli.files import jsonio


@dataclass
class VisToolBenchReport:
    """ARS/APR summary plus one result per scored task (spec §4.4), like
    :class:`datbench_cli.DatBenchReport`. ``report["summary"]`` still works, as a mapping."""

    summary: dict[str, Any]
    results: list[dict[str, Any]]
    # What was measured (``datbench score`` fills it; ``None`` leaves the key out).
    provenance: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        out: dict[str, Any] = {"benchmark": BENCHMARK, "summary": self.summary}
        if self.provenance is not None:
            out["provenance"] = self.provenance
        out["results"] = self.results
        return out

    def to_json(self) -> str:
        """The report as indented JSON text."""
        return jsonio.dumps_pretty(self.to_dict()).decode()

    def save(self, path: str | Path) -> None:
        """Write the report as JSON, atomically (a temporary file renamed into place)."""
        target = jsonio.save_target(path)
        jsonio.write_bytes_atomic(target, jsonio.dumps_pretty(self.to_dict()) + b"\n")

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]
