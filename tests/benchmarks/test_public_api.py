"""The public Python API keeps the seed's shape (issue 18): ``compute_metrics`` takes exactly
the seed's arguments plus ``profile``; bad values are refused with a clear exception."""

from __future__ import annotations

import inspect
import unittest
import warnings
from typing import Any

from datbench_cli import DatBenchEvaluator, JudgeResponse, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import compute_report


def _row(ident: str) -> dict:
    return {
        "id": ident,
        "image": None,
        "question": "q",
        "answer": "yes",
        "eval_mode": "direct",
        "source_info": {"dataset": "not_registered"},
    }


class PublicApiTests(unittest.TestCase):
    def test_compute_metrics_has_the_seed_arguments_and_profile_only(self) -> None:
        parameters = inspect.signature(DatBenchEvaluator.compute_metrics).parameters
        self.assertEqual(
            list(parameters),
            ["self", "vlm_responses", "judge_responses", "strict_judge", "profile"],
        )
        self.assertIs(parameters["judge_responses"].default, None)
        self.assertIs(parameters["strict_judge"].default, False)
        self.assertEqual(parameters["profile"].kind, inspect.Parameter.KEYWORD_ONLY)
        for internal in (
            "errored_responses",
            "response_statuses",
            "errored_ids",
            "jobs",
            "progress",
        ):
            with self.subTest(internal=internal), self.assertRaises(TypeError):
                DatBenchEvaluator([_row("a")], "math").compute_metrics([], **{internal: 1})

    def test_the_public_method_and_the_stage_function_agree(self) -> None:
        evaluator = DatBenchEvaluator([_row("a"), _row("b")], "math")
        responses = [VLMResponse("a", "yes"), VLMResponse("b", "no")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            public = evaluator.compute_metrics(responses)
            internal = compute_report(evaluator, responses)
        self.assertEqual(public.summary, internal.summary)
        self.assertEqual(public.summary["overall_accuracy"], 0.5)

    def test_a_dataset_dict_of_splits_is_refused_by_name(self) -> None:
        # load_dataset(...) without split= gives a DatasetDict: DatBench said "hf_dataset[0]
        # must be a row, got str" (the split's name), VisualToolBench "the dataset lacks the
        # column(s) id, turn_prompts".
        from datasets import Dataset, DatasetDict

        from datbench_cli import VisToolBenchEvaluator

        splits = DatasetDict({"test": Dataset.from_list([_row("a")])})
        for make in (
            lambda: DatBenchEvaluator(splits, "math"),
            lambda: VisToolBenchEvaluator(splits),
        ):
            with self.subTest(make=make), self.assertRaises(ValueError) as caught:
                make()
            message = str(caught.exception)
            self.assertIn("a DatasetDict of splits (test)", message)
            self.assertIn('split="test"', message)

    def test_rows_that_are_no_collection_are_named(self) -> None:
        # 5 or 3.0 raised "'int' object is not iterable"; a single row was read as its keys.
        for bad in (None, 5, 3.0, "rows", b"rows", _row("a")):
            with self.subTest(bad=bad), self.assertRaises(TypeError) as caught:
                DatBenchEvaluator(bad, "math")  # type: ignore[arg-type]
            self.assertIn("hf_dataset must be the capability's rows", str(caught.exception))
            self.assertIn(type(bad).__name__, str(caught.exception))

    def test_capability_names_are_checked(self) -> None:
        with self.assertRaises(ValueError) as caught:
            DatBenchEvaluator([_row("a")], "maths")
        self.assertIn("math", str(caught.exception))

    def test_rows_that_cannot_be_samples_are_named(self) -> None:
        # They raised KeyError: 'id' and "string indices must be integers" from inside.
        with self.assertRaises(TypeError) as caught:
            DatBenchEvaluator([_row("a"), "b"], "math")
        self.assertIn("hf_dataset[1] must be a row", str(caught.exception))
        row = _row("b")
        del row["id"], row["answer"]
        with self.assertRaises(ValueError) as caught:
            DatBenchEvaluator([_row("a"), row], "math")
        self.assertIn("hf_dataset[1] has no 'id', 'answer' column", str(caught.exception))

    def test_a_repeated_sample_id_is_refused_by_row(self) -> None:
        # Both rows were kept and scored with the last response of the id (the first row's
        # answer dropped, one output counted twice); export-tasks refuses such a dataset.
        rows = [_row("a"), _row("b"), _row("a")]
        with self.assertRaises(ValueError) as caught:
            DatBenchEvaluator(rows, "math")
        self.assertIn("hf_dataset[2]: duplicate sample id 'a'", str(caught.exception))
        self.assertIn("first in hf_dataset[0]", str(caught.exception))

    def test_an_id_that_cannot_be_looked_up_is_named(self) -> None:
        # A list id raised "TypeError: unhashable type: 'list'" from inside.
        with self.assertRaises(TypeError) as caught:
            DatBenchEvaluator([_row("a"), {**_row("b"), "id": ["b"]}], "math")
        self.assertEqual(
            str(caught.exception), "hf_dataset[1]: sample id must be a string, got list"
        )

    def test_a_prompt_that_is_not_text_is_refused_by_get_inference_tasks(self) -> None:
        # A null question became the prompt "None" and a prompt_format string raised
        # AttributeError: 'str' object has no attribute 'get'; export-tasks refuses both.
        cases = (
            ({"question": None}, "hf_dataset[1] (id 'b'): question is null, not text"),
            ({"prompt_format": "x"}, "hf_dataset[1] (id 'b'): prompt_format is str, not an"),
            ({"prompt_format": {"suffix": 3}}, "prompt_format.suffix is int, not text"),
        )
        for extra, message in cases:
            evaluator = DatBenchEvaluator([_row("a"), {**_row("b"), **extra}], "math")
            with self.subTest(extra=extra), self.assertRaises(ValueError) as caught:
                evaluator.get_inference_tasks()
            self.assertIn(message, str(caught.exception))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = evaluator.compute_metrics([VLMResponse("b", "yes")])
            self.assertEqual(report.summary["overall_accuracy"], 1.0)  # scoring is unaffected

    def test_response_fields_must_be_text(self) -> None:
        # None stays accepted for raw_output: the spec's vectors score a null raw output.
        self.assertIsNone(VLMResponse("a", None).raw_output)  # type: ignore[arg-type]
        for bad in (3, b"yes", ["yes"]):
            with self.subTest(value=bad), self.assertRaises(TypeError) as caught:
                VLMResponse("a", bad)  # type: ignore[arg-type]
            self.assertIn("raw_output must be a string", str(caught.exception))
        with self.assertRaises(TypeError):
            VLMResponse(7, "yes")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            JudgeResponse("a", "true", verdict=True)  # type: ignore[arg-type]

    def test_responses_that_are_not_the_records_are_named(self) -> None:
        # A str, a dict or a VLMResponse among the judges raised AttributeError far inside, or
        # was scored 0 as a WorkerDied scorer error with only a warning.
        evaluator = DatBenchEvaluator([_row("a")], "math")
        for call, message in (
            (lambda: evaluator.compute_metrics(["a"]), "vlm_responses[0] must be a VLMResponse"),
            (
                lambda: evaluator.compute_metrics([{"id": "a", "raw_output": "yes"}]),
                "vlm_responses[0] must be a VLMResponse, got dict",
            ),
            (lambda: evaluator.compute_metrics("ab"), "vlm_responses must be an iterable"),
            (lambda: evaluator.compute_metrics(None), "vlm_responses must be an iterable"),
            (
                lambda: evaluator.compute_metrics(VLMResponse("a", "yes")),
                "vlm_responses must be an iterable of VLMResponse objects, got VLMResponse",
            ),
            (
                lambda: evaluator.compute_metrics(
                    [VLMResponse("a", "yes")], [VLMResponse("a", "true")]
                ),
                "judge_responses[0] must be a JudgeResponse, got VLMResponse",
            ),
            (lambda: evaluator.create_judge_tasks([1]), "vlm_responses[0] must be a VLMResponse"),
            # A number was "'int' object is not iterable", naming no argument.
            (lambda: evaluator.compute_metrics(5), "vlm_responses must be an iterable"),
            (lambda: evaluator.create_judge_tasks(5), "vlm_responses must be an iterable"),
            (lambda: evaluator.compute_metrics([], 5), "judge_responses must be an iterable"),
        ):
            with self.subTest(message), self.assertRaises(TypeError) as caught:
                call()
            self.assertIn(message, str(caught.exception))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluator.compute_metrics(iter([VLMResponse("a", "yes")]), ())
        self.assertEqual(report.summary["overall_accuracy"], 1.0)

    def test_a_lone_surrogate_is_refused_where_it_is_given(self) -> None:
        # Scored, it made report.save() and to_json() fail with "str is not valid UTF-8" at
        # the end of the run; a response file holding one is refused by file and line.
        for make, field in (
            (lambda text: VLMResponse("a", text), "raw_output"),
            (lambda text: VLMResponse("a", "x", parsed_answer=text), "parsed_answer"),
            (lambda text: VLMResponse(text, "x"), "id"),
            (lambda text: JudgeResponse("a", text), "raw_judge_output"),
            (lambda text: JudgeResponse("a", "x", verdict=text), "verdict"),
        ):
            with self.subTest(field=field), self.assertRaises(ValueError) as caught:
                make("answer: \ud800")
            self.assertIn(f".{field} holds a lone surrogate", str(caught.exception))
        self.assertEqual(
            VLMResponse("a", "caf\u00e9 \U0001f600").raw_output, "caf\u00e9 \U0001f600"
        )

    def test_strict_judge_must_be_a_bool(self) -> None:
        # strict_judge="no" (or "false", read from a config file) is truthy: both evaluators
        # judged strictly, raising StrictJudgeError on a run the caller meant to score.
        from datbench_cli import VisToolBenchEvaluator
        from tests.vtb_support import sample_rows

        datbench = DatBenchEvaluator([_row("a")], "math")
        vistoolbench = VisToolBenchEvaluator(sample_rows(), warn=lambda message: None)
        for bad in ("no", "false", 1, None):
            for name, call in (
                ("datbench", lambda bad=bad: datbench.compute_metrics([], strict_judge=bad)),
                ("vistoolbench", lambda bad=bad: vistoolbench.compute_metrics([], [], bad)),
            ):
                with self.subTest(name=name, value=bad):
                    with self.assertRaises(TypeError) as caught:
                        call()
                    self.assertIn("strict_judge must be True or False", str(caught.exception))

    def test_save_names_a_path_that_is_no_file_name(self) -> None:
        # save(5) said "expected str, bytes or os.PathLike object, not int", naming no
        # argument; save("") wrote to "." and failed with "cannot write .: is a directory".
        import tempfile
        from pathlib import Path

        from datbench_cli import VisToolBenchReport

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = DatBenchEvaluator([_row("a")], "math").compute_metrics(
                [VLMResponse("a", "yes")]
            )
        for saved in (report, VisToolBenchReport(summary={}, results=[])):
            for bad, error in ((5, TypeError), (b"r.json", TypeError), ("", ValueError)):
                with self.subTest(report=type(saved).__name__, path=bad):
                    with self.assertRaises(error) as caught:
                        saved.save(bad)  # type: ignore[arg-type]
                    self.assertIn("path must", str(caught.exception))
            with tempfile.TemporaryDirectory() as folder:
                saved.save(str(Path(folder) / "a.json"))
                saved.save(Path(folder) / "b.json")
                self.assertTrue((Path(folder) / "a.json").is_file())
                self.assertTrue((Path(folder) / "b.json").is_file())

    def test_vistoolbench_options_of_the_wrong_kind_are_named(self) -> None:
        # first_image_only="no" is truthy: every turn silently kept only its first image;
        # warn=5 and context=["golden"] failed as "'int' object is not callable" and
        # "unhashable type: 'list'", naming no argument.
        from datbench_cli import VisToolBenchEvaluator
        from tests.vtb_support import sample_rows

        for options, error, message in (
            ({"first_image_only": "no"}, TypeError, "first_image_only must be True or False"),
            ({"first_image_only": 1}, TypeError, "first_image_only must be True or False"),
            ({"warn": 5}, TypeError, "warn must be a function"),
            ({"context": ["golden"]}, ValueError, "context must be one of golden, model"),
        ):
            with self.subTest(options=options):
                with self.assertRaises(error) as caught:
                    VisToolBenchEvaluator(sample_rows(), **options)
                self.assertIn(message, str(caught.exception))
        kept: list[str] = []
        evaluator = VisToolBenchEvaluator(sample_rows(), first_image_only=True, warn=kept.append)
        self.assertTrue(evaluator.tasks)

    def test_a_response_digest_that_is_no_digest_is_refused(self) -> None:
        # A judge file's line with one is refused (and a VisualToolBench judge dict); a
        # JudgeResponse with one was taken, and its verdict silently scored 0 as stale.
        from datbench_cli.batch.digests import response_digest

        for bad in ("abc", "", "ABCDEF0123456789", "sha256:" + "0" * 64):
            with self.subTest(digest=bad), self.assertRaises(ValueError) as caught:
                JudgeResponse("a", "true", response_digest=bad)
            self.assertIn("JudgeResponse.response_digest must be", str(caught.exception))
        judge_row = dict(_row("a"), eval_mode="judge")
        evaluator = DatBenchEvaluator([judge_row], "math")
        judged = JudgeResponse("a", "true", response_digest=response_digest("yes"))
        report = evaluator.compute_metrics([VLMResponse("a", "yes")], [judged])
        self.assertEqual(report.summary["judge_accuracy"], 1.0)

    def test_responses_with_attributes_of_their_own_are_scored(self) -> None:
        # The held responses travel pickled to the scoring workers: a subclass defined in a
        # function, or an attribute added to a response (a lock, a lambda), failed the call
        # with "Can't pickle local object" or "cannot pickle '_thread.lock' object".
        import threading

        def local_class() -> type[VLMResponse]:
            class Local(VLMResponse):
                pass

            return Local

        judge_row = dict(_row("b"), eval_mode="judge")
        evaluator = DatBenchEvaluator([_row("a"), judge_row], "math")
        with_lock = VLMResponse("a", "yes")
        with_lock.client = threading.Lock()  # type: ignore[attr-defined]
        judge = JudgeResponse("b", "true")
        judge.callback = lambda: None  # type: ignore[attr-defined]
        for responses in (
            [local_class()("a", "yes"), local_class()("b", "x")],
            [with_lock, VLMResponse("b", "x")],
        ):
            with self.subTest(responses=responses):
                report = evaluator.compute_metrics(responses, [judge])
                self.assertEqual(report.summary["overall_accuracy"], 1.0)
                self.assertEqual(report.summary["total_samples"], 2)
        # A field set to another type after construction is refused as at construction,
        # not scored as a scorer error.
        changed = VLMResponse("a", "yes")
        changed.raw_output = 5  # type: ignore[assignment]
        with self.assertRaises(TypeError) as caught:
            evaluator.compute_metrics([changed], [judge])
        self.assertIn("raw_output must be a string", str(caught.exception))

    def test_judge_responses_of_direct_mode_samples_are_counted(self) -> None:
        # They are ignored (no judge scores a direct-mode sample); only a warning said so, and
        # the report kept no trace of them, unlike judge ids that match no sample.
        evaluator = DatBenchEvaluator([_row("a"), _row("b")], "math")
        responses = [VLMResponse("a", "yes"), VLMResponse("b", "no")]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = evaluator.compute_metrics(responses, [JudgeResponse("a", "false")])
        self.assertEqual(report.summary["direct_judge_response_ids"], 1)
        self.assertEqual(report.summary["unknown_judge_response_ids"], 0)
        self.assertEqual(report.summary["overall_accuracy"], 0.5)  # the verdict is not used
        self.assertTrue(any("direct-mode samples" in str(w.message) for w in caught))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = evaluator.compute_metrics(responses)
        self.assertEqual(plain.summary["direct_judge_response_ids"], 0)

    def test_vistoolbench_warnings_stay_with_the_thread_of_their_call(self) -> None:
        # One flag per evaluator said "a public call is running": a call on thread B while
        # thread A's call ran held B's warnings and returned without them; A's call gave
        # them out at A's caller once it ended (never, had A not ended).
        import threading

        from datbench_cli import VisToolBenchEvaluator
        from tests.vtb_support import sample_rows

        evaluator = VisToolBenchEvaluator(sample_rows())
        started, release = threading.Event(), threading.Event()

        def blocked() -> Any:
            started.set()
            release.wait(30)
            yield from ()

        shown: dict[str, list[str]] = {"a": [], "b": []}
        original = warnings.showwarning

        def show(message: Any, *args: Any, **kwargs: Any) -> None:
            shown[threading.current_thread().name].append(str(message))

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            try:
                first = threading.Thread(
                    target=lambda: evaluator.compute_metrics(blocked(), []), name="a"
                )
                first.start()
                self.assertTrue(started.wait(30))
                second = threading.Thread(
                    target=lambda: evaluator.compute_metrics([], []), name="b"
                )
                second.start()
                second.join(30)
                b_during = list(shown["b"])
                release.set()
                first.join(30)
            finally:
                release.set()
                warnings.showwarning = original
        self.assertTrue(b_during, "thread b's call gave out no warning of its own")
        self.assertEqual(len(shown["a"]), len(b_during))  # each gave out its own, once


if __name__ == "__main__":
    unittest.main()


def test_the_quick_start_import_name_gives_the_public_api() -> None:
    # The seed's Quick Start imports `from datbench import DatBenchEvaluator, VLMResponse,
    # JudgeResponse`; the package is datbench_cli. Checked in a fresh interpreter started
    # outside the checkout, so the installed package (not the working directory) answers.
    import subprocess
    import sys
    import tempfile

    code = (
        "import datbench, datbench_cli\n"
        "from datbench import *\n"
        "from datbench import DatBenchEvaluator, VLMResponse, JudgeResponse\n"
        "assert DatBenchEvaluator is datbench_cli.DatBenchEvaluator\n"
        "assert sorted(datbench.__all__) == sorted(datbench_cli.__all__) == dir(datbench)\n"
        "assert VisToolBenchEvaluator is datbench_cli.VisToolBenchEvaluator\n"
        "try:\n    datbench.nothing\nexcept AttributeError as e:\n    print(e)\n"
    )
    with tempfile.TemporaryDirectory() as elsewhere:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "module 'datbench' has no attribute 'nothing'\n"
