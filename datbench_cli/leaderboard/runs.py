"""The runs of a leaderboard: ``[LABEL=]PATH`` arguments read one at a time, a slice of
results at a time (:mod:`.reports`), into compact arrays, labelled, and checked to be
comparable."""

from __future__ import annotations

import multiprocessing
import os
import re
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datbench_cli.benchmarks import BENCHMARKS
from datbench_cli.compare.inputs import (
    RunReport,
    changed_inputs,
    coverage_and_warnings,
    identity,
    identity_differences,
)
from datbench_cli.compare.spec import Columns, Side
from datbench_cli.errors import InputError, UsageError
from datbench_cli.leaderboard import reports
from datbench_cli.runtime.pool import owned_worker, usable_cpus

_LABEL = re.compile(r"^([^=/\\]+)=(.+)$")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_WORKERS = 4  # processes reading reports at once (no more than the cores)
_AHEAD = 4  # runs read but not yet taken: bounds the memory they hold


@dataclass
class Ids:
    """Every sample id seen, numbered in order of first appearance (shared by all runs)."""

    codes: dict[str, int] = field(default_factory=dict)

    def code_all(self, sample_ids: list[str]) -> np.ndarray:
        """The codes of ``sample_ids``, numbering the new ones."""
        return _codes(self.codes, sample_ids, np.int64)


def _codes(table: dict[Any, int], keys: list[Any], dtype: Any) -> np.ndarray:
    """The codes of ``keys`` in ``table``, adding new keys in order of first appearance."""
    found = list(map(table.get, keys))
    if None in found:
        for key in keys:
            if key not in table:
                table[key] = len(table)
        found = list(map(table.__getitem__, keys))
    return np.array(found, dtype=dtype)


def _check_hashes(checks: list[list[Any]], count: int) -> np.ndarray:
    """Per sample, a hash of its ``Sample.check`` tuple (equal for equal reprs): the tuple's
    own hash when it holds only strings (repr-equal exactly when equal), else its repr's."""
    rows = zip(*checks, strict=True) if checks else iter([()] * count)
    if all(set(map(type, column)) <= {str} for column in checks):
        return np.fromiter(map(hash, rows), dtype=np.int64, count=count)
    return np.fromiter(
        (
            hash(row) if all(type(value) is str for value in row) else hash(repr(row))
            for row in rows
        ),
        dtype=np.int64,
        count=count,
    )


@dataclass
class Run:
    """One run as the leaderboard needs it: per sample (in the order of ``index``, the shared
    id codes) each metric's score, the 0/1 outcome of metrics with an exact test, the group
    (capability) and a hash of what must agree between runs for the same id."""

    label: str
    given: Path
    report_path: Path
    benchmark: str
    profile: str
    identity: dict[str, Any]
    model: str | None
    judge_models: list[str]
    coverage: str | None
    warnings: list[str]
    index: np.ndarray
    values: dict[str, np.ndarray]
    correct: dict[str, np.ndarray]
    group: np.ndarray  # codes into ``group_names``
    group_names: list[str]
    checks: np.ndarray

    @property
    def n(self) -> int:
        return len(self.index)


def split_label(argument: str) -> tuple[str | None, Path]:
    """``LABEL=PATH`` -> (label, path); a bare PATH (or one that exists as written) ->
    (None, path)."""
    found = _LABEL.match(argument)
    if found is None or _exists(Path(argument)):
        return None, Path(argument)
    return found.group(1).strip() or None, Path(found.group(2))


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the system cannot look up (a long label makes the
    whole ``LABEL=PATH`` longer than a file name may be) does not."""
    try:
        return path.exists()
    except OSError:
        return False


def label_number(label: str) -> float | None:
    """The number a label carries (``step1000`` -> 1000; the last number in it), if any."""
    numbers = _NUMBER.findall(label)
    return float(numbers[-1]) if numbers else None


def _models(report: dict[str, Any], name: str) -> Counter[str]:
    block = report.get("provenance")
    inputs = block.get("inputs") if isinstance(block, dict) else None
    entry = inputs.get(name) if isinstance(inputs, dict) else None
    models = entry.get("models") if isinstance(entry, dict) else None
    if not isinstance(models, dict):
        return Counter()
    return Counter({str(k): int(v) for k, v in models.items() if isinstance(v, int)})


@dataclass
class _Columns:
    """A run's per-sample arrays, built a slice of results at a time."""

    ids: list[str] = field(default_factory=list)
    values: dict[str, list[np.ndarray]] = field(default_factory=dict)
    correct: dict[str, list[np.ndarray]] = field(default_factory=dict)
    group: list[np.ndarray] = field(default_factory=list)
    checks: list[np.ndarray] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)

    def add(self, part: Columns, side: Side, field_name: str | None) -> None:
        count = len(part.ids)
        self.ids += part.ids
        if field_name:
            names = part.groups.get(field_name, [""] * count)
            self.group.append(_codes(self.names, names, np.int32))
        else:
            self.group.append(np.zeros(count, dtype=np.int32))
        for m in side.metrics:
            self.values.setdefault(m.key, []).append(part.values[m.key])
            if m.exact_test:
                self.correct.setdefault(m.key, []).append(part.correct[m.key])
        self.checks.append(_check_hashes(part.checks, count))


def _join(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _read_columns(path: Path) -> tuple[RunReport, Side, _Columns]:
    """The run's head and its columns: streamed where the layout allows, else read whole
    (which also names the entry of a malformed result exactly)."""
    for reader in (reports.streamed, reports.whole):
        try:
            loaded, slices = reader(path)
            if loaded.benchmark not in BENCHMARKS:
                raise InputError(f"unknown benchmark {loaded.benchmark!r}", loaded.report_path)
            side = BENCHMARKS[loaded.benchmark].pairing()
            field_name = _group_field(side)
            columns = _Columns()
            for piece in slices:
                columns.add(_piece(piece, side, loaded.report_path), side, field_name)
            return loaded, side, columns
        except reports.NotStreamable:
            continue
        except InputError:
            if reader is reports.whole:
                raise
    raise AssertionError("unreachable: the whole reader never raises NotStreamable")


def _piece(piece: bytes | list[Any], side: Side, path: Path) -> Columns:
    """A slice of results as columns: straight from its bytes where the benchmark can, else
    parsed and read sample by sample."""
    if isinstance(piece, bytes):
        fast = side.columns(piece) if side.columns is not None else None
        if fast is not None:
            return fast
        piece = reports.parse(piece)
    return Columns.of(side.read(piece, path), side)


def read_run(argument: str) -> tuple[Run, list[str]]:
    """Read one ``[LABEL=]PATH`` argument: the run (its ``index`` still empty) and its sample
    ids in order."""
    label, path = split_label(argument)
    if not path.exists():
        raise InputError("no such run directory or report file", path)
    loaded, side, columns = _read_columns(path)
    if len(set(columns.ids)) != len(columns.ids):
        raise InputError("the results hold a sample id more than once", loaded.report_path)
    side.check_count(loaded.report["summary"], len(columns.ids), loaded.report_path)
    responders = _models(loaded.report, "responses")
    model = responders.most_common(1)[0][0] if responders else None
    coverage, warnings = coverage_and_warnings(loaded.report["summary"])
    warnings += changed_inputs(loaded.report, loaded.report_path)
    # The absolute path's: a run given as `.` or `report.json` is named by its folder too.
    folder = os.path.basename(
        os.path.abspath(loaded.report_path.parent if path.is_file() else path)
    )
    run = Run(
        label=label or model or folder or str(path),
        given=path,
        report_path=loaded.report_path,
        benchmark=loaded.benchmark,
        profile=loaded.profile,
        identity=identity(loaded),
        model=model,
        judge_models=sorted(_models(loaded.report, "judge_responses")),
        coverage=coverage,
        warnings=warnings,
        index=np.zeros(0, dtype=np.int64),
        values={m.key: _join(columns.values.get(m.key, []), float) for m in side.metrics},
        correct={
            m.key: _join(columns.correct.get(m.key, []), bool) for m in side.metrics if m.exact_test
        },
        group=_join(columns.group, np.int32),
        group_names=list(columns.names),
        checks=_join(columns.checks, np.int64),
    )
    return run, columns.ids


def _group_field(side: Side) -> str | None:
    """The field of the benchmark's first grouped comparison table (DatBench: capability;
    VisualToolBench: turncase)."""
    return next((spec.group for spec in side.tables if spec.group is not None), None)


def read_runs(arguments: list[str]) -> tuple[list[Run], str | None]:
    """Every run, labelled uniquely, and the field the per-group columns are by."""
    if len(arguments) < 2:
        raise UsageError("name at least two runs (PATH or LABEL=PATH)")
    ids = Ids()
    runs = []
    for run, sample_ids in _read_all(arguments):
        if not sample_ids:  # no score at all: ranked, it would pass for a score of 0
            raise InputError(
                "the report holds no scored result: nothing to rank",
                run.report_path,
                hint="leave this run out, or score its responses first",
            )
        run.index = ids.code_all(sample_ids)
        runs.append(run)
    _unique_reports(runs)  # first: one run given twice is not a matter of labels
    _unique_labels(runs, arguments)
    return runs, _group_field(BENCHMARKS[runs[0].benchmark].pairing())


def _read_all(arguments: list[str]) -> Iterator[tuple[Run, list[str]]]:
    """Every argument read, in order: by a pool of forked worker processes (one a core, at
    most :data:`_WORKERS`; forked, so they hash the checks as this process would) at most
    :data:`_AHEAD` runs ahead of this process, or here where there is one core or no fork."""
    workers = min(usable_cpus(), _WORKERS, len(arguments))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(read_run, arguments)
        return
    with ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=owned_worker,  # ignores Ctrl-C, dies with this process
        initargs=(os.getpid(),),
    ) as pool:
        pending = deque(pool.submit(read_run, argument) for argument in arguments[:_AHEAD])
        later = iter(arguments[_AHEAD:])
        try:
            while pending:
                done = pending.popleft().result()
                following = next(later, None)
                if following is not None:
                    pending.append(pool.submit(read_run, following))
                yield done
        finally:
            pool.shutdown(cancel_futures=True)


def _unique_reports(runs: list[Run]) -> None:
    """A usage error when two arguments name one report (a run ranked against itself)."""
    first: dict[str, Run] = {}
    for run in runs:
        seen = first.setdefault(os.path.realpath(run.report_path), run)
        if seen is not run:
            raise UsageError(
                f"{run.report_path} is given twice (as {str(seen.given)!r} and "
                f"{str(run.given)!r}); "
                "a run ranked against itself says nothing",
                hint="name each run once",
            )


def _unique_labels(runs: list[Run], arguments: list[str]) -> None:
    counts = Counter(run.label for run in runs)
    for run, argument in zip(runs, arguments, strict=True):
        if counts[run.label] > 1 and split_label(argument)[0] is None:
            run.label = run.given.name if run.given.is_dir() else str(run.given)
    seen = Counter(run.label for run in runs)
    twice = [label for label, count in seen.items() if count > 1]
    if twice:
        raise UsageError(
            f"the label {twice[0]!r} names more than one run",
            hint="label runs explicitly: LABEL=PATH",
        )


def differences(runs: list[Run]) -> list[str]:
    """Why the runs are not comparable, one phrase each, led by the run's label (empty:
    comparable)."""
    return [f"{run.label}: {phrase}" for run, phrase in _differences(runs)]


def _differences(runs: list[Run]) -> list[tuple[Run, str]]:
    """Each run that is not comparable, with why (one phrase a reason). Each run is
    compared with what the runs before it recorded: the first value of each identity key and
    the first judge models any run recorded, the profile of the first run, and the first
    reference check of each sample id (so a run that records nothing, given first, hides no
    difference between the others)."""
    first = runs[0]
    known: dict[str, Any] = {}
    judges: list[str] = []
    size = max((int(run.index.max()) + 1 for run in runs if run.n), default=0)
    checks = np.zeros(size, dtype=np.int64)
    seen = np.zeros(size, dtype=bool)
    out: list[tuple[Run, str]] = []
    for number, run in enumerate(runs):
        _, data = identity_differences(known, run.identity)
        known = {**run.identity, **known}
        if judges and run.judge_models and run.judge_models != judges:
            out.append((run, f"judge {', '.join(run.judge_models)} vs {', '.join(judges)}"))
        judges = judges or run.judge_models
        shared = seen[run.index]
        mismatched = int(np.count_nonzero(checks[run.index[shared]] != run.checks[shared]))
        checks[run.index[~shared]] = run.checks[~shared]
        seen[run.index] = True
        if number == 0:
            continue
        out += [(run, d) for d in data]
        if run.profile != first.profile:
            out.append((run, f"profile {run.profile} vs {first.profile}"))
        if mismatched:
            out.append(
                (
                    run,
                    f"{mismatched} of {int(np.count_nonzero(shared))} shared samples differ "
                    "in their reference answer or group",
                )
            )
    return out


def check_comparable(runs: list[Run], allow_different_data: bool) -> list[str]:
    """Refuse runs of different benchmarks always, and runs over different data, profiles or
    judges unless allowed; returns the differences (marked in every output when allowed)."""
    other = next((run for run in runs if run.benchmark != runs[0].benchmark), None)
    if other is not None:
        raise UsageError(
            f"cannot rank runs of different benchmarks: {other.report_path} is a "
            f"{other.benchmark} report, {runs[0].report_path} a {runs[0].benchmark} one"
        )
    found = _differences(runs)
    if found and not allow_different_data:
        run, phrase = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise UsageError(
            f"the runs are not comparable: {run.label} ({run.report_path}): {phrase}{more}",
            hint="pass --allow-different-data to rank them anyway (every output marks it)",
        )
    return [f"{run.label}: {phrase}" for run, phrase in found]
