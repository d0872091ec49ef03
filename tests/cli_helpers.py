"""Helpers for command-line tests: invoke the app, build small hub-layout datasets."""

from __future__ import annotations

import io
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner, Result

from datbench_cli.cli.app import app
from datbench_cli.files.hub_layout import write_hub_dataset

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "datbench"
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"


# Built once: typer's CliRunner.invoke builds the click command again on every call, 25 ms
# here, which was a tenth of the suite's time (868 s of test time became 776 s).
_COMMAND = typer.main.get_command(app)


def run_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """Invoke ``datbench`` in-process; the result has exit_code, stdout and stderr.

    What ``CliRunner.invoke(app, args, catch_exceptions=False)`` does, on the one command:
    an exception other than ``SystemExit`` reaches the test.
    """
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200", **(env or {})})
    code: Any = 0
    with runner.isolation() as (stdout, stderr, output):
        try:
            _COMMAND.main(list(args), prog_name=runner.get_default_prog_name(_COMMAND))
        except SystemExit as stop:
            code = 0 if stop.code is None else stop.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            streams = stdout.getvalue(), stderr.getvalue(), output.getvalue()
    assert isinstance(code, int), f"datbench exited with {code!r}, not a number"
    return Result(runner, *streams, return_value=None, exit_code=code, exception=None)


def export_samples(root: Path) -> dict[str, tuple[Path, Path]]:
    """Both benchmarks' sample data exported under ``root``: ``{"dat"|"vtb": (run, sample)}``."""
    runs = {}
    for name, target, sample in (("dat", "all", SAMPLE), ("vtb", "vistoolbench", VTB_SAMPLE)):
        run = root / name
        result = run_cli("export-tasks", target, "--source", str(sample), "-d", str(run), "-q")
        assert result.exit_code == 0, result.stderr
        runs[name] = (run, sample)
    return runs


def answered_sample(run: Path, benchmark: str = "datbench", *, judged: bool = True) -> Path:
    """The bundled sample of ``benchmark`` (``datbench`` or ``vistoolbench``) exported to ``run``
    with the sample's answers and judge tasks, and (``judged``) its judge responses."""
    target, sample = ("all", SAMPLE) if benchmark == "datbench" else ("vistoolbench", VTB_SAMPLE)
    exported = run_cli("export-tasks", target, "--source", str(sample), "-d", str(run), "-q")
    assert exported.exit_code == 0, exported.stderr
    shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
    judge_tasks = run_cli("make-judge-tasks", "-d", str(run), "-q")
    assert judge_tasks.exit_code == 0, judge_tasks.stderr
    if judged:
        shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")
    return run


def retry_judge_tasks(run: Path, out: Path) -> Any:
    """``make-judge-tasks --skip-done`` of the run's own judge responses, written to ``out``."""
    skip_done = str(run / "judge_responses.jsonl")
    return run_cli("make-judge-tasks", "-d", str(run), "--skip-done", skip_done, "-o", str(out))


def sample_capabilities() -> list[str]:
    """The capabilities present in the bundled sample dataset (from its configs block)."""
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    return re.findall(r"config_name: (\S+)", text)


def png_bytes(colour: tuple[int, int, int] = (10, 200, 30)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def make_row(
    sample_id: str, dataset: str = "unregistered_set", answer: str = "yes", **extra: Any
) -> dict[str, Any]:
    """A hub-shaped row with a tiny PNG."""
    base = {
        "id": sample_id,
        "image": {"bytes": png_bytes(), "path": f"{sample_id}.png"},
        "question": f"Question {sample_id}?",
        "prompt_format": {"prefix": "", "suffix": "\nAnswer briefly."},
        "answer": answer,
        "all_answers": [answer],
        "eval_mode": "direct",
        "judge_prompt": "",
        "is_circular": False,
        "metadata": "{}",
        "source_info": {"dataset": dataset, "original_idx": "0"},
        "eval_metrics": {"discrimination": 0.0},
    }
    base.update(extra)
    return base


def make_dataset(root: Path, rows_by_capability: dict[str, list[dict[str, Any]]]) -> Path:
    """Write a hub-layout dataset under ``root/dataset`` and return its path."""
    out = root / "dataset"
    write_hub_dataset(out, rows_by_capability)
    return out


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by relative path, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }
