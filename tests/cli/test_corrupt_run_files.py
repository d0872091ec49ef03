"""A run directory's files edited by hand with values of the wrong type (hostile input, the
manifest's digests updated to match, as the stages check them) are refused in one sentence
naming the file and, for a line, its number: exit 2, never an internal error (exit 3)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli_helpers import export_samples, make_dataset, make_row, run_cli


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Both sample exports with the sample's responses and judge responses, made once."""
    runs = export_samples(tmp_path_factory.mktemp("exports"))
    for run, sample in runs.values():
        for name in ("responses.jsonl", "judge_responses.jsonl"):
            shutil.copy(sample / name, run / name)
    return runs


def _copy(exported: dict[str, tuple[Path, Path]], which: str, tmp_path: Path) -> Path:
    run = tmp_path / which
    shutil.copytree(exported[which][0], run)
    return run


def _forge_digests(run: Path) -> None:
    """Record the files' current digests in the manifest, as an editor covering tracks would."""
    manifest = json.loads((run / "datbench.json").read_bytes())
    for name, recorded in manifest["files"].items():
        recorded["sha256"] = hashlib.sha256((run / name).read_bytes()).hexdigest()
    (run / "datbench.json").write_text(json.dumps(manifest))


def _edit_line(path: Path, number: int, edit: Callable[[dict[str, Any]], None]) -> None:
    lines = path.read_bytes().splitlines()
    record = json.loads(lines[number - 1])
    edit(record)
    lines[number - 1] = json.dumps(record).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")


def _judge_line(path: Path) -> int:
    """The number of the first judge-mode line of a references file."""
    lines = path.read_bytes().splitlines()
    return next(n for n, line in enumerate(lines, 1) if json.loads(line)["eval_mode"] == "judge")


def _refused(result: Any, start: str) -> None:
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"error: {start}"), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("value", [["chart"], {"name": "chart"}, None, 5])
def test_a_capability_that_is_not_text_is_refused(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, value: Any
) -> None:
    # It was an internal error (unhashable type: 'list') when score grouped the samples.
    run = _copy(exported, "dat", tmp_path)
    _edit_line(run / "references.jsonl", 4, lambda record: record.update(capability=value))
    _forge_digests(run)
    for command in ("score", "check-judge", "make-judge-tasks"):
        result = run_cli(command, "-d", str(run))
        _refused(result, f'{run / "references.jsonl"}:4: "capability" must be a string, got ')


@pytest.mark.parametrize(
    "field,value",
    [
        ("counts", 5),
        ("counts", "many"),
        ("counts", [152]),
        ("counts.samples", "many"),
        ("counts.samples", [152]),
        ("counts.samples", -5),
    ],
)
def test_export_counts_that_are_no_counts_are_no_total(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, field: str, value: Any
) -> None:
    # The counts are only the progress bar's first total: score said "internal error ('int'
    # object has no attribute 'get')" when they were not an object, and on a terminal
    # "internal error ('>' not supported ...)" when the count was text; a negative one was
    # drawn as "0/-5". Scored the same; counts that are no object are refused (as every
    # manifest field of another type).
    run = _copy(exported, "dat", tmp_path)
    assert run_cli("score", "-d", str(run), "-q").exit_code == 0
    scored = json.loads((run / "report.json").read_bytes())["summary"]
    manifest = json.loads((run / "datbench.json").read_bytes())
    if field == "counts":
        manifest["counts"] = value
    else:
        manifest["counts"]["samples"] = value
    (run / "datbench.json").write_text(json.dumps(manifest))
    # A terminal's stderr, so the progress bar is drawn.
    if field == "counts":  # a manifest field of another type is refused, naming its line
        result = run_cli("score", "-d", str(run))
        _refused(result, f'{run / "datbench.json"}:1: "counts" must be an object, got ')
        return
    result = run_cli("score", "-d", str(run), env={"TTY_COMPATIBLE": "1", "NO_COLOR": ""})
    assert result.exit_code == 0, result.stderr
    assert "scoring" in result.stderr and "/-5" not in result.stderr
    assert json.loads((run / "report.json").read_bytes())["summary"] == scored


@pytest.mark.parametrize("which", ["dat", "vtb"])
def test_an_unknown_benchmark_is_said_of_the_manifest(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, which: str
) -> None:
    # It named the run directory, not the file that holds the name.
    run = _copy(exported, which, tmp_path)
    manifest = json.loads((run / "datbench.json").read_bytes())
    manifest["benchmark"] = "maths"
    (run / "datbench.json").write_text(json.dumps(manifest))
    for command in ("score", "check-judge", "make-judge-tasks"):
        result = run_cli(command, "-d", str(run))
        _refused(result, f"{run / 'datbench.json'}: unknown benchmark 'maths' (known: ")


@pytest.mark.parametrize("value", [5, True, ["Reason"], {"prompt": "Reason"}])
def test_a_judge_prompt_that_is_not_text_is_refused(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, value: Any
) -> None:
    # make-judge-tasks said "internal error ('int' object has no attribute 'rfind')".
    run = _copy(exported, "dat", tmp_path)
    path = run / "references.jsonl"
    number = _judge_line(path)
    _edit_line(path, number, lambda record: record.update(judge_prompt=value))
    _forge_digests(run)
    for command in ("make-judge-tasks", "score", "check-judge"):
        result = run_cli(command, "-d", str(run))
        _refused(result, f"{path}:{number}: judge_prompt is ")


def test_a_null_judge_prompt_is_no_prompt(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    # (as the reference reads it: the judge task's prompt is empty).
    run = _copy(exported, "dat", tmp_path)
    path = run / "references.jsonl"
    number = _judge_line(path)
    _edit_line(path, number, lambda record: record.update(judge_prompt=None))
    ident = json.loads(path.read_bytes().splitlines()[number - 1])["id"]
    _forge_digests(run)
    assert run_cli("make-judge-tasks", "-d", str(run)).exit_code == 0
    tasks = [json.loads(line) for line in (run / "judge_tasks.jsonl").read_bytes().splitlines()]
    assert [task["judge_prompt"] for task in tasks if task["id"] == ident] == [""]


@pytest.mark.parametrize("column", [pa.array([5, 5], pa.int64()), pa.array([[1], [2]])])
def test_a_dataset_whose_judge_prompt_is_not_text_is_refused_at_export(
    tmp_path: Path, column: pa.Array
) -> None:
    # It was exported, and make-judge-tasks then refused references.jsonl, which an export
    # again would write the same.
    source = make_dataset(tmp_path, {"math": [make_row("a", eval_mode="judge"), make_row("b")]})
    (data,) = (source / "math").glob("*.parquet")
    table = pq.read_table(data)
    table = table.set_column(
        table.column_names.index("judge_prompt"), pa.field("judge_prompt", column.type), column
    )
    pq.write_table(table.replace_schema_metadata(None), data)
    run = tmp_path / "run"
    result = run_cli("export-tasks", "math", "--source", str(source), "-d", str(run))
    assert result.exit_code == 2, result.stderr
    assert "\nerror: capability 'math', sample 'a': judge_prompt is " in result.stderr
    assert not (run / "datbench.json").exists()


@pytest.mark.parametrize(
    "edit",
    [
        lambda task: task.update(turns=5),
        lambda task: task["turns"][0].update(index=[0]),
        lambda task: task["turns"][0].update(images=5),
        lambda task: task["turns"][-1].update(images=True),
    ],
)
def test_view_shows_a_task_line_of_the_wrong_shape_as_it_can(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, edit: Callable[[Any], None]
) -> None:
    # view said "internal error ('int' object is not iterable)" or "(unhashable type: 'list')"
    # on a VisualToolBench tasks.jsonl line so edited; the page shows what it can read.
    run = _copy(exported, "vtb", tmp_path)
    _edit_line(run / "tasks.jsonl", 2, edit)
    _forge_digests(run)
    assert run_cli("score", "-d", str(run), "-q", "--allow-missing").exit_code == 0
    result = run_cli("view", "-d", str(run))
    assert result.exit_code == 0, result.stderr
    assert (run / "report.html").is_file()


@pytest.mark.parametrize("value", ["x", 5, True])
@pytest.mark.parametrize("which", ["dat", "vtb"])
def test_view_reads_a_report_whose_provenance_is_not_an_object(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, which: str, value: Any
) -> None:
    # view said "internal error ('str' object has no attribute 'get')"; a provenance of null
    # or {} was already read as recording no export, and so is this one.
    run = _copy(exported, which, tmp_path)
    assert run_cli("score", "-d", str(run), "-q", "--allow-missing").exit_code == 0
    report = json.loads((run / "report.json").read_bytes())
    report["provenance"] = value
    (run / "report.json").write_text(json.dumps(report))
    result = run_cli("view", "-d", str(run))
    assert result.exit_code == 0, result.stderr
    assert (run / "report.html").is_file()


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_is_named_with_its_cause(
    exported: dict[str, tuple[Path, Path]], tmp_path: Path, word: str
) -> None:
    # Python's json.dumps writes them; the error said only "unexpected character, expected a
    # JSON value: line 1 column 41 (char 40)" (for a JSONL line, "line 1" of the line itself).
    run = _copy(exported, "dat", tmp_path)
    responses = run / "responses.jsonl"
    lines = responses.read_bytes().splitlines()
    lines[2] = b'{"id": "x", "raw_output": ' + word.encode() + b"}"
    responses.write_bytes(b"\n".join(lines) + b"\n")
    result = run_cli("score", "-d", str(run))
    _refused(result, f"{responses}:3: malformed JSON line: {word} at column 27")
    assert "hint: NaN and Infinity are not JSON" in result.stderr
    report = run / "report.json"
    report.write_bytes(b'{"summary": {"overall_accuracy": ' + word.encode() + b"}}")
    result = run_cli("view", "-d", str(run))
    _refused(result, f"{report}:1: not valid JSON: {word} at column 34")
    assert "hint: NaN and Infinity are not JSON" in result.stderr
