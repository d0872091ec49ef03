"""Score every degenerate output family on every scorer and report the slowest (issue 36).

    python scripts/degenerate_survey.py [--budget 3] [--only mathvision,...] [--all]

For each registered dataset name (one test-vector row each), each family variant of
tests/degenerate_texts.py and each metadata shape, one sample is scored through the same path as
`datbench score` (``score_direct``, the reference profile) under a per-sample budget; the
slowest scorer per family is printed, then every sample over 0.3 s (``--all``: every sample).
Used by ``make bench`` (``--only degenerate``) for its per-family rows.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from datbench_cli.benchmarks.datbench.schema import DatBenchSample  # noqa: E402
from datbench_cli.benchmarks.datbench.scoring import Outcome, score_direct  # noqa: E402
from datbench_cli.runtime.budget import SampleTimeout  # noqa: E402
from tests.degenerate_texts import FAMILIES, metadata_shapes, scorer_rows  # noqa: E402

TARGET = 0.3  # seconds per sample


def warm_up(rows: dict[str, tuple[str, dict[str, Any]]]) -> None:
    """Score one ordinary output per scorer first, so lazy imports (SymPy, the parser) are not
    counted against a degenerate sample."""
    for capability, row in rows.values():
        sample = DatBenchSample.from_hf_row(row, capability)
        score_direct(sample, "\\boxed{\\frac{1}{2}} The answer is 12.")


def fresh_state() -> Any:
    """A function that puts MathVision's parser back where the warm-up left it before each
    sample: its memo and last lexed text emptied and latex2sympy's module state (``var``, ``variances``, which a
    differential in an earlier sample may have changed) restored, so that every sample is
    measured as the first of its kind in a fresh process (the worst case), not helped by an
    earlier one."""
    from datbench_cli.scorers import mathvision, mathvision_nonnumbers

    mathvision._typing_io_shim()
    import latex2sympy2

    saved = {name: getattr(latex2sympy2, name) for name in ("var", "variances")}
    copies = {name: dict(value) for name, value in saved.items()}

    def fresh() -> None:
        mathvision._MEMO.clear()
        mathvision_nonnumbers._LAST_LEXED[0] = ("", [])  # no text lexed yet
        for name, value in saved.items():
            value.clear()
            value.update(copies[name])
            setattr(latex2sympy2, name, value)

    return fresh


def _stop(signum: int, frame: Any) -> None:
    raise SampleTimeout


def within(budget: float, sample: DatBenchSample, text: str) -> Outcome | None:
    """``score_direct`` under ``budget`` seconds, as a scoring worker runs it (this script is
    a process of its own); ``None`` when the budget ran out."""
    previous = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        return score_direct(sample, text)
    except SampleTimeout:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


Result = tuple[str, str, str, str, float, str, float]


def survey(budget: float, names: list[str] | None = None) -> list[Result]:
    """(family, variant, dataset, metadata shape, seconds, outcome, CPU seconds) of every sample
    scored (on a busy host the wall time exceeds the CPU time the sample took)."""
    rows = scorer_rows()
    if names:
        rows = {name: row for name, row in rows.items() if name in names}
    warm_up(rows)
    fresh = fresh_state()
    results = []
    for family, variants in FAMILIES.items():
        for variant, text in variants.items():
            for name, (capability, row) in rows.items():
                for shape, metadata in metadata_shapes(row.get("metadata", "{}")).items():
                    sample = DatBenchSample.from_hf_row(dict(row, metadata=metadata), capability)
                    fresh()
                    started, cpu = time.perf_counter(), time.process_time()
                    outcome = within(budget, sample, text)
                    seconds = time.perf_counter() - started
                    cpu = time.process_time() - cpu
                    if outcome is None:
                        result = "SampleTimeout"
                    elif outcome.error:
                        result = outcome.error["type"]
                    else:
                        result = f"score {outcome.score}"
                    results.append((family, variant, name, shape, seconds, result, cpu))
    return results


def worst_per_family(results: list[Result]) -> dict[str, Result]:
    worst: dict[str, Result] = {}
    for result in results:
        if result[0] not in worst or result[4] > worst[result[0]][4]:
            worst[result[0]] = result
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=3.0, help="per-sample budget (s)")
    parser.add_argument("--only", default="", help="comma-separated dataset names")
    parser.add_argument("--all", action="store_true", help="print every sample")
    parser.add_argument("--json", action="store_true", help="print the worst per family as JSON")
    args = parser.parse_args()
    results = survey(args.budget, [n for n in args.only.split(",") if n] or None)
    worst = worst_per_family(results)
    if args.json:
        print(json.dumps({family: list(result[1:]) for family, result in worst.items()}))
        return
    for family, (_, variant, name, shape, seconds, result, cpu) in worst.items():
        verdict = "PASS" if seconds <= TARGET else "FAIL"
        print(
            f"{family:<34} {seconds:8.3f} s (CPU {cpu:.3f} s)  {verdict}  "
            f"{name} / {variant} / {shape}: {result}"
        )
    print()
    for family, variant, name, shape, seconds, result, cpu in results:
        if args.all or seconds > TARGET:
            print(
                f"{seconds:8.3f} s (CPU {cpu:.3f} s)  {family} / {variant} / {name} / {shape}: "
                f"{result}"
            )


if __name__ == "__main__":
    main()
