"""The OCR scorers' linear-time scans and tree-distance shortcuts against direct oracles.

Each oracle is the straightforward (regex or full-computation) form of the reference's step,
written from the scorer specs; random inputs over small, adversarial alphabets must agree.
"""

from __future__ import annotations

import json
import re
import unittest
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli.metrics import ocr_text, teds
from datbench_cli.scorers import cc_ocr_doc_parsing, cc_ocr_kie
from datbench_cli.scorers.ocrbench_v2_kie import _fenced_body, find_pairs


def texts(*tokens: str, max_size: int = 30) -> st.SearchStrategy[str]:
    """Strings glued from ``tokens``."""
    return st.lists(st.sampled_from(tokens), max_size=max_size).map("".join)


def plain_levenshtein(first: str, second: str) -> int:
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i]
        for j, b in enumerate(second, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


PIPE_RE = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", re.DOTALL)
PAIR_RE = re.compile(r"[\"']?([\w\s]+)[\"']?\s*[:=]\s*[\"']?([^\n,\"'{}]+)[\"']?")
FENCE_RE = re.compile(r"```(?:python|json)?\n(.*?)\n```", re.DOTALL | re.IGNORECASE)
TABLE_BLOCK_RE = re.compile(r"<table>(.*?)</table>", re.DOTALL | re.IGNORECASE)
TABLE_TAG_RE = re.compile(r"<table[^>]*>", re.IGNORECASE)


def group_or_none(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return found.group(1) if found else None


class BoxScanTests(unittest.TestCase):
    @given(texts("<|begin_of_box|>", "<|end_of_box|>", "<|begin_of", "a", "\n", "|>"))
    def test_first_pipe_box(self, text: str) -> None:
        self.assertEqual(ocr_text.first_pipe_box(text), group_or_none(PIPE_RE, text))

    def test_halfwidth(self) -> None:
        self.assertEqual(ocr_text.to_halfwidth("ＡＢ１！～\u3000ｚ"), "AB1!~ z")


class DocNormalizerTests(unittest.TestCase):
    @given(texts("\\title{", "\\title", "}", "{", "a", " ", "\n", "\\author{"))
    def test_braced_command(self, text: str) -> None:
        expected = re.sub(r"\\title\{.*?\}", "", text)
        self.assertEqual(cc_ocr_doc_parsing._drop_braced_command(text, "\\title{"), expected)

    @given(texts("<table>", "</table>", "<TABLE>", "<table", "<Table a=1>", ">", "<", "x", " "))
    def test_table_normalizer(self, text: str) -> None:
        block = TABLE_BLOCK_RE.search(text)
        expected = "<table>" + block.group(1) + "</table>" if block else text
        expected = re.sub(r">\s+<", "><", TABLE_TAG_RE.sub("<table>", expected))
        self.assertEqual(cc_ocr_doc_parsing.normalize_table(text), expected)


def reference_scan(text: str) -> Any:
    """The reference's brace-counting recovery loop."""
    start = text.find("{")
    if start == -1:
        return {}
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                try:
                    return json.loads(text[start : index + 1])
                except ValueError:
                    pass
    return {}


JSONISH = ("{", "}", '"', ":", ",", "a", "1", " ", "[", "]", '"a"', '"}"', "null", "x")


class KieExtractionTests(unittest.TestCase):
    @given(texts(*JSONISH))
    def test_recovery_scan(self, text: str) -> None:
        self.assertEqual(cc_ocr_kie._first_braced_object(text), reference_scan(text))


class KeyValueScrapeTests(unittest.TestCase):
    @settings(max_examples=500)
    @given(texts("a", "b", " ", "\n", "\t", ":", "=", '"', "'", ",", "{", "}", "-", "é", "_"))
    def test_find_pairs(self, text: str) -> None:
        self.assertEqual(find_pairs(text), PAIR_RE.findall(text))

    @given(texts("```", "python", "JSON", "json", "\n", "a", "`", "py"))
    def test_fenced_body(self, text: str) -> None:
        self.assertEqual(_fenced_body(text), group_or_none(FENCE_RE, text))


def apted_similarity(pred: str, gt: str) -> float:
    from apted import APTED

    pred_tree, gt_tree = teds.html_structure_tree(pred), teds.html_structure_tree(gt)
    distance = APTED(pred_tree, gt_tree).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / teds.tree_size(gt_tree))


HTML_TOKENS = ("<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "x", "<!--c-->", "<b>")


class TreeDistanceShortcutTests(unittest.TestCase):
    @settings(max_examples=150, deadline=None)
    @given(texts(*HTML_TOKENS, max_size=40), texts(*HTML_TOKENS, max_size=15))
    def test_table_similarity_matches_full_computation(self, pred: str, gt: str) -> None:
        self.assertEqual(teds.table_structure_similarity(pred, gt), apted_similarity(pred, gt))

    def test_empty_prediction_against_seven_nodes(self) -> None:
        gt = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"
        # The empty prediction parses to a lone "table" node: six insertions out of 7 nodes.
        self.assertEqual(teds.table_structure_similarity("", gt), 1.0 - 6 / 7)

    @settings(max_examples=150, deadline=None)
    @given(
        st.recursive(
            st.none() | st.sampled_from(["", "ab", "1", "x y"]) | st.integers(0, 20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(["", "k", "key", "m"]), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        st.dictionaries(st.sampled_from(["k", "name", "total"]), st.sampled_from(["", "ab"])),
    )
    def test_nted_matches_full_computation(self, pred: Any, gt: Any) -> None:
        from zss import Node, simple_distance

        pred_tree, gt_tree = teds.json_label_tree(pred), teds.json_label_tree(gt)
        pred_distance = simple_distance(pred_tree, gt_tree, label_dist=plain_levenshtein)
        gt_distance = simple_distance(Node("root"), gt_tree, label_dist=plain_levenshtein)
        if gt_distance == 0:
            expected = 1.0 if pred_distance == 0 else 0.0
        else:
            expected = min(1.0, max(0.0, 1.0 - pred_distance / gt_distance))
        self.assertEqual(cc_ocr_kie.nted_accuracy(pred, gt, -1.0), expected)
