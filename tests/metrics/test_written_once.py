"""Shared helpers stay written once: a second copy fails here, not only in review."""

from __future__ import annotations

import re
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "datbench_cli"


def sources() -> dict[str, str]:
    return {
        str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def defining(name: str) -> list[str]:
    pattern = re.compile(rf"^def {name}\(", re.M)
    return [path for path, text in sources().items() if pattern.search(text)]


class WrittenOnceTests(unittest.TestCase):
    def test_one_definition_each(self) -> None:
        expected = {
            "levenshtein": ["metrics/edit_distance.py"],
            "mean": ["metrics/averaging.py"],
            "_mean": [],
            "open_answer_matches": ["text/open_answer.py"],
            "parse_open_response": ["text/open_answer.py"],
            "extract_numbers": ["text/open_answer.py"],
        }
        for name, paths in expected.items():
            with self.subTest(name=name):
                self.assertEqual(defining(name), paths)

    def test_boxed_finders_live_in_one_module(self) -> None:
        finders = re.compile(r"^def \w*boxed\w*\(", re.M)
        self.assertEqual(
            [path for path, text in sources().items() if finders.search(text)], ["text/boxed.py"]
        )

    def test_compute_metrics_receives_bare_details(self) -> None:
        # report_html/ reads finished reports, where score_details is a key of each result;
        # what this guards is the scoring code handing compute_metrics wrapped details.
        unwrap = [
            path
            for path, text in sources().items()
            if 'get("score_details"' in text and not path.startswith("report_html/")
        ]
        self.assertEqual(unwrap, [])
