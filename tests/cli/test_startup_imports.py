"""Start-up imports only what the run needs: the CLI app, ``--help``, ``score``,
``make-judge-tasks`` and ``check-judge`` of a run without math never load ``datasets``,
pandas, pyarrow, scipy.stats, scipy.optimize, the math parser (SymPy, latex2sympy2) or the
tool agent's HTTP client and sandbox.

Each check runs in a fresh interpreter (``python -c``), since this test process has imported
everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from datbench_cli.files import jsonio
from datbench_cli.files.rundir import REFERENCES, TASKS, RunDir
from tests.cli_helpers import ROOT
from tests.run_builders import _vector_pool, make_score_run

# Never needed by these commands (export alone loads datasets; compare alone scipy.stats;
# pydantic is what typer 0.29 builds its option parsers with, ~0.1 s a command: see pyproject).
NEVER = ("datasets", "pandas", "pyarrow", "scipy.stats", "huggingface_hub", "pydantic")
# Needed only when a math sample's answer has to be parsed; pixmo's assignment loads
# scipy.optimize's extension alone, never the package.
MATH_AND_MORE = ("sympy", "latex2sympy2", "antlr4", "scipy.optimize")
# The tool-using agent's machinery (HTTP client, TLS, sandbox): loaded by `agent` alone.
AGENT = (
    "datbench_cli.benchmarks.vistoolbench.agent.transport",
    "datbench_cli.benchmarks.vistoolbench.agent.sandbox",
    "urllib.request",
    "ssl",
)
# The statistics' arrays: loaded by the commands that compute (score, view, compare,
# leaderboard), not by the app and its help, make-judge-tasks or check-judge (about 0.07 s).
STATISTICS = ("numpy",)

PROBE = """
import json, sys
sys.argv = ["datbench", *json.loads(sys.argv[1])]
from datbench_cli.cli.app import main
code = 0
if len(sys.argv) > 1:
    try:
        main()
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.__stderr__)
"""


def loaded_after(*args: str) -> tuple[object, set[str]]:
    """The exit code and the modules loaded in a fresh interpreter after ``datbench ARGS``
    (after importing the app only, for no arguments)."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    last = result.stderr.strip().splitlines()[-1]
    report = json.loads(last)
    return report["code"], set(report["modules"])


def read_lines(path: Path) -> list[dict]:
    return [line for _, line in jsonio.iter_jsonl(path)]


def without_math(run: Path) -> Path:
    """Keep only the samples of ``run`` outside the math capability."""
    references = [r for r in read_lines(run / REFERENCES) if r["capability"] != "math"]
    kept = {r["id"] for r in references}
    jsonio.write_jsonl_atomic(run / REFERENCES, references)
    for name in (TASKS, "responses.jsonl", "judge_responses.jsonl"):
        lines = [r for r in read_lines(run / name) if r["id"] in kept]
        jsonio.write_jsonl_atomic(run / name, lines)
    RunDir(run).write_manifest(  # the manifest pins the files it names: written again
        {"benchmark": "datbench", "source": "synthetic", "split": "test", "capabilities": []}
    )
    return run


class StartUpImportsTests(unittest.TestCase):
    def assert_absent(self, modules: set[str], names: tuple[str, ...]) -> None:
        present = [name for name in names if name in modules]
        self.assertEqual(present, [], f"loaded but not needed: {present}")

    def test_the_package_loads_its_public_names_when_used(self) -> None:
        # The console script imports the package before it can catch a Ctrl-C: it loads no
        # scorer or command module until a name is used, and every public name is there.
        probe = (
            "import sys, datbench_cli as d; "
            "print(sorted(m for m in sys.modules if m.startswith('datbench_cli.'))); "
            "print(all(getattr(d, n) is not None for n in d.__all__))"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
        )
        self.assertEqual(done.stdout.splitlines(), ["['datbench_cli.version']", "True"])

    def test_the_app_and_help(self) -> None:
        for args in ((), ("--help",), ("score", "--help")):
            with self.subTest(args=args):
                code, modules = loaded_after(*args)
                self.assertIn(code, (0, None))
                self.assertIn("datbench_cli.cli.app", modules)
                self.assert_absent(modules, NEVER + MATH_AND_MORE + AGENT + STATISTICS)

    def test_commands_on_a_run_without_math(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run = without_math(make_score_run(Path(tmp) / "run", len(_vector_pool())))
            datasets = {r["source_info"]["dataset"] for r in read_lines(run / REFERENCES)}
            self.assertIn("pixmo_points_eval", datasets)  # the assignment is exercised
            self.assertGreater(len(datasets), 15)
            for args in (
                ("score", "-d", str(run), "-q", "-o", str(Path(tmp) / "report.json")),
                ("make-judge-tasks", "-d", str(run), "-q"),
                ("check-judge", "-d", str(run)),
            ):
                with self.subTest(command=args[0]):
                    code, modules = loaded_after(*args)
                    self.assertIn(code, (0, 1, None))  # check-judge fails on unparsed verdicts
                    self.assertIn("datbench_cli.scorers.pixmo_points_eval", modules)
                    # The scoring pool's library (pebble) loads asyncio, and so ssl, for its
                    # decorators: score alone, the agent's own machinery still not.
                    agent = AGENT if args[0] != "score" else tuple(m for m in AGENT if m != "ssl")
                    # The score table's statistics: score alone.
                    statistics = STATISTICS if args[0] != "score" else ()
                    self.assert_absent(modules, NEVER + MATH_AND_MORE + agent + statistics)
            self.assertTrue((Path(tmp) / "report.json").is_file())


if __name__ == "__main__":
    unittest.main()
