"""Building the run page and the comparison page, and writing a page into place."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks import BENCHMARKS
from datbench_cli.compare.inputs import changed_inputs
from datbench_cli.compare.notes import comparison_notes
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import guard_output
from datbench_cli.report_html import compare_view
from datbench_cli.report_html.blocks import flatten, text
from datbench_cli.report_html.encode import encode
from datbench_cli.report_html.inputs import Images, RunFiles, locate
from datbench_cli.report_html.page import render
from datbench_cli.version import __version__

_MANIFEST_KEYS = ("tool", "version", "benchmark", "source", "split", "revision", "files")


def provenance(files: RunFiles) -> list[list[str]]:
    """The report's provenance block as rows; without one, what the manifest records."""
    block = files.report.get("provenance")
    if isinstance(block, dict):
        return flatten(block)
    manifest = files.manifest or {}
    rows = flatten({k: manifest[k] for k in _MANIFEST_KEYS if k in manifest}, "manifest.")
    rows.insert(0, ["report", str(files.report_path)])
    return rows


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The page build allocates millions of small, acyclic objects (one record and its blocks
    per sample): the cyclic collector would rescan them all, again and again, for nothing (about
    40% of the build's CPU at 45,000 samples). Off while building, restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def benchmark_of(files: RunFiles) -> str:
    """The report's benchmark: its own ``benchmark`` key, else the manifest's, else DatBench
    (whose reports follow the seed API's shape, without the key)."""
    for source in (files.report, files.manifest or {}):
        name = source.get("benchmark")
        if isinstance(name, str) and name in BENCHMARKS:
            return name
    return "datbench"


def _run_data(files: RunFiles, images: Images) -> dict[str, Any]:
    from datbench_cli.compare.spec import Columns  # numpy: not at the command line's start-up

    benchmark = BENCHMARKS[benchmark_of(files)]
    # Each result read as compare reads it: a score outside what a score can be (1.5, 1e308,
    # shown as 150% and Infinity%) or a cut report is refused, not drawn.
    side = benchmark.pairing()
    samples = side.read(files.report["results"], files.report_path)
    side.check_count(files.report["summary"], len(files.report["results"]), files.report_path)
    data = benchmark.page_data(files, images)
    values = Columns.of(samples, side).values
    # A summary number that is the mean of scores outside [0, 1] (a VisualToolBench ARS
    # under negative rubric weights, which the spec allows) is no fraction either: it was
    # refused as an edited report. It is held to its results' mean instead.
    unbounded = {
        key
        for key, metric in side.means
        if len(values[metric]) and (values[metric].min() < 0 or values[metric].max() > 1)
    }
    _check_fractions(data, files.report_path, unbounded)
    side.check_means(files.report["summary"], values, files.report_path)
    data["provenance"] = provenance(files)
    note = images.note()
    if note:
        data["notes"].append(note)
    data["notes"].extend(changed_inputs(files.report, files.report_path))
    return data


def _check_fractions(
    data: dict[str, Any], report_path: Path, unbounded: AbstractSet[str] = frozenset()
) -> None:
    """Refuse a report whose headline or chart numbers are no fractions, or their counts no
    counts: a hand-edited summary drew an accuracy of 1.7 as 170% and an interval [-0.5, 1.9]
    as [-50%, 190%] (``compare`` and ``leaderboard`` compute theirs from the results, so said
    something else). The headline numbers named in ``unbounded`` need not be in [0, 1]."""
    shown = [(str(h.get("key")), h) for h in data["headline"]]
    shown += [(str(b.get("name")), b) for c in data["charts"] for b in c["bars"]]
    for name, entry in shown:
        numbers = [entry.get("value"), *(entry.get("ci") or ())]
        ci = entry.get("ci")
        outside = name not in unbounded and any(v is not None and not 0 <= v <= 1 for v in numbers)
        if outside or (ci and ci[0] > ci[1]):
            raise InputError(
                f"the summary's {name} ({entry.get('value')}, interval {ci}) is not a fraction "
                "with an interval within [0, 1] (an edited report?)",
                report_path,
            )
        count = entry.get("n")  # a count of -1 or "23" was drawn as the bar's "n -1"
        if count is not None and (type(count) is not int or count < 0):
            raise InputError(
                f"the summary's {name} is over {count!r} samples, not a count (an edited report?)",
                report_path,
            )


def run_page(report_or_dir: Path, out: Path, *, embed_images: bool = False) -> bytes:
    """The page of one run (``report_or_dir``: a run directory or its report file), for a file
    written at ``out`` (image links are relative to its folder)."""
    with _no_cycle_collection():
        return _run_page(report_or_dir, out, embed_images=embed_images)


def _run_page(report_or_dir: Path, out: Path, *, embed_images: bool) -> bytes:
    files = locate(report_or_dir)
    images = Images(files.run_dir, out.parent, embed=embed_images)
    data = _run_data(files, images)
    data["browser"] = encode(data["browser"])
    data["kind"] = "run"
    data["title"] = f"{data['benchmark']} report"
    data["subtitle"] = f"{files.report_path} · page by datbench {__version__}"
    return render(data["title"], data)


def compare_page(
    path_a: Path,
    path_b: Path,
    out: Path,
    comparison: dict[str, Any] | None = None,
    *,
    embed_images: bool = False,
) -> bytes:
    """The page of run B against run A: ``comparison`` is ``datbench compare``'s JSON (its
    tables shown as they are); without it, each run's own headline numbers side by side."""
    with _no_cycle_collection():
        return _compare_page(path_a, path_b, out, comparison, embed_images=embed_images)


def _compare_page(
    path_a: Path,
    path_b: Path,
    out: Path,
    comparison: dict[str, Any] | None,
    *,
    embed_images: bool,
) -> bytes:
    files_a, files_b = locate(path_a), locate(path_b)
    images_a = Images(files_a.run_dir, out.parent, embed=embed_images)
    images_b = Images(files_b.run_dir, out.parent, embed=embed_images)
    data_a, data_b = _run_data(files_a, images_a), _run_data(files_b, images_b)
    result_label = next(
        (f["label"] for f in data_a["browser"]["facets"] if f["key"] == "result"), "Result"
    )
    tables = []
    if comparison is not None:
        tables = compare_view.comparison_tables(comparison)
    tables.insert(0, compare_view.headline_table(data_a["headline"], data_b["headline"]))
    records = compare_view.joined(data_a["browser"]["records"], data_b["browser"]["records"])
    notes = [f"A: {files_a.report_path}", f"B: {files_b.report_path}"]
    if comparison is not None:
        # What the terminal says (each side's warnings, different exports, the gate), then
        # what each side's own page says besides.
        notes = comparison_notes(comparison)
        for label, side, data in (("A", comparison["a"], data_a), ("B", comparison["b"], data_b)):
            said = set(side.get("warnings", []))
            notes += [f"{label}'s report: {n}" for n in data["notes"] if n not in said]
        notes.extend(f"{k}: {text(v)}" for k, v in (comparison.get("method") or {}).items())
    else:
        notes.append(
            "No comparison statistics: the page shows each report's own numbers and the "
            "samples joined by id."
        )
    headline = [dict(h, label=f"A · {h['label']}") for h in data_a["headline"]] + [
        dict(h, key=f"b.{h['key']}", label=f"B · {h['label']}") for h in data_b["headline"]
    ]
    data = {
        "kind": "compare",
        "benchmark": data_a["benchmark"],
        "title": f"{data_a['benchmark']} comparison: B against A",
        "subtitle": f"A = {path_a} · B = {path_b} · page by datbench {__version__}",
        "headline": headline,
        "charts": [],
        "tables": tables,
        "accounting": [],
        "notes": notes,
        "provenance": [["A." + k, v] for k, v in data_a["provenance"]]
        + [["B." + k, v] for k, v in data_b["provenance"]],
        "browser": encode(
            {
                "unit": data_a["browser"]["unit"],
                "facets": compare_view.facets(data_a["browser"]["facets"], result_label),
                "sorts": compare_view.sorts(data_a["browser"]["sorts"]),
                "records": records,
                "line": data_a["browser"].get("line"),
                "failure": {"facet": "change", "value": "right->wrong"},
            }
        ),
    }
    return render(data["title"], data)


_MARK = b'<meta name="generator" content="datbench '


def write_page(path: Path, page: bytes) -> None:
    """Write a page through a temp file renamed into place; the command checked ``path``
    first with :func:`check_target`."""
    _check_page_file(path)
    jsonio.write_bytes_atomic(jsonio.user_output(path), page)


def check_target(path: Path, command: str, inputs: Iterable[Path | None] = ()) -> None:
    """Refuse a page path the output guard refuses (see :mod:`datbench_cli.files.outputs`),
    or an existing file that is not a page this tool wrote (``score --html notes.txt`` must
    not replace the notes)."""
    guard_output(path, command, inputs, option="the page")
    _check_page_file(path)


def _check_page_file(path: Path) -> None:
    if jsonio.is_stream_output(path):
        return
    if path.is_symlink():
        raise UsageError(f"{path} is a symlink; not writing the page through it")
    if not path.is_file():
        return
    with path.open("rb") as handle:
        head = handle.read(4096)
    if _MARK not in head:
        raise UsageError(
            f"{path} exists and is not a datbench page; not overwriting it "
            "(give the page another name: --html FILE.html)"
        )
