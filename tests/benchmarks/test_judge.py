"""parse_judge_verdict: the seed's four rules, their precedence and fall-throughs; the rewrite."""

from __future__ import annotations

import unittest

from datbench_cli import parse_judge_verdict
from datbench_cli.benchmarks.datbench.judge import SINGLE_TOKEN_INSTRUCTION, rewrite_judge_prompt

# (verdict, raw_judge_output, expected)
TABLE = [
    # Rule 1: the verdict field wins, case-insensitively; unknown values fall through.
    ("correct", "answer: false", True),
    ("INCORRECT", '{"answer": true}', False),
    ("true", "", True),
    ("No", "yes", False),
    (" yes ", "", True),
    ("maybe", "answer: false", False),
    ("", "true", True),
    (None, "false", False),
    ("unsure", "the model is right", None),
    # Rule 2: JSON, fenced or not; bool or string answers; bare JSON booleans.
    (None, '{"answer": true}', True),
    (None, '{"answer": false, "reason": "wrong unit"}', False),
    (None, '{"answer": "yes"}', True),
    (None, '{"answer": "Incorrect"}', False),
    (None, '{"Answer": "CORRECT"}', True),
    (None, '```json\n{"answer": true}\n```', True),
    (None, '```\n{"answer": "no"}\n```', False),
    (None, "true", True),
    (None, "false", False),
    (None, '{"answer": "perhaps"}\nanswer: true', True),  # unrecognised JSON value falls through
    # Rule 3: an answer line anywhere in the text.
    (None, "Reason: same value.\nanswer: true", True),
    (None, "Reason: different.\nAnswer: FALSE", False),
    (None, "Some thoughts\n  answer: yes\n", True),
    (None, "answer: no.", False),
    (None, "answer: true\n...on reflection...\nanswer: false", False),  # last line wins
    # Rule 4: the whole output is one token.
    (None, "  Correct \n", True),
    (None, "INCORRECT", False),
    (None, "Yes", True),
    (None, "no", False),
    # Unparsed.
    (None, "", None),
    (None, "   ", None),
    (None, "The model answer looks right to me.", None),
    (None, '{"score": 1, "rubric": "matches the reference"}', None),
    (None, '{"reason": "correct"}', None),
    (None, "the answer is true", None),
    (None, "[true]", None),
    (None, None, None),
    (None, "true.", None),
]


class ParseJudgeVerdictTests(unittest.TestCase):
    def test_table(self) -> None:
        for verdict, raw, expected in TABLE:
            with self.subTest(verdict=verdict, raw=raw):
                self.assertIs(parse_judge_verdict(verdict, raw), expected)

    def test_never_raises_on_odd_types(self) -> None:
        for verdict, raw in [(1, 2), (["yes"], {"answer": True}), (True, None), (False, "true")]:
            with self.subTest(verdict=verdict, raw=raw):
                parse_judge_verdict(verdict, raw)
        self.assertIs(parse_judge_verdict(True, None), True)
        self.assertIs(parse_judge_verdict(False, "true"), False)

    def test_deeply_nested_json_is_unparsed_not_an_error(self) -> None:
        self.assertIsNone(parse_judge_verdict(None, "[" * 5000 + "]" * 5000))
        self.assertIsNone(parse_judge_verdict(None, '{"a":' * 5000 + "1" + "}" * 5000))


class RewriteJudgePromptTests(unittest.TestCase):
    def test_two_line_instruction_is_replaced(self) -> None:
        prompt = "Grade it.\nRespond with exactly two lines:\nReason: <r>\nanswer: true or false"
        self.assertEqual(rewrite_judge_prompt(prompt), "Grade it." + SINGLE_TOKEN_INSTRUCTION)
        self.assertTrue(rewrite_judge_prompt(prompt).endswith("answer: "))

    def test_only_last_marker_counts(self) -> None:
        prompt = "A Respond with exactly two lines: x\nB Respond with exactly two lines: y"
        self.assertEqual(
            rewrite_judge_prompt(prompt),
            "A Respond with exactly two lines: x\nB" + SINGLE_TOKEN_INSTRUCTION,
        )

    def test_marker_is_case_sensitive_and_missing_prompt_is_empty(self) -> None:
        prompt = "respond with exactly two lines: lower case"
        self.assertEqual(rewrite_judge_prompt(prompt), prompt)
        self.assertEqual(rewrite_judge_prompt(None), "")
        self.assertEqual(rewrite_judge_prompt(""), "")


if __name__ == "__main__":
    unittest.main()
