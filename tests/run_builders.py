"""Larger inputs for the interruption and concurrency tests, and helpers to run the real CLI.

- :func:`make_image_dataset`: a hub-layout dataset with a few hundred photo-sized images (random
  bytes behind an image signature: the export never decodes), so an export runs long enough to
  be interrupted in the middle.
- :func:`make_score_run`: a run directory of a few thousand synthetic samples (vector rows
  cycled, judge-mode every fourth) with responses and judge responses, so ``score`` and
  ``make-judge-tasks`` take a while.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from datbench_cli.files import jsonio
from datbench_cli.files.hub_layout import write_hub_dataset
from datbench_cli.files.rundir import REFERENCES, TASKS, RunDir
from datbench_cli.scorers import SCORERS
from tests.cli_helpers import ROOT, make_row
from tests.vectors import DATA, load_lines

SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0")


def cli_command(*args: str) -> list[str]:
    """The real program, as a user runs it."""
    return [sys.executable, "-m", "datbench_cli", *args]


def cli_env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1"}


def default_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C as a terminal's job does: a suite run
    in the background (``make test &``) ignores SIGINT, and a child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_real_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``datbench ARGS`` in a subprocess to the end."""
    return subprocess.run(
        cli_command(*args), cwd=ROOT, env=cli_env(), capture_output=True, text=True
    )


def make_image_dataset(out: Path, samples: int, image_bytes: int = 100_000) -> Path:
    """A hub-layout dataset of ``samples`` rows over three capabilities."""
    rng = random.Random(samples)
    capabilities = ("chart", "document", "math")
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in capabilities}
    for index in range(samples):
        capability = capabilities[index % len(capabilities)]
        data = SIGNATURES[index % 2] + rng.randbytes(image_bytes)
        row = make_row(
            f"{capability}_{index:05d}",
            dataset="chartqa",
            answer=str(index % 97),
            image={"bytes": data, "path": None},
            eval_mode="judge" if index % 5 == 0 else "direct",
            judge_prompt="Is it right? Respond with exactly two lines:\nReason\nanswer",
        )
        rows[capability].append(row)
    write_hub_dataset(out, rows, title="interruption test data")
    return out


def _vector_pool() -> list[tuple[str, dict[str, Any], str]]:
    """(capability, row, raw_output) of every scored direct-mode vector of a registered name."""
    pool = []
    for path in sorted(DATA.glob("*.jsonl")):
        if "." in path.stem or path.stem.endswith("_direct") or "evaluator" in path.stem:
            continue
        for line in load_lines(path):
            row = line.get("row")
            if not isinstance(row, dict) or "expected_error" in line:
                continue
            if (row.get("source_info") or {}).get("dataset") in SCORERS:
                pool.append((line["capability"], row, line["raw_output"]))
    return pool


def make_score_run(out: Path, samples: int) -> Path:
    """A run directory with ``samples`` references, responses and judge responses."""
    out.mkdir(parents=True, exist_ok=True)
    pool = _vector_pool()
    rng = random.Random(samples)
    references, tasks, responses, judges = [], [], [], []
    for index in range(samples):
        capability, row, output = pool[index % len(pool)]
        sample_id = f"{row['id']}__{index}"
        judge = index % 4 == 0
        references.append(
            {
                "id": sample_id,
                "capability": capability,
                "question": row["question"],
                "prompt_format": row.get("prompt_format", {"prefix": "", "suffix": ""}),
                "answer": row["answer"],
                "all_answers": row.get("all_answers", [row["answer"]]),
                "eval_mode": "judge" if judge else "direct",
                "judge_prompt": row.get("judge_prompt") or "Is the model answer right?",
                "is_circular": row.get("is_circular", False),
                "metadata": row.get("metadata", "{}"),
                "source_info": row.get("source_info", {}),
                "eval_metrics": row.get("eval_metrics", {}),
            }
        )
        tasks.append({"id": sample_id, "capability": capability})
        raw = "I am not sure." if rng.random() < 0.3 else output
        responses.append({"id": sample_id, "raw_output": raw})
        if judge:
            verdict = rng.choice(["answer: true", '{"answer": false}', "true", "no idea"])
            judges.append({"id": sample_id, "raw_judge_output": verdict})
    jsonio.write_jsonl_atomic(out / REFERENCES, references)
    jsonio.write_jsonl_atomic(out / TASKS, tasks)
    jsonio.write_jsonl_atomic(out / "responses.jsonl", responses)
    jsonio.write_jsonl_atomic(out / "judge_responses.jsonl", judges)
    RunDir(out).write_manifest(
        {"benchmark": "datbench", "source": "synthetic", "split": "test", "capabilities": []}
    )
    return out


def tree_digest(root: Path) -> dict[str, str]:
    """Every file below ``root`` (hidden ones too) by relative path, with its SHA-256."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def is_leftover(name: str) -> bool:
    """A killed writer's hidden leftover: a temporary file or an export's private folder (which
    the next command switches in or removes)."""
    parts = Path(name).parts
    return name.endswith(".tmp") or any(part.startswith(".datbench-export.") for part in parts)
