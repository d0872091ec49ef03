"""``parse_vtb_verdict``: the spec's parser vectors (§5) and the rules behind them (§3.2)."""

from __future__ import annotations

import random
import re
import unittest

from datbench_cli.benchmarks.vistoolbench.verdict import (
    normalise,
    parse_vtb_verdict,
    read_judgement,
    unfenced,
)
from tests.bounded import within

MISSING = object()

# (verdict field or MISSING, raw judge output, expected) -- the table of spec §5.
SPEC_VECTORS = [
    (MISSING, '{"explanation":"ok","judge_result":"Met"}', "met"),
    (MISSING, '{"explanation":"x","judge_result":"Not Met"}', "not_met"),
    (MISSING, '```json\n{"judge_result": "NOT_MET"}\n```', "not_met"),
    (MISSING, 'Sure: {"explanation": "met the bar", "judge_result": "Not Met"} done', "not_met"),
    (MISSING, "**Judge result:** Met", "met"),
    (MISSING, 'judge_result = "not met"', "not_met"),
    (MISSING, "Not Met", "not_met"),
    (MISSING, "met.", "met"),
    (MISSING, '{"explanation": "criterion met"}', None),
    (MISSING, "The answer meets the criterion.", None),
    (MISSING, "", None),
    ("Met", "garbage", "met"),
    ("maybe", '{"judge_result":"Met"}', "met"),
    (MISSING, '{"judge_result": true}', "met"),
]


class SpecVectorTests(unittest.TestCase):
    def test_every_spec_vector(self) -> None:
        for verdict, raw, expected in SPEC_VECTORS:
            given = None if verdict is MISSING else verdict
            with self.subTest(verdict=given, raw=raw):
                self.assertEqual(parse_vtb_verdict(given, raw), expected)


class RuleTests(unittest.TestCase):
    def test_verdict_field_booleans_and_tokens(self) -> None:
        self.assertEqual(parse_vtb_verdict(True, ""), "met")
        self.assertEqual(parse_vtb_verdict(False, "Met"), "not_met")
        self.assertEqual(parse_vtb_verdict("does-not-meet", ""), "not_met")
        self.assertEqual(parse_vtb_verdict(" `Passed.` ", ""), "met")

    def test_non_string_verdict_falls_through(self) -> None:
        self.assertEqual(parse_vtb_verdict(1, "Not Met"), "not_met")
        self.assertEqual(parse_vtb_verdict({"x": 1}, ""), None)

    def test_first_present_key_in_priority_order(self) -> None:
        raw = '{"result": "Not Met", "Judge_Result": "Met"}'
        self.assertEqual(parse_vtb_verdict(None, raw), "met")

    def test_unknown_value_of_first_key_goes_on_to_the_phrase_rule(self) -> None:
        self.assertEqual(
            parse_vtb_verdict(None, '{"judge_result": "partly", "verdict": "Met"}'), None
        )
        self.assertEqual(
            parse_vtb_verdict(None, '{"verdict": "unclear"} judge result: not met'), "not_met"
        )

    def test_top_level_json_string(self) -> None:
        self.assertEqual(parse_vtb_verdict(None, '"Not Met"'), "not_met")
        self.assertEqual(parse_vtb_verdict(None, "false"), "not_met")

    def test_first_decodable_object_is_used(self) -> None:
        raw = 'x {broken {"judge_result": "Met"} {"judge_result": "Not Met"}'
        self.assertEqual(parse_vtb_verdict(None, raw), "met")

    def test_phrase_prefers_not_met(self) -> None:
        self.assertEqual(parse_vtb_verdict(None, "Judge_Result: **'Not   Met'**"), "not_met")
        self.assertEqual(parse_vtb_verdict(None, "judge result: metric"), None)

    def test_met_inside_prose_never_decides(self) -> None:
        self.assertIsNone(parse_vtb_verdict(None, "All criteria were met, I think."))

    def test_normalise(self) -> None:
        self.assertEqual(normalise('  "**Not_Met.**" '), "not met")
        self.assertEqual(normalise("DOES-NOT   MEET"), "does not meet")

    def test_explanation_is_kept(self) -> None:
        judgement = read_judgement(None, '{"explanation": "fine", "judge_result": "Met"}')
        self.assertEqual((judgement.status, judgement.explanation), ("met", "fine"))
        self.assertIsNone(read_judgement(None, "**Judge result:** Met").explanation)

    def test_non_string_raw_is_unparsed(self) -> None:
        self.assertIsNone(parse_vtb_verdict(None, None))

    def test_hostile_outputs_finish(self) -> None:
        hostile = [
            "{" * 1_000_000,
            "[" * 1_000_000,
            '{"a": "' + "x" * 1_000_000,
            ('{"k": [' * 1000 + " ") * 100,
            "judge result" + " *" * 500_000,
            "```json\n" + "m" * 1_000_000,
        ]
        for raw in hostile:
            with self.subTest(start=raw[:20]):
                self.assertIsNone(parse_vtb_verdict(None, raw))

    def test_blank_space_after_an_opening_fence_finishes(self) -> None:
        # The fence pattern backtracked quadratically over the blank space after an opening
        # fence: 8 KB took 6.6 s, 32 KB 99 s. 10 s is the bound (tests.bounded.within).
        for raw, expected in (
            ("```" + " " * 32_000 + "met", "met"),
            ("```json" + "\t" * 32_000 + "\r" + "x" * 32_000, None),
            ("```" + " " * 32_000 + "Met\r\n```", "met"),
        ):
            with self.subTest(start=raw[:8], end=raw[-5:]):
                self.assertEqual(within(10, parse_vtb_verdict, None, raw), expected)


class FenceParityTests(unittest.TestCase):
    """The fence is dropped exactly as ``re.match(r"\\A```(?:json)?[ \\t]*\\r?\\n?(.*?)\\r?\\n?```\\Z",
    text, re.DOTALL | re.IGNORECASE).group(1).strip()`` drops it (spec §3.2, rule 2)."""

    TOKENS = ("```", "`", "json", "JSON", "jſon", " ", "\t", "\r", "\n", "\r\n", "x", "{", "}")

    @staticmethod
    def reference(text: str) -> str:
        pattern = r"\A```(?:json)?[ \t]*\r?\n?(.*?)\r?\n?```\Z"
        fenced = re.match(pattern, text, re.DOTALL | re.IGNORECASE)
        return fenced.group(1).strip() if fenced else text

    def test_random_texts(self) -> None:
        rng = random.Random(36)
        mismatches, fenced = [], 0
        for _ in range(20000):
            text = "".join(rng.choice(self.TOKENS) for _ in range(rng.randint(0, 10)))
            if rng.random() < 0.5:
                text = "```" + text + "```"
            text = text.strip()
            fenced += self.reference(text) != text
            if unfenced(text) != self.reference(text):
                mismatches.append(text)
        self.assertEqual(mismatches[:5], [])
        self.assertGreater(fenced, 2000)  # not vacuous


if __name__ == "__main__":
    unittest.main()
