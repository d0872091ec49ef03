"""A report whose results were stored as they were scored, not held in memory.

``score`` on 200,000 samples would otherwise hold 200,000 :class:`SampleScore` objects with
their details until the report is written. Here each result entry arrives as the report's own
indented JSON bytes (see :mod:`~datbench_cli.benchmarks.datbench.records`) and becomes a row of
a private run store (:mod:`~datbench_cli.files.run_store`); :meth:`StreamedReport.save` writes
the summary and provenance and then the entries after them, in sample order, so the file is
byte for byte what :meth:`DatBenchReport.save` writes for the same results.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.files import jsonio, run_store
from datbench_cli.files.run_store import BlobTable

if TYPE_CHECKING:
    from datbench_cli.benchmarks.datbench.columns import ScoreColumns

_EMPTY_TAIL = b'"results": []\n}'


def result_table() -> BlobTable:
    """A table for the result entries of one report, in a private store of its own."""
    return BlobTable(run_store.connect(), "results")


class StreamedReport(DatBenchReport):
    """A :class:`DatBenchReport` whose ``results`` are the rows of ``entries``; ``table`` keeps
    the per-sample scores the terminal summary groups."""

    def __init__(
        self,
        summary: dict[str, Any],
        entries: BlobTable,
        table: ScoreColumns,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(summary=summary, results=[], provenance=provenance)
        self.entries = entries
        self.table = table

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["results"] = orjson.loads(b"[" + b",\n".join(self.entries.blobs()) + b"]")
        return out

    def save(self, path: str | Path) -> None:
        """Write the report as JSON, atomically, the results streamed from the store."""
        target = path if isinstance(path, Path) else Path(path)
        head = super().to_dict()  # results: []
        text = jsonio.dumps_pretty(head)
        assert text.endswith(_EMPTY_TAIL)
        with jsonio.atomic_writer(target) as out:
            if not self.entries.count:
                out.write(text + b"\n")
                return
            out.write(text[: -len(_EMPTY_TAIL)] + b'"results": [\n')
            separator = b""
            for entry in self.entries.blobs():
                out.write(separator + entry)
                separator = b",\n"
            out.write(b"\n  ]\n}\n")
