"""Branches of the OCR scorers that the shared vectors do not reach.

Expected values were produced by running the reference modules (DatBench @ bd2ecaf, installed
from its own setup.py) on these exact inputs.
"""

from __future__ import annotations

import importlib
import unittest
from typing import Any

from tests.vectors import assert_same, round_trip

# (what, scorer module, scorer sample, model output, expected details or ["err", type, message])
CASES: list[tuple[str, str, dict[str, Any], Any, Any]] = [
    (
        "counting, single (non-list) answer, regression",
        "ocrbench_v2",
        {"type": "text counting en", "eval": "regression", "answers": "10", "question": ""},
        "There are 9 words",
        {
            "score": 0.9,
            "task_type": "text counting en",
            "dataset_name": "",
            "scoring_method": "counting",
            "ground_truth": "10",
            "model_output": "There are 9 words",
            "pred_answer": "There are 9 words",
        },
    ),
    (
        "counting, single answer, unknown mode scores 0",
        "ocrbench_v2",
        {"type": "text counting en", "eval": "other", "answers": "10", "question": ""},
        "10",
        {
            "score": 0,
            "task_type": "text counting en",
            "dataset_name": "",
            "scoring_method": "counting",
            "ground_truth": "10",
            "model_output": "10",
            "pred_answer": "10",
        },
    ),
    (
        "counting, list answers, unknown mode is exact match",
        "ocrbench_v2",
        {"type": "text counting en", "eval": "other", "answers": ["10"], "question": ""},
        "10 words",
        {
            "score": 1,
            "task_type": "text counting en",
            "dataset_name": "",
            "scoring_method": "counting",
            "ground_truth": ["10"],
            "model_output": "10 words",
            "pred_answer": "10 words",
        },
    ),
    (
        "math QA multiple choice",
        "ocrbench_v2",
        {"type": "math QA en", "eval": "multiple choice", "answers": ["C"], "question": ""},
        "Answer: C",
        {
            "score": 1.0,
            "task_type": "math QA en",
            "dataset_name": "",
            "scoring_method": "multiple_choice",
            "ground_truth": ["C"],
            "model_output": "Answer: C",
            "pred_answer": "C",
        },
    ),
    (
        "KIE with a None output raises like the reference",
        "ocrbench_v2",
        {"type": "key information extraction en", "answers": ["{'a': '1'}"], "question": ""},
        None,
        ["err", "TypeError", "expected string or bytes-like object, got 'NoneType'"],
    ),
    (
        "position dict path: a 3-number box is caught (content only)",
        "ocrbench_v2",
        {"type": "VQA with position en", "answers": ["EXIT"], "bbox": [1, 2, 3, 4], "question": ""},
        '{"answer": "exit", "bbox": "[1, 2, 3]"}',
        {
            "score": 0.5,
            "task_type": "VQA with position en",
            "dataset_name": "",
            "scoring_method": "vqa_with_position",
            "ground_truth": ["EXIT"],
            "model_output": '{"answer": "exit", "bbox": "[1, 2, 3]"}',
            "pred_answer": '{"answer": "exit", "bbox": "[1, 2, 3]"}',
        },
    ),
    (
        "grounding text path: a 3-number GT box raises IndexError",
        "ocrbench_v2",
        {"type": "text grounding en", "answers": ["x"], "bbox": [1, 2, 3], "question": ""},
        "[1, 2, 3, 4]",
        ["err", "IndexError", "list index out of range"],
    ),
    (
        "full-page OCR, both empty: 0.25",
        "ocrbench_v2",
        {"type": "full-page OCR en", "answers": [""], "question": ""},
        "",
        {
            "score": 0.25,
            "task_type": "full-page OCR en",
            "dataset_name": "",
            "scoring_method": "full_page_ocr",
            "ground_truth": [""],
            "model_output": "",
            "pred_answer": "",
        },
    ),
    (
        "table parsing with a None question: 0.0",
        "ocrbench_v2",
        {"type": "table parsing en", "answers": ["<table></table>"], "question": None},
        "<table></table>",
        {
            "score": 0.0,
            "task_type": "table parsing en",
            "dataset_name": "",
            "scoring_method": "teds",
            "ground_truth": ["<table></table>"],
            "model_output": "<table></table>",
            "pred_answer": "<table></table>",
        },
    ),
    (
        "handwritten extraction without 简答: CN VQA",
        "ocrbench_v2",
        {"type": "handwritten answer extraction cn", "answers": ["光合作用"], "question": "填空"},
        "光合 作用",
        {
            "score": 1,
            "task_type": "handwritten answer extraction cn",
            "dataset_name": "",
            "scoring_method": "handwritten_extraction",
            "ground_truth": ["光合作用"],
            "model_output": "光合 作用",
            "pred_answer": "光合 作用",
        },
    ),
    (
        "KIE: empty alternatives list gives GT {}",
        "ocrbench_v2",
        {"type": "key information extraction cn", "answers": ["{'k': []}"], "question": ""},
        "{}",
        {
            "score": 0.0,
            "task_type": "key information extraction cn",
            "dataset_name": "",
            "scoring_method": "kie_f1",
            "ground_truth": ["{'k': []}"],
            "model_output": "{}",
            "pred_answer": "{}",
        },
    ),
    (
        "document parsing with a dict GT (not a string) and scraped pairs",
        "ocrbench_v2",
        {"type": "document parsing en", "answers": [{"a": "X"}], "question": ""},
        "a = x, b: 2",
        {
            "score": 0.6666666666666666,
            "task_type": "document parsing en",
            "dataset_name": "",
            "scoring_method": "doc_parsing_f1",
            "ground_truth": [{"a": "X"}],
            "model_output": "a = x, b: 2",
            "pred_answer": "a = x, b: 2",
        },
    ),
    (
        "unhashable task type falls back to VQA",
        "ocrbench_v2",
        {"type": ["odd"], "answers": ["odd"], "question": ""},
        "odd one",
        {
            "score": 1,
            "task_type": ["odd"],
            "dataset_name": "",
            "scoring_method": "vqa_fallback",
            "ground_truth": ["odd"],
            "model_output": "odd one",
            "pred_answer": "odd one",
        },
    ),
    (
        "table with an XML declaration outside the table block",
        "cc_ocr_doc_parsing",
        {"answer": "<table><tr><td>a</td></tr></table>", "l2_category": "table"},
        '<?xml version="1.0" encoding="UTF-8"?><table><tr><td>a</td></tr></table>',
        {
            "score": 1.0,
            "l2_category": "table",
            "ground_truth": "<table><tr><td>a</td></tr></table>",
            "model_output": '<?xml version="1.0" encoding="UTF-8"?><table><tr><td>a</td></tr></table>',
            "method": "teds",
            "pred_length": 34,
            "gt_length": 34,
        },
    ),
    (
        "hyphenated l2-category routes when passed directly",
        "cc_ocr_doc_parsing",
        {"answer": "<table><tr><td>a</td></tr></table>", "l2-category": "table"},
        "<table><tr><td>b</td></tr></table>",
        {
            "score": 1.0,
            "l2_category": "table",
            "ground_truth": "<table><tr><td>a</td></tr></table>",
            "model_output": "<table><tr><td>b</td></tr></table>",
            "method": "teds",
            "pred_length": 34,
            "gt_length": 34,
        },
    ),
    (
        "unterminated \\author{ is kept",
        "cc_ocr_doc_parsing",
        {"answer": "\\title{T}\nbody\\author{x", "l2_category": "doc"},
        "body\\author{x",
        {
            "score": 1.0,
            "l2_category": "doc",
            "ground_truth": "\\title{T}\nbody\\author{x",
            "model_output": "body\\author{x",
            "edit_distance": 0,
            "pred_length": 13,
            "gt_length": 13,
        },
    ),
    (
        "KIE: first braced object after a failed whole parse",
        "cc_ocr_kie",
        {"answer": '{"a": "1"}'},
        '{"a": "1"} and {"b": "2"}',
        {
            "score": 0.9999995000005,
            "f1_score": 0.9999990000010001,
            "nted_score": 1.0,
            "l2_category": "",
            "ground_truth": '{"a": "1"}',
            "model_output": '{"a": "1"} and {"b": "2"}',
        },
    ),
    (
        "KIE: list items become strings",
        "cc_ocr_kie",
        {"answer": '{"a": ["1", 2, [3]]}'},
        '{"a": ["1", "2", "[3]"]}',
        {
            "score": 0.9999998333333888,
            "f1_score": 0.9999996666667778,
            "nted_score": 1.0,
            "l2_category": "",
            "ground_truth": '{"a": ["1", 2, [3]]}',
            "model_output": '{"a": ["1", "2", "[3]"]}',
        },
    ),
    (
        "KIE: a brace inside a string after prose gives {}",
        "cc_ocr_kie",
        {"answer": '{"a": "x"}'},
        'prefix {"a": "}"}',
        {
            "score": 0.0,
            "f1_score": 0.0,
            "nted_score": 0.0,
            "l2_category": "",
            "ground_truth": '{"a": "x"}',
            "model_output": 'prefix {"a": "}"}',
        },
    ),
]


class ReferenceBranchTests(unittest.TestCase):
    def test_cases(self) -> None:
        for what, module_name, sample, output, expected in CASES:
            module = importlib.import_module(f"datbench_cli.scorers.{module_name}")
            with self.subTest(what):
                if isinstance(expected, list):
                    with self.assertRaises(Exception) as caught:
                        module.score_sample(dict(sample), output)
                    self.assertEqual(type(caught.exception).__name__, expected[1])
                    self.assertEqual(str(caught.exception), expected[2])
                else:
                    assert_same(
                        self, round_trip(module.score_sample(dict(sample), output)), expected
                    )
