"""Hostile model outputs for the CC-OCR and OCRBench v2 scorers finish under the time budget:
each is either scored or recorded as that sample's scorer error."""

from __future__ import annotations

import json
import unittest
from typing import Any

from tests.hostile import score_hostile, score_hostile_batch
from tests.vectors import DATA, load_lines

# Base rows: one per routing branch that parses structure (plus a plain one).
BASE_ROWS = {
    "cc_ocr_doc_parsing": ("db_document_ccocr_docparse_01", "db_document_ccocr_docparse_17"),
    "cc_ocr_kie": ("db_document_ccocr_kie_06",),
    "cc_ocr_multi_scene_ocr": ("db_scene_ccocr_msocr_01",),
    "ocrbench_v2": (
        "db_document_ocrbench_01",  # VQA on the extracted answer
        "db_document_ocrbench_15",  # key-information F1 on the raw output
        "db_document_ocrbench_20",  # HTML table parsing
        "db_document_ocrbench_21",  # markdown table parsing (VQA on the raw output)
        "db_document_ocrbench_24",  # VQA with position (boxes in free text)
        "db_document_ocrbench_26",  # full-page OCR
    ),
}

_PROSE = (
    "Total: 12.50, name = 'ACME' {\"k\": [1, 2]} see box [10, 20, 300, 400] and (1, 2, 3, 4)\n"
    '<td>cell</td> 苹果 ＡＢＣ ```json\n{"a": "}"} key:value = more words here\t'
)
ONE_MB_TEXT = (_PROSE * (1_000_000 // len(_PROSE) + 1))[:1_000_000]
NESTED_DIVS = "<div>" * 5000 + "deep" + "</div>" * 5000
NESTED_TABLES = "<table><tr><td>" * 5000 + "deep" + "</td></tr></table>" * 5000
ROW = "<tr>" + "<td>v</td>" * 100 + "</tr>"
TEN_THOUSAND_CELLS = "<table>" + ROW * 100 + "</table>"
HOSTILE_OUTPUTS = {
    "1 MB of text": ONE_MB_TEXT,
    "5,000 nested divs": NESTED_DIVS,
    "5,000 nested tables": NESTED_TABLES,
    "10,000 table cells": TEN_THOUSAND_CELLS,
}


def vector_rows(module: str) -> dict[str, dict[str, Any]]:
    return {line["row"]["id"]: line for line in load_lines(DATA / f"{module}.jsonl")}


def score_once(line: dict[str, Any], output: str) -> Any:
    return score_hostile(dict(line["row"], image=None), line["capability"], output)


class HostileOutputTests(unittest.TestCase):
    def test_every_dataset_name_finishes_on_hostile_outputs(self) -> None:
        cases = []
        for module, row_ids in BASE_ROWS.items():
            lines = vector_rows(module)
            cases += [(lines[row_id], name) for row_id in row_ids for name in HOSTILE_OUTPUTS]
        results = score_hostile_batch(
            [(line["row"], line["capability"], HOSTILE_OUTPUTS[name]) for line, name in cases]
        )
        for (line, name), result in zip(cases, results, strict=True):
            with self.subTest(row=line["row"]["id"], output=name):
                details = result.metadata["score_details"]
                self.assertIsInstance(result.score, float)
                self.assertTrue("error" in details or "score" in details)
                json.dumps(details, default=str)  # the details stay serialisable
        self.assertEqual(
            {line["row"]["source_info"]["dataset"] for line, _ in cases},
            {"cc-ocr-doc_parsing", "cc-ocr-kie", "cc-ocr-multi_scene_ocr", "ocrbench-v2"},
        )

    def test_huge_table_prediction_scores_zero_without_tree_distance(self) -> None:
        line = vector_rows("cc_ocr_doc_parsing")["db_document_ccocr_docparse_17"]
        result = score_once(line, TEN_THOUSAND_CELLS)
        details = result.metadata["score_details"]
        self.assertNotIn("error", details)
        self.assertEqual(details["score"], 0.0)
        self.assertEqual(details["method"], "teds")

    def test_deep_json_recursion_is_a_scorer_error(self) -> None:
        # The reference's json.loads raises RecursionError here (not a JSONDecodeError).
        line = vector_rows("cc_ocr_kie")["db_document_ccocr_kie_01"]
        result = score_once(line, '{"a":' * 5000 + "1" + "}" * 5000)
        self.assertEqual(result.metadata["score_details"]["error"]["type"], "RecursionError")
