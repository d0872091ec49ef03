"""The benchmarks, as peers, behind one protocol (:mod:`datbench_cli.benchmarks.base`).

:data:`BENCHMARKS` is the one table of them: adding a benchmark is one folder beside
``datbench/`` and ``vistoolbench/`` and one line here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from datbench_cli.batch.line_keys import recognise_lines
from datbench_cli.benchmarks.base import Benchmark
from datbench_cli.benchmarks.datbench.benchmark import DatBench
from datbench_cli.benchmarks.vistoolbench.benchmark import VisToolBench
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files.jsonio import iter_jsonl, recognise_arrays
from datbench_cli.files.rundir import MANIFEST, RunDir

_SHAPE_LINES = 1000  # judge lines looked at to tell a file's benchmark

BENCHMARKS: dict[str, Benchmark] = {
    "datbench": DatBench(),
    "vistoolbench": VisToolBench(),
}
# The JSON arrays a benchmark imports are named by it when given for a JSON Lines file.
recognise_arrays(*(b.array_hint for b in BENCHMARKS.values()))
recognise_lines(*(b.line_hint for b in BENCHMARKS.values()))


def targets_help() -> str:
    """Every benchmark's export targets, for help texts and errors."""
    return "; ".join(b.target_help() for b in BENCHMARKS.values())


def for_targets(targets: Sequence[str]) -> tuple[Benchmark, list[str]]:
    """The benchmark that the export targets name, and what it made of them."""
    if not targets:
        raise InputError(f"name at least one target: {targets_help()}")
    for benchmark in BENCHMARKS.values():
        selection = benchmark.select(targets)
        if selection is None:
            continue
        for other in BENCHMARKS.values():
            if other is not benchmark and any(other.select([t]) is not None for t in targets):
                raise InputError(
                    f"{other.name} cannot be exported together with {benchmark.name} targets"
                )
        return benchmark, selection
    raise InputError(f"unknown target {targets[0]!r}; valid targets: {targets_help()}")


def named(name: object, run: RunDir) -> Benchmark:
    """The benchmark the manifest of ``run`` names (an unknown name is an input error, said of
    the manifest, the file that holds it)."""
    if isinstance(name, str) and name in BENCHMARKS:
        return BENCHMARKS[name]
    raise InputError(
        f"unknown benchmark {name!r} (known: {', '.join(BENCHMARKS)}); "
        "run `datbench export-tasks` again",
        run.path(MANIFEST),
    )


def of_run(run: RunDir) -> Benchmark:
    """The benchmark of an export, its manifest checked (:meth:`RunDir.read_manifest`)."""
    return named(run.read_manifest()["benchmark"], run)


def command_options(command: str) -> frozenset[str]:
    """Every benchmark-specific option of ``command`` (accepted by some benchmark only)."""
    return frozenset().union(*(b.options(command) for b in BENCHMARKS.values()))


def for_judge_file(path: Path) -> Benchmark:
    """The benchmark whose judge id shape the lines of ``path`` have (outside a run
    directory). A file without a recognisable line is read as the first benchmark reads it;
    lines of several shapes are a usage error (``--benchmark`` decides)."""
    found: list[Benchmark] = []
    try:
        for number, line in iter_jsonl(path):
            found += [b for b in BENCHMARKS.values() if b not in found and b.judge_line_shape(line)]
            if number >= _SHAPE_LINES or len(found) > 1:
                break
    except InputError:
        pass  # the check itself reports the file's defect, with its line
    if len(found) > 1:
        raise UsageError(
            f"{path}: the judge ids have the shapes of several benchmarks "
            f"({', '.join(b.name for b in found)})",
            hint="name the benchmark: --benchmark NAME, or run check-judge in the run directory",
        )
    return found[0] if found else next(iter(BENCHMARKS.values()))


def chosen(name: str) -> Benchmark:
    """The benchmark a ``--benchmark`` option names (an unknown name is a usage error)."""
    if name in BENCHMARKS:
        return BENCHMARKS[name]
    raise UsageError(f"unknown benchmark {name!r}; choose {' or '.join(BENCHMARKS)}")
