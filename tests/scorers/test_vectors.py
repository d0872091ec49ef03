"""Every reference vector of every registered scorer, one sub-test per line.

Vector files live in ``tests/data`` (copied from the shared spec). A module's file set is
``<module>.jsonl`` (+ ``.metrics.json``, ``.raises.jsonl``, ``_direct.jsonl`` when present).
"""

from __future__ import annotations

import importlib
import unittest

from datbench_cli.scorers import SCORERS
from tests.vectors import (
    DATA,
    GLUE_STEMS,
    check_direct_line,
    check_line,
    check_metrics_file,
    load_lines,
)


def module_stems() -> list[str]:
    """Scorer module names that have a vector file in tests/data."""
    return sorted(
        p.stem
        for p in DATA.glob("*.jsonl")
        if "." not in p.stem and not p.stem.endswith("_direct") and p.stem not in GLUE_STEMS
    )


class ScorerVectorTests(unittest.TestCase):
    """Per-line, per-aggregate and module-level vectors for each scorer module."""

    def test_module_lines(self) -> None:
        for stem in module_stems():
            for line in load_lines(DATA / f"{stem}.jsonl"):
                with self.subTest(module=stem, id=line["row"]["id"]):
                    check_line(self, line)

    def test_raises_lines(self) -> None:
        for path in sorted(DATA.glob("*.raises.jsonl")):
            for line in load_lines(path):
                with self.subTest(file=path.name, id=line["row"]["id"]):
                    check_line(self, line)

    def test_metrics_files(self) -> None:
        for path in sorted(DATA.glob("*.metrics.json")):
            stem = path.name.removesuffix(".metrics.json")
            with self.subTest(module=stem):
                check_metrics_file(self, path, load_lines(DATA / f"{stem}.jsonl"))

    def test_direct_lines(self) -> None:
        for path in sorted(DATA.glob("*_direct.jsonl")):
            stem = path.stem.removesuffix("_direct")
            if stem == "erma_utils":
                continue  # covered by tests/text/test_extract.py
            module = importlib.import_module(f"datbench_cli.scorers.{stem}")
            for number, line in enumerate(load_lines(path), start=1):
                with self.subTest(file=path.name, line=number):
                    check_direct_line(self, module, line)


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


if __name__ == "__main__":
    unittest.main()
