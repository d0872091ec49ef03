"""Shared test helpers for VisualToolBench: the sample generator, run directories, row edits."""

from __future__ import annotations

import copy
import importlib.util
import json
import tempfile
import unittest
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from datbench_cli.benchmarks.vistoolbench import stages as pipeline
from datbench_cli.files.rundir import RunDir

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_data" / "vistoolbench"
SAMPLE_RESPONSES = SAMPLE_DIR / "responses.jsonl"
SAMPLE_JUDGE = SAMPLE_DIR / "judge_responses.jsonl"


@cache
def generator() -> ModuleType:
    """``scripts/make_vistoolbench_sample.py`` as a module (rows, features, writers)."""
    path = ROOT / "scripts" / "make_vistoolbench_sample.py"
    spec = importlib.util.spec_from_file_location("make_vistoolbench_sample", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_rows() -> list[dict[str, Any]]:
    """A fresh copy of the sample rows (tasks A-F)."""
    return copy.deepcopy(generator().sample_rows())


def rubrics_of(row: dict[str, Any], turn: int) -> dict[str, Any]:
    return json.loads(row["rubrics_by_turn"][turn])


def set_rubrics(row: dict[str, Any], turn: int, rubrics: dict[str, Any]) -> None:
    row["rubrics_by_turn"][turn] = json.dumps(rubrics)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class TempDirCase(unittest.TestCase):
    """A test case with a fresh temporary directory ``self.tmp``."""

    def setUp(self) -> None:
        holder = tempfile.TemporaryDirectory()
        self.addCleanup(holder.cleanup)
        self.tmp = Path(holder.name)

    def export(
        self,
        source: Path = SAMPLE_DIR,
        name: str = "run",
        *,
        limit: int | None = None,
        turncase: str | None = None,
        context: str = "golden",
        first_image_only: bool = False,
    ) -> tuple[RunDir, dict[str, Any], list[str]]:
        """Export ``source`` into ``self.tmp/name``; return the run, manifest and warnings."""
        warnings: list[str] = []
        run = RunDir(self.tmp / name)
        manifest = pipeline.export(
            str(source),
            "test",
            run,
            limit=limit,
            turncase=turncase,
            context=context,
            first_image_only=first_image_only,
            warn=warnings.append,
        )
        return run, manifest, warnings

    def dataset_dir(self, rows: list[dict[str, Any]], name: str = "ds") -> Path:
        """``rows`` written as a hub-style local dataset directory."""
        directory = self.tmp / name
        generator().write_dataset(directory, rows)
        return directory
