"""The per-sample memory cap (issue 15): one hostile output cannot take gigabytes.

A 10 MB ChartQAPro output of nested one-item lists makes ``ast.literal_eval`` (which the
reference calls on it) build a syntax tree of several gigabytes. Its worker is killed at the
cap and the sample recorded as a scorer error; the rest is scored exactly. Each run is a child
process with its own time bound, and its peak memory (its workers' included) is measured: a
cap that is not enforced fails the memory assertion, a hang fails the time bound.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import unittest

from tests.cli_helpers import SAMPLE
from tests.run_builders import cli_command, cli_env

_CAP_MIB = 200
_SLACK_MIB = 150  # the parent's own growth while the worker is watched, and page granularity

_SCRIPT = textwrap.dedent(
    """
    import json, os, resource, sys
    from datbench_cli.benchmarks.datbench.evaluator import _failed_record, _record
    from datbench_cli.benchmarks.datbench.records import library_record
    from datbench_cli.benchmarks.datbench.schema import DatBenchSample
    from datbench_cli.benchmarks.datbench.scoring import WorkItem
    from datbench_cli.runtime.pool import Limits, score_in_workers
    from functools import partial

    def as_is(item):  # the work items are built already
        return item

    cap = int(sys.argv[1]) << 20
    hostile = "[" + ", ".join(["[1]"] * 2_000_000) + "]"
    sample = DatBenchSample(
        id="x", capability="chart", image=None, question="q", prompt_format={},
        answer="[1, 2]", all_answers=["[1, 2]"], source_info={"dataset": "chartqapro"},
    )
    work = [WorkItem(sample, hostile, False, None), WorkItem(sample, "[1, 2]", False, None)]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
    records = [record for _, record in score_in_workers(
        partial(_record, library_record, as_is), work,
        partial(_failed_record, library_record, as_is),
        1, Limits(30.0, cap),
    )]
    outcomes = [type("O", (), {"score": r[0], "error": r[3]}) for r in records]
    print(json.dumps({
        "base_mib": base >> 20,
        "children_peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10,
        "outcomes": [[o.score, o.error] for o in outcomes],
    }))
    """
)


class MemoryCapTests(unittest.TestCase):
    def test_hostile_output_is_stopped_at_the_cap_and_recorded(self) -> None:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, str(_CAP_MIB)],
            capture_output=True,
            text=True,
            timeout=300,  # a hang fails here (a generous bound: no timing is asserted)
            env=cli_env(),
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        result = json.loads(done.stdout)
        hostile, plain = result["outcomes"]
        self.assertEqual(hostile[1]["type"], "SampleMemoryExceeded", result)
        self.assertIn(f"memory cap ({_CAP_MIB} MiB)", hostile[1]["message"])
        self.assertEqual(hostile[0], 0.0)
        self.assertEqual(plain, [1.0, None])
        # The worker never held more than the parent's pages plus the cap.
        self.assertLessEqual(
            result["children_peak_mib"], result["base_mib"] + _CAP_MIB + _SLACK_MIB, result
        )

    def test_the_cli_applies_the_cap_with_jobs_1(self) -> None:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            env = cli_env()
            export = [*cli_command(), "export-tasks", "chart", "--source", str(SAMPLE)]
            done = subprocess.run(
                [*export, "-d", str(run), "-q"], env=env, capture_output=True, timeout=120
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            references = [json.loads(x) for x in (run / "references.jsonl").open()]
            target = next(
                r["id"] for r in references if r["source_info"]["dataset"] == "chartqapro"
            )
            hostile = "[" + ", ".join(["[1]"] * 2_000_000) + "]"
            (run / "responses.jsonl").write_text(
                json.dumps({"id": target, "raw_output": hostile}) + "\n"
            )
            # The child measures the peak memory of the CLI it waited for (its workers too).
            measure = textwrap.dedent(
                """
                import resource, subprocess, sys
                code = subprocess.run(sys.argv[1:]).returncode
                print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10)
                """
            )
            done = subprocess.run(
                [sys.executable, "-c", measure, *cli_command(), "score", "-d", str(run),
                 "--allow-missing", "-q", "-j", "1"],
                env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            code, peak_mib = map(int, done.stdout.split())
            self.assertEqual(code, 0, done.stderr)
            # The default cap is 1 GiB over the CLI's own few hundred MiB (gigabytes without).
            self.assertLess(peak_mib, 1800, done.stderr)
            report = json.loads((run / "report.json").read_text())
            (result,) = report["results"]
            self.assertEqual(result["score"], 0.0)
            # The allocation past the cap fails (MemoryError): recorded as over the cap where
            # it leaves the scorer; ChartQAPro's reference code takes any failure to parse the
            # output (this one included) as "not a list", which scores 0.
            error = result["metadata"]["score_details"].get("error")
            if error is not None:
                self.assertEqual(error["type"], "SampleMemoryExceeded")

    def test_large_items_travel_in_small_chunks(self) -> None:
        # 20 items of 6 MiB in one chunk: their results, pickled in one piece, took the worker
        # past its cap; it died printing a MemoryError traceback (on the CLI's stderr too, for
        # 23 outputs of 10 MB) and the chunk was scored again item by item.
        script = textwrap.dedent(
            """
            import json, sys
            from datbench_cli.runtime.pool import Limits, score_in_workers
            from tests.robustness.test_memory_cap import echo, failed
            items = [bytes([n]) * (6 << 20) for n in range(20)]
            out = list(score_in_workers(echo, items, failed, 1, Limits(30.0, 150 << 20), len))
            print(json.dumps([[a == b, len(b)] for a, b in out]))
            """
        )
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=300,
            env=cli_env(),
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout), [[True, 6 << 20]] * 20)
        self.assertEqual(done.stderr, "")


def echo(item: bytes) -> bytes:
    """A worker's function: the item back, as large as it came."""
    return item


def failed(item: bytes, failure: object) -> bytes:
    return b""


if __name__ == "__main__":
    unittest.main()
