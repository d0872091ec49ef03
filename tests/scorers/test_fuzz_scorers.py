"""Property tests of every registered scorer through the evaluator: for any model output the
sample is scored (a float in [0, 1]) or carries a recorded scorer error, within the per-sample
budget, and scoring it twice (in another order) gives the same result."""

from __future__ import annotations

import unittest
import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import ScoreOptions, compute_report
from datbench_cli.scorers import SCORERS
from tests.hostile import check_not_over_budget
from tests.hypothesis_profiles import examples
from tests.vectors import DATA, load_lines

SAMPLE_TIMEOUT = 5.0
# Outputs scored per evaluator call (each call starts and stops a pool: about 0.1 s).
BATCH = 12
FALLBACK = "no_such_dataset"


def base_rows() -> dict[str, tuple[str, dict[str, Any]]]:
    """Per registered dataset name: its capability and the first direct-mode vector row the
    reference scored without raising (else its first row)."""
    first: dict[str, tuple[str, dict[str, Any]]] = {}
    scored: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in sorted(DATA.glob("*.jsonl")):
        for line in load_lines(path):
            row = line.get("row")
            if not isinstance(row, dict) or row.get("eval_mode", "direct") != "direct":
                continue
            name = (row.get("source_info") or {}).get("dataset")
            if name not in SCORERS:
                continue
            entry = (line["capability"], dict(row, image=None))
            first.setdefault(name, entry)
            if "expected_error" not in line:
                scored.setdefault(name, entry)
    rows = {name: scored.get(name, first[name]) for name in first}
    capability, row = rows["chartqa"]
    rows[FALLBACK] = (capability, dict(row, source_info={"dataset": FALLBACK, "original_idx": "0"}))
    return rows


BASE_ROWS = base_rows()

FRAGMENTS = [
    "\\frac{1}{2}", "\\boxed{", "}", "{", "\\sqrt{2}", "\\left(", "\\right)", "$", "$$",
    "\\text{cm}", "^2", "_{10}", "\\pi", "\\times", "\\%", "\\\\", "\\begin{pmatrix}", "&",
    "\\end{pmatrix}", "(A)", "(B)", "C.", "D)", "[", "]", "(", ")", "<", ">", ",", ".", "-",
    "e", "1e5", "3.14", "-0", "1/3", "100%", "Answer:", "The answer is", "ANSWER: ",
    "Final Answer:", "<answer>", "</answer>", "**", "\n", "\n\n", " ", "\t", "yes", "No",
    "None", "null", "inf", "nan", "NaN", "[0.1, 0.2, 0.3, 0.4]", "[10, 20, 300, 400]",
    "(648, 690)", '<point x="10.5" y="20">', "<points x1=", "x=", "y=", "→", "−", "½", "٣",
    "零", "ﬁ", "\u200b", "\ufeff", "😀",
]  # fmt: skip


@st.composite
def model_outputs(draw: st.DrawFn, answer: str) -> str:
    """Outputs built from LaTeX, brackets, digits, choice letters, answer markers, unicode and
    the sample's own answer, so that both right and wrong answers occur."""
    pieces = st.one_of(
        st.sampled_from(FRAGMENTS),
        st.just(answer),
        st.integers(-(10**6), 10**6).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(str),
        st.text(max_size=8),
    )
    return "".join(draw(st.lists(pieces, max_size=12)))


def score_all(
    capability: str, row: dict[str, Any], outputs: list[str], profile: str = "reference"
) -> list[tuple[Any, ...]]:
    """Each output's (score, is_correct, score_details), scored in one evaluator call (one pool
    for the batch: a call's fixed cost is paid once, not once per output)."""
    rows = [dict(row, id=f"{row['id']}#{index}") for index in range(len(outputs))]
    evaluator = DatBenchEvaluator(rows, capability)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compute_report(
            evaluator,
            [VLMResponse(r["id"], output) for r, output in zip(rows, outputs, strict=True)],
            options=ScoreOptions(sample_timeout=SAMPLE_TIMEOUT, profile=profile),
        )
    assert [r.id for r in report.results] == [r["id"] for r in rows]
    return [(r.score, r.is_correct, r.metadata["score_details"]) for r in report.results]


class ScorerProperties(unittest.TestCase):
    """One property test per registered dataset name (plus the fallback path)."""

    def test_every_registered_name_is_covered(self) -> None:
        self.assertEqual(set(BASE_ROWS), set(SCORERS) | {FALLBACK})

    def check(self, name: str, outputs: list[str], profile: str = "reference") -> None:
        capability, row = BASE_ROWS[name]
        first = score_all(capability, row, outputs, profile)
        for score, is_correct, details in first:
            self.assertIsInstance(score, float)
            self.assertIsInstance(is_correct, bool)
            check_not_over_budget(details)
            error = details.get("error")
            if error is not None:
                self.assertEqual(score, 0.0)
                self.assertEqual(sorted(error), ["message", "type"])
                self.assertIsInstance(error["type"], str)
            else:
                self.assertGreaterEqual(score, 0.0, details)
                self.assertLessEqual(score, 1.0, details)
        # repr: NaN in the details is equal to itself there. Scored again in the reverse order,
        # so that a result that depends on the samples scored before it shows too.
        again = score_all(capability, row, outputs[::-1], profile)[::-1]
        self.assertEqual(repr(again), repr(first), "not deterministic")


def _property(name: str, profile: str = "reference") -> Any:
    answer = BASE_ROWS[name][1]["answer"]

    # 3 batches of 12 outputs per scorer in make test (50 names and profiles), 90 under make
    # fuzz.
    @settings(max_examples=examples(0.03))
    @given(st.lists(model_outputs(answer), min_size=BATCH, max_size=BATCH))
    def test(self: ScorerProperties, outputs: list[str]) -> None:
        self.check(name, outputs, profile)

    prefix = "test_" if profile == "reference" else f"test_{profile}_"
    test.__name__ = prefix + name.replace("-", "_")
    test.__doc__ = f"Any output for a {name!r} sample is scored or recorded as an error."
    return test


for _name in sorted(BASE_ROWS):
    _test = _property(_name)
    setattr(ScorerProperties, _test.__name__, _test)
    # The corrected profile's fixes meet the same contract.
    if hasattr(SCORERS.get(_name), "score_sample_corrected"):
        _test = _property(_name, "corrected")
        setattr(ScorerProperties, _test.__name__, _test)
