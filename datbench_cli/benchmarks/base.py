"""The protocol every benchmark implements, and the plain data it hands the command line.

A benchmark is one folder under ``datbench_cli/benchmarks/`` and one line in
:data:`datbench_cli.benchmarks.BENCHMARKS`. The command line resolves the benchmark once (from
the export targets or the run directory's manifest), checks the options against
:meth:`Benchmark.options`, and calls these methods; it never names a benchmark.

Library code prints nothing: it reports through :class:`Events` callbacks, and returns tables as
:class:`SummaryTable` data that the command line renders.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from datbench_cli.batch.requests import RequestSettings
from datbench_cli.batch.shards import Shard
from datbench_cli.files.rundir import RunDir

if TYPE_CHECKING:
    from datbench_cli.compare.spec import Side
    from datbench_cli.report_html.inputs import Images, RunFiles

Warn = Callable[[str], None]
Advance = Callable[[int], None]
ProgressFactory = Callable[[str, int | None, str | None], AbstractContextManager[Advance]]


def ignore(_: Any) -> None:
    """A callback that drops what it is given."""
    return None


@contextlib.contextmanager
def no_progress(_label: str, _total: int | None, _unit: str | None = None) -> Iterator[Advance]:
    """A progress factory that shows nothing."""
    yield ignore


@dataclass
class Events:
    """How a stage talks to its caller: info lines, warnings and a progress bar."""

    info: Warn = ignore
    warn: Warn = ignore
    progress: ProgressFactory = no_progress


@dataclass(frozen=True)
class ExportRequest:
    """What ``export-tasks`` asks of a benchmark. ``selection``: what the benchmark made of the
    targets (DatBench: capabilities); ``options``: the benchmark's own options, by name."""

    selection: Sequence[str]
    source: str | None
    split: str
    limit: int | None
    shard: Shard | None
    requests: RequestSettings | None
    options: Mapping[str, Any] = field(default_factory=dict)
    # Hub sources: the branch, tag or commit to load; ``force``: export into a non-empty
    # directory that holds no export (files there are never deleted or overwritten).
    revision: str | None = None
    force: bool = False
    no_image: bool = False  # a blind run: the same tasks without images


@dataclass(frozen=True)
class ScoreRequest:
    """What ``score`` asks of a benchmark; ``options`` holds the benchmark's own options.

    ``allow_missing`` and ``fail_under`` (a fraction in [0, 1]) select checks, ``verify_images``
    how the images are checked (docs/provenance.md); the benchmark
    records every check's outcome in the report (see :mod:`datbench_cli.benchmarks.checks`).
    """

    responses: Path
    judge_responses: Path | None
    strict_judge: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    allow_missing: bool = False
    fail_under: float | None = None
    verify_images: bool = False  # hash every image (default: sizes and modification times)


@dataclass
class JudgeTasksWritten:
    """What ``make-judge-tasks`` wrote."""

    count: int
    skipped_done: int = 0
    request_files: list[Path] = field(default_factory=list)


@dataclass
class JudgeCheck:
    """What ``check-judge`` found: one count line, the ids whose verdict does not count,
    ``problem``, the sentence a failed check says (``None``: passed), and the warnings reading
    the files gave (a torn last line, keys no reader uses, ...)."""

    counts: dict[str, int]
    unparsed_ids: list[str]
    line: str
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class SummaryTable:
    """A terminal table as plain data: a title, column headers (the first is the group
    name, the rest are right-aligned numbers) and sections of rows of text cells.

    ``optional``: columns (by index) that a narrow terminal may drop, last first, before any
    number would be cut; ``legend``: ``(column header, text)`` lines printed under the table
    when that column is shown (a header naming no column: always).
    """

    title: str
    columns: list[str]
    sections: list[list[list[str]]]
    optional: list[int] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Headline:
    """The number ``--fail-under`` gates on: its name and value (``None`` over nothing)."""

    name: str
    value: float | None


class Report(Protocol):
    """What scoring returns, for every benchmark."""

    summary: dict[str, Any]
    results: list[Any]

    def to_dict(self) -> dict[str, Any]: ...

    def save(self, path: str | Path) -> None: ...


class Benchmark(Protocol):
    """One benchmark: its name, its options and its stages."""

    name: str
    title: str
    default_source: str
    # Optional runners a benchmark brings: a tool-using agent (``datbench agent``), and an
    # importer of an official runner's result files (``datbench import-responses``).
    has_agent: bool
    imports_official: bool

    def import_official(self, path: Path, run: RunDir) -> Any:
        """The run's responses from an official runner's result file (``None``: this
        benchmark has no importer)."""
        ...

    def array_hint(self, start: bytes, path: Path) -> tuple[str, str] | None:
        """``(message, hint)`` when a JSON array given for a JSON Lines file (``start``: its
        first bytes) is a format this benchmark imports, else ``None`` (see
        :func:`datbench_cli.files.jsonio.recognise_arrays`)."""
        ...

    def line_hint(self, line: dict[str, Any]) -> str | None:
        """The hint when a response or judge line is a record of a format this benchmark
        imports, else ``None`` (see :func:`datbench_cli.batch.line_keys.recognise_lines`)."""
        ...

    def select(self, targets: Sequence[str]) -> list[str] | None:
        """What these export targets mean to this benchmark (``None``: not this one's)."""
        ...

    def target_help(self) -> str:
        """How the benchmark's export targets are named, for help and errors."""
        ...

    def options(self, command: str) -> frozenset[str]:
        """The command-specific options this benchmark accepts for ``command`` (parameter
        names, as the command line declares them)."""
        ...

    def export(self, run: RunDir, request: ExportRequest, events: Events) -> dict[str, Any]:
        """Write the run directory; returns the manifest."""
        ...

    def make_judge_tasks(
        self,
        run: RunDir,
        responses: Path,
        out: Path,
        *,
        skip_done: Path | None,
        requests: RequestSettings | None,
        events: Events,
    ) -> JudgeTasksWritten: ...

    def score(self, run: RunDir, request: ScoreRequest, events: Events) -> Report:
        """The report, with the outcome of every check in ``summary.checks`` (a failed check
        raises nothing: the caller writes the report, then fails)."""
        ...

    def judge_line_shape(self, line: dict[str, Any]) -> bool:
        """Whether one judge response line (a parsed JSONL object: native or batch output)
        has this benchmark's id shape; ``check-judge`` outside a run directory picks the
        benchmark whose shape the file's lines have."""
        ...

    def check_judge(self, run: RunDir | None, path: Path, responses: Path) -> JudgeCheck:
        """The judge half of ``score --strict-judge`` in a run directory (``responses``: the
        responses the verdicts must match); outside one (``run`` is ``None``), the verdicts
        parsed alone."""
        ...

    def summary_table(self, report: Report) -> SummaryTable: ...

    def summary_notes(self, report: Report) -> list[str]: ...

    def headline(self, report: Report) -> Headline: ...

    def pairing(self) -> Side:
        """How ``datbench compare`` reads this benchmark's reports: samples, metrics, tables."""
        ...

    def page_data(self, files: RunFiles, images: Images) -> dict[str, Any]:
        """A finished report (and its run directory's task files) as the HTML page's data:
        headline, charts, tables, accounting and one browser record per sample or task."""
        ...
