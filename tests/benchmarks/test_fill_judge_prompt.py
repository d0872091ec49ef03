"""``fill_judge_prompt``: the public way to get the text a judge sees."""

from __future__ import annotations

import unittest

from datbench_cli import DatBenchEvaluator, VLMResponse, fill_judge_prompt
from tests.cli_helpers import make_row


class FillJudgePromptTests(unittest.TestCase):
    def evaluator(self, prompt: str) -> DatBenchEvaluator:
        row = make_row(
            "j1",
            answer="4",
            eval_mode="judge",
            judge_prompt=prompt,
            question="What is 2+2?",
            all_answers=["4", "four"],
        )
        return DatBenchEvaluator([row], "math")

    def test_placeholders_are_filled_literally(self) -> None:
        evaluator = self.evaluator("Q: {question}\nGold: {correct_answer}\nModel: {model_answer}")
        [task] = evaluator.create_judge_tasks([VLMResponse("j1", "It is {question} 4")])
        text = fill_judge_prompt(task, evaluator.samples_by_id["j1"])
        self.assertEqual(text, "Q: What is 2+2?\nGold: 4\nModel: It is {question} 4")

    def test_missing_placeholders_are_appended_under_labels(self) -> None:
        evaluator = self.evaluator("Is the model right?")
        [task] = evaluator.create_judge_tasks([VLMResponse("j1", "four")])
        text = fill_judge_prompt(task, evaluator.samples_by_id["j1"])
        self.assertTrue(text.startswith("Is the model right?\n\nQuestion:\nWhat is 2+2?"))
        self.assertIn("Reference answer:\n4", text)
        self.assertIn("Other accepted answers:\nfour", text)
        self.assertTrue(text.endswith("Model answer:\nfour"))

    def test_without_the_sample_the_question_is_empty(self) -> None:
        evaluator = self.evaluator("{question}|{correct_answer}|{model_answer}")
        [task] = evaluator.create_judge_tasks([VLMResponse("j1", "x")])
        self.assertEqual(fill_judge_prompt(task), "|4|x")

    def test_arguments_of_another_kind_are_named(self) -> None:
        # A judge_tasks.jsonl line or a dataset row raised AttributeError: 'dict' object has
        # no attribute 'judge_prompt' / 'question' from inside.
        evaluator = self.evaluator("{question}")
        [task] = evaluator.create_judge_tasks([VLMResponse("j1", "x")])
        with self.assertRaises(TypeError) as caught:
            fill_judge_prompt({"id": "j1", "judge_prompt": "{question}"})  # type: ignore[arg-type]
        self.assertIn("request must be a JudgeRequest", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            fill_judge_prompt(task, {"question": "q"})  # type: ignore[arg-type]
        self.assertIn("sample must be a DatBenchSample", str(caught.exception))
        self.assertIn("got dict", str(caught.exception))


class DocumentedInstructionTests(unittest.TestCase):
    def test_runners_doc_quotes_the_instructions_that_are_sent(self) -> None:
        from datbench_cli.benchmarks.datbench.judge import SINGLE_TOKEN_INSTRUCTION
        from datbench_cli.benchmarks.datbench.judge_prompt import DEFAULT_JUDGE_INSTRUCTION
        from tests.cli_helpers import ROOT

        doc = " ".join((ROOT / "docs" / "runners.md").read_text(encoding="utf-8").split())
        self.assertIn(f"`{SINGLE_TOKEN_INSTRUCTION.strip()} `", doc)
        self.assertIn(f'"{DEFAULT_JUDGE_INSTRUCTION}"', doc)


if __name__ == "__main__":
    unittest.main()
