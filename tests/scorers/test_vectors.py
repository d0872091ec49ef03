"""Every reference vector, one parametrised case per line (``-k docvqa`` selects one scorer).

Vector files live in ``tests/data`` (copied from the shared spec, checked against it below when
the spec folder is present). A module's file set is ``<module>.jsonl`` (+ ``.metrics.json``,
``.raises.jsonl``, ``_direct.jsonl`` when present); ``erma_utils`` (the shared extractor) and
``evaluator`` (the fallback path) have their own files. Case ids read
``<file stem>:<line number>:<row id>``, so every failing line is reported by name.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import unittest
from pathlib import Path
from typing import Any

import pytest

from datbench_cli.scorers import SCORERS
from datbench_cli.text.extract import extract_final_answer
from tests.vectors import (
    DATA,
    GLUE_STEMS,
    check_direct_line,
    check_line,
    check_metrics_file,
    load_lines,
    scored_line,
)

ROOT = Path(__file__).resolve().parents[2]
# The shared spec's vector folder, beside the repository (override with DATBENCH_SPEC_VECTORS).
SPEC_VECTORS = Path(os.environ.get("DATBENCH_SPEC_VECTORS") or ROOT.parent / "shared/spec/vectors")
# A TestCase used only for its assertion methods (the helpers in tests/vectors.py take one).
CASE = unittest.TestCase()
CASE.maxDiff = None


def module_stems() -> list[str]:
    """Scorer module names that have a vector file in tests/data."""
    return sorted(
        p.stem
        for p in DATA.glob("*.jsonl")
        if "." not in p.stem and not p.stem.endswith("_direct") and p.stem not in GLUE_STEMS
    )


def _row_cases(paths: list[Path]) -> list[Any]:
    cases = []
    for path in paths:
        stem = path.name.removesuffix(".jsonl")
        for number, line in enumerate(load_lines(path), start=1):
            case_id = f"{stem}:{number}:{line['row']['id']}"
            cases.append(pytest.param(path, number, line, id=case_id))
    return cases


def _direct_cases() -> list[Any]:
    cases = []
    for path in sorted(DATA.glob("*_direct.jsonl")):
        stem = path.stem.removesuffix("_direct")
        for number, line in enumerate(load_lines(path), start=1):
            cases.append(pytest.param(stem, line, id=f"{path.stem}:{number}"))
    return cases


MODULE_LINES = _row_cases([DATA / f"{stem}.jsonl" for stem in module_stems()])
RAISES_LINES = _row_cases(sorted(DATA.glob("*.raises.jsonl")))
GLUE_LINES = _row_cases([DATA / "erma_utils.jsonl", DATA / "evaluator.jsonl"])
METRICS_FILES = [
    pytest.param(path, id=path.name.removesuffix(".metrics.json"))
    for path in sorted(DATA.glob("*.metrics.json"))
]


@pytest.mark.parametrize(("path", "number", "line"), MODULE_LINES)
def test_module_line(path: Path, number: int, line: dict[str, Any]) -> None:
    check_line(CASE, line, scored_line(path, number))


@pytest.mark.parametrize(("path", "number", "line"), RAISES_LINES)
def test_raises_line(path: Path, number: int, line: dict[str, Any]) -> None:
    check_line(CASE, line, scored_line(path, number))


@pytest.mark.parametrize(("path", "number", "line"), GLUE_LINES)
def test_fallback_path_line(path: Path, number: int, line: dict[str, Any]) -> None:
    """erma_utils rows (unregistered name, answer = the reference's extraction) and the
    evaluator's fallback rows."""
    check_line(CASE, line, scored_line(path, number))


@pytest.mark.parametrize("path", METRICS_FILES)
def test_metrics_file(path: Path) -> None:
    """One compute_metrics call over every line of the module file equals the recorded summary."""
    stem = path.name.removesuffix(".metrics.json")
    check_metrics_file(CASE, path, load_lines(DATA / f"{stem}.jsonl"))


@pytest.mark.parametrize(("stem", "line"), _direct_cases())
def test_direct_line(stem: str, line: dict[str, Any]) -> None:
    if stem == "erma_utils":
        assert line["function"] == "extract_final_answer"
        assert extract_final_answer(line["input"]) == line["output"]
        return
    check_direct_line(CASE, importlib.import_module(f"datbench_cli.scorers.{stem}"), line)


def test_every_vector_kind_is_collected() -> None:
    """No vector file falls outside the cases above (a new kind of file would be skipped)."""
    covered = {f"{stem}.jsonl" for stem in module_stems()}
    covered |= {p.name for p in DATA.glob("*.raises.jsonl")}
    covered |= {p.name for p in DATA.glob("*_direct.jsonl")}
    covered |= {p.name for p in DATA.glob("*.metrics.json")}
    covered |= {"erma_utils.jsonl", "evaluator.jsonl", "README.md"}
    covered.add("evaluator_summary.jsonl")  # tests/benchmarks/test_evaluator.py
    assert {p.name for p in DATA.iterdir()} == covered
    assert len(MODULE_LINES) > 400 and len(GLUE_LINES) > 20 and len(METRICS_FILES) > 20


def _digests(folder: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.iterdir())
        if path.is_file()
    }


def test_vectors_equal_the_shared_spec() -> None:
    """tests/data holds exactly the spec's vector files, byte for byte (sha256 per file)."""
    if not SPEC_VECTORS.is_dir():
        pytest.skip(f"no shared spec vectors at {SPEC_VECTORS}")
    ours, theirs = _digests(DATA), _digests(SPEC_VECTORS)
    assert sorted(set(theirs) - set(ours)) == [], "spec vector files missing from tests/data"
    assert sorted(set(ours) - set(theirs)) == [], "tests/data files the spec does not have"
    changed = sorted(name for name in theirs if ours[name] != theirs[name])
    assert changed == [], "tests/data files that differ from the spec"


class RegistryGuardTests(unittest.TestCase):
    """The registry and the vector files name the same datasets."""

    def vector_dataset_names(self) -> set[str]:
        names: set[str] = set()
        for stem in module_stems():
            for line in load_lines(DATA / f"{stem}.jsonl"):
                names.add(line["row"]["source_info"]["dataset"])
        return names

    def test_every_registered_name_has_vectors(self) -> None:
        missing = set(SCORERS) - self.vector_dataset_names()
        self.assertEqual(missing, set(), "registered dataset names without vectors")

    def test_every_vector_name_is_registered(self) -> None:
        unknown = self.vector_dataset_names() - set(SCORERS)
        self.assertEqual(unknown, set(), "vector files name unregistered datasets")

    def test_every_module_has_a_vector_file(self) -> None:
        modules = {scorer.__name__.rsplit(".", 1)[-1] for scorer in SCORERS.values()}
        self.assertEqual(modules - set(module_stems()), set())
