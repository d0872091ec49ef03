"""A report whose results were written to a file as they were scored, not held in memory.

``score`` on 200,000 samples would otherwise hold 200,000 :class:`SampleScore` objects with
their details until the report is written. Here each result entry arrives as the report's own
indented JSON bytes (see :mod:`~datbench_cli.benchmarks.datbench.records`) and goes to an
anonymous temporary file; :meth:`StreamedReport.save` writes the summary and provenance and
then copies the entries after them, so the file is byte for byte what
:meth:`DatBenchReport.save` writes for the same results.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson

from datbench_cli.benchmarks.datbench.columns import ScoreColumns
from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.files import jsonio

_BUFFER = 1 << 20
_EMPTY_TAIL = b'"results": []\n}'


class ResultSpill:
    """The result entries of a report, appended in sample order to an unnamed temporary file
    (in ``directory`` where possible: it vanishes with the process, whatever happens)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.count = 0
        self._file: IO[bytes]
        try:
            self._file = tempfile.TemporaryFile(dir=directory, buffering=_BUFFER)
        except OSError:
            self._file = tempfile.TemporaryFile(buffering=_BUFFER)

    def add(self, entry: bytes) -> None:
        """One result entry (indented JSON bytes, without separator)."""
        if self.count:
            self._file.write(b",\n")
        self._file.write(entry)
        self.count += 1

    def copy_to(self, out: Any) -> None:
        """Write every entry, separated as in the report, to ``out``."""
        self._file.flush()
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, _BUFFER)

    def read(self) -> bytes:
        self._file.flush()
        self._file.seek(0)
        return self._file.read()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()


class StreamedReport(DatBenchReport):
    """A :class:`DatBenchReport` whose ``results`` live in a :class:`ResultSpill`;
    ``table`` keeps the per-sample scores the terminal summary groups."""

    def __init__(
        self,
        summary: dict[str, Any],
        spill: ResultSpill,
        table: ScoreColumns,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(summary=summary, results=[], provenance=provenance)
        self.spill = spill
        self.table = table

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["results"] = orjson.loads(b"[" + self.spill.read() + b"]")
        return out

    def save(self, path: str | Path) -> None:
        """Write the report as JSON, atomically, streaming the results from the spill."""
        target = path if isinstance(path, Path) else Path(path)
        head = super().to_dict()  # results: []
        text = jsonio.dumps_pretty(head)
        assert text.endswith(_EMPTY_TAIL)
        with jsonio.atomic_writer(target) as out:
            if not self.spill.count:
                out.write(text + b"\n")
                return
            out.write(text[: -len(_EMPTY_TAIL)] + b'"results": [\n')
            self.spill.copy_to(out)
            out.write(b"\n  ]\n}\n")
