"""The two sides of a comparison: a report file or a run directory, its manifest, and what
identifies the data it was scored on."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.fields import STRING, check_document
from datbench_cli.files.rundir import (
    AGAIN,
    JUDGE_RESPONSES,
    MANIFEST,
    MANIFEST_FIELDS,
    REFERENCES,
    REPORT,
    RESPONSES,
    sha256_file,
)

DATBENCH = "datbench"
REFERENCE_PROFILE = "reference"
# The keys that name the exported data. Neither the tasks file nor the manifest digest is among
# them, so a blind export (no images) still matches its twin.
_COMPARED = ("references_sha256", "revision", "split")
# The types of a report's top-level fields every reader of reports relies on (compare,
# leaderboard, view): a benchmark that is no string was read as DatBench's.
REPORT_FIELDS: dict[str, tuple[type, ...]] = {"benchmark": STRING}
SCORE_AGAIN = "run `datbench score` again"


@dataclass(frozen=True)
class RunReport:
    """One side: the path the user gave, the report read from it, and the run's manifest."""

    given: Path
    report_path: Path
    report: dict[str, Any]
    manifest: dict[str, Any] | None

    @property
    def benchmark(self) -> str:
        """``vistoolbench`` reports say so; DatBench reports (the seed's shape) do not."""
        return str(self.report.get("benchmark") or DATBENCH)

    @property
    def results(self) -> list[Any]:
        return self.report["results"]

    @property
    def profile(self) -> str:
        """The scoring profile the report was made with (``summary.profile``; a report without
        one is a reference report)."""
        value = self.report["summary"].get("profile")
        return value if isinstance(value, str) and value else REFERENCE_PROFILE

    def input_digest(self, name: str) -> str | None:
        """The SHA-256 of one scored input (``responses``, ``judge_responses``) as the
        report's provenance records it, when it does."""
        digest = _scored_input(self.report, name).get("sha256")
        return digest if isinstance(digest, str) else None


def _scored_input(report: dict[str, Any], name: str) -> dict[str, Any]:
    """What the report's provenance records of one scored input (its ``path``, ``sha256``):
    empty when it records nothing of it."""
    block = report.get("provenance")
    inputs = block.get("inputs") if isinstance(block, dict) else None
    entry = inputs.get(name) if isinstance(inputs, dict) else None
    return entry if isinstance(entry, dict) else {}


#: The inputs a report's provenance names, and the file of each in a run directory.
_RUN_INPUTS = (
    ("references", REFERENCES),
    ("responses", RESPONSES),
    ("judge_responses", JUDGE_RESPONSES),
)


def changed_inputs(report: dict[str, Any], report_path: Path) -> list[str]:
    """A sentence per input the report scored (references, responses, judge responses) that
    is no longer the bytes its provenance says it scored, changed since the report was
    written: the report's numbers are then not those of the files. The file judged is the one
    scored (its recorded path, absolute, when it still leads to a file), or, in a copy of the
    run or where the recorded path is relative (to wherever score ran) or leads nowhere (the
    run moved), the file of that name beside the report."""
    try:
        written = report_path.stat().st_mtime_ns
    except OSError:
        return []
    changed = []
    for name, filename in _RUN_INPUTS:
        entry = _scored_input(report, name)
        recorded, digest = entry.get("path"), entry.get("sha256")
        if not isinstance(recorded, str) or Path(recorded).name != filename:
            continue
        try:
            path = _judged_file(report, report_path.parent, recorded)
            if not path.is_file():
                continue
            # The references (the largest input, rewritten only by an export) are hashed only
            # when changed since the report (ctime: a file moved into place keeps an older
            # mtime, never an older ctime); the answers always: a copy of a run (cp -r) writes
            # them before its report.
            if name == "references" and path.stat().st_ctime_ns < written:
                continue
            if sha256_file(path) == digest:
                continue
        except OSError:
            continue
        changed.append(
            f"{path} changed after this report was written (not the bytes it scored): "
            "score the run again"
        )
    return changed


def _judged_file(report: dict[str, Any], folder: Path, recorded: str) -> Path:
    """The file judged for an input ``recorded`` as the report scored it (see
    :func:`changed_inputs`)."""
    beside = folder / Path(recorded).name
    if not (os.path.isabs(recorded) and os.path.exists(recorded)):
        return beside
    if beside.exists() and os.path.samefile(recorded, beside):
        return beside
    return beside if _copied_run_file(report, folder, recorded) else Path(recorded)


def _copied_run_file(report: dict[str, Any], folder: Path, recorded: str) -> bool:
    """Whether ``folder`` is a copy of the run the report scored (``cp -r``) and ``recorded``
    (the absolute path of a file it scored) that run's own file: the file sat beside the
    manifest the report recorded, whose bytes ``folder``'s manifest has."""
    manifest = _scored_input(report, "manifest")
    if manifest.get("path") != os.path.join(os.path.dirname(recorded), MANIFEST):
        return False
    digest, copy = manifest.get("sha256"), folder / MANIFEST
    try:
        return isinstance(digest, str) and copy.is_file() and sha256_file(copy) == digest
    except OSError:
        return False


def report_paths(*given: Path) -> list[Path]:
    """The report each argument names (a run directory's, or the file itself): the files a
    comparison or a leaderboard reads, which none of its outputs may replace."""
    return [path / REPORT if path.is_dir() else path for path in given]


def compare_inputs(a: Path, b: Path) -> list[Path]:
    """:func:`report_paths` of the two sides; one report on both is a usage error (compared
    with itself, it passes every gate, saying nothing)."""
    reports = report_paths(a, b)
    with contextlib.suppress(OSError):  # a side that is not there is said when it is read
        if os.path.samefile(*reports):
            raise UsageError(
                f"{a} and {b} are one report ({reports[0]}): a run compared with itself says "
                "nothing, and passes every --fail-if-worse gate",
                hint="name two runs",
            )
    return reports


def locate(given: Path) -> tuple[Path, dict[str, Any] | None]:
    """The report of ``given`` (a report file, or a run directory holding ``report.json``)
    and the manifest (``datbench.json``) beside it, when it is there."""
    manifest: dict[str, Any] | None = None
    if given.is_dir():
        report_path = given / REPORT
        if not report_path.is_file():
            raise InputError(f"no {REPORT} in this run directory; run `datbench score`", given)
    else:
        report_path = given
    # A report inside a run directory (where `datbench score` writes it) has its manifest beside.
    manifest_path = report_path.parent / MANIFEST
    if manifest_path.is_file():
        loaded = jsonio.read_json(manifest_path)
        if not isinstance(loaded, dict):
            raise InputError("manifest is not a JSON object", manifest_path)
        check_document(loaded, MANIFEST_FIELDS, manifest_path, AGAIN)
        manifest = loaded
    return report_path, manifest


def checked_run(
    given: Path, report_path: Path, report: Any, manifest: dict[str, Any] | None
) -> RunReport:
    """A parsed report checked for its shape and against its run directory's manifest."""
    if (
        not isinstance(report, dict)
        or not isinstance(report.get("summary"), dict)
        or not isinstance(report.get("results"), list)
    ):
        raise InputError(
            'not a datbench report (expected an object with "summary" and "results")',
            report_path,
        )
    check_document(report, REPORT_FIELDS, report_path, SCORE_AGAIN)
    run = RunReport(given, report_path, report, manifest)
    if manifest is not None and str(manifest.get("benchmark")) != run.benchmark:
        raise InputError(
            f"the report is a {run.benchmark} report but the run directory's manifest says "
            f"{manifest.get('benchmark')!r}",
            report_path,
        )
    return run


def load_run(given: Path) -> RunReport:
    """A report file, or a run directory holding ``report.json``, read whole; the manifest
    (``datbench.json``) is read from the report's folder when it is there."""
    report_path, manifest = locate(given)
    return checked_run(given, report_path, jsonio.read_json(report_path), manifest)


def _revision(value: Any) -> str | None:
    """A revision as a manifest records it: a string, or ``{"requested", "resolved"}``."""
    if isinstance(value, dict):
        value = value.get("resolved") or value.get("requested")
    return value if isinstance(value, str) and value else None


def identity(run: RunReport) -> dict[str, Any]:
    """What names the data of one side: the SHA-256 of ``references.jsonl`` (what scoring
    read), the dataset revision and split, from the manifest or else from the report's
    ``provenance`` block (``inputs.references``, ``dataset``); the source and the manifest
    digest are recorded, not compared."""
    out: dict[str, Any] = {}
    manifest = run.manifest or {}
    block = run.report.get("provenance")
    dataset = block.get("dataset") if isinstance(block, dict) else None
    dataset = dataset if isinstance(dataset, dict) else {}
    files = manifest.get("files")
    entry = files.get(REFERENCES) if isinstance(files, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
        out["references_sha256"] = entry["sha256"]
    else:  # a report file outside its run directory: the digest score recorded
        inputs = block.get("inputs") if isinstance(block, dict) else None
        scored = inputs.get("references") if isinstance(inputs, dict) else None
        if isinstance(scored, dict) and isinstance(scored.get("sha256"), str):
            out["references_sha256"] = scored["sha256"]
    revision = _revision(manifest.get("revision")) or _revision(
        dataset.get("resolved_revision") or dataset.get("revision")
    )
    if revision is not None:
        out["revision"] = revision
    for key in ("split", "source"):
        value = manifest.get(key, dataset.get(key))
        if isinstance(value, str):
            out[key] = value
    if isinstance(dataset.get("manifest_sha256"), str):
        out["manifest_sha256"] = dataset["manifest_sha256"]
    return out


def identity_differences(a: dict[str, Any], b: dict[str, Any]) -> tuple[bool, list[str]]:
    """``(verified, differences)``: whether any identifying key is known on both sides, and a
    sentence per key that differs (the source path alone never counts: the same export can be
    read from a hub id or a local copy)."""
    keys = [k for k in _COMPARED if k in a and k in b]
    differences = [f"{k} differs ({a[k]} vs {b[k]})" for k in keys if a[k] != b[k]]
    return bool(keys), differences


# The counts of a report's censoring block that are not a reason a sample is censored.
_NOT_REASONS = ("samples", "tasks", "censored")


def coverage_and_warnings(summary: dict[str, Any]) -> tuple[str | None, list[str]]:
    """A report's coverage check detail, and what a reader of its numbers should be warned
    of: each failed check and the censored samples (truncated, empty, refused, errored,
    unjudged) that its scores keep."""
    coverage = None
    warnings = []
    checks = summary.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, dict):
            continue
        if check.get("name") == "coverage":
            coverage = str(check.get("detail"))
        if check.get("passed") is False:
            warnings.append(f"check {check.get('name')} failed: {check.get('detail')}")
    censoring = summary.get("censoring")
    overall = censoring.get("overall") if isinstance(censoring, dict) else None
    overall = overall if isinstance(overall, dict) else {}
    censored = overall.get("censored")
    counts = {
        key: count
        for key, count in overall.items()
        if key not in ("samples", "tasks") and not key.endswith("completed") and count is not None
    }
    wrong = [f"{key} {count!r}" for key, count in counts.items() if not _is_count(count)]
    if wrong:  # "-3 censored" was said as it stood
        warnings.append(
            f"censoring counts that are no counts (an edited report?): {', '.join(wrong)}"
        )
    elif censored:
        reasons = [
            f"{n} {key.replace('_', ' ')}" for key, n in counts.items() if key != "censored" and n
        ]
        warnings.append(f"{censored} censored ({', '.join(reasons) or 'no reason recorded'})")
    return coverage, warnings


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0
