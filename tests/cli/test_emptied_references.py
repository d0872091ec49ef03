"""A references.jsonl emptied after export, its manifest digest updated to match (hostile
input), is named as what is wrong: every stage that reads it says the file holds no sample,
exit 2, instead of blaming the responses for matching nothing (or checking 0 verdicts)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import SAMPLE, VTB_SAMPLE, run_cli


@pytest.mark.parametrize("target,source", [("all", SAMPLE), ("vistoolbench", VTB_SAMPLE)])
def test_an_emptied_references_file_is_named(tmp_path: Path, target: str, source: Path) -> None:
    run = tmp_path / "run"
    assert run_cli("export-tasks", target, "--source", str(source), "-d", str(run)).exit_code == 0
    shutil.copy(source / "responses.jsonl", run / "responses.jsonl")
    shutil.copy(source / "judge_responses.jsonl", run / "judge_responses.jsonl")
    (run / "references.jsonl").write_bytes(b"")
    manifest = json.loads((run / "datbench.json").read_bytes())
    manifest["files"]["references.jsonl"]["sha256"] = hashlib.sha256(b"").hexdigest()
    (run / "datbench.json").write_text(json.dumps(manifest))
    for command in ("make-judge-tasks", "check-judge", "score"):
        result = run_cli(command, "-d", str(run))
        assert result.exit_code == 2, (command, result.stderr)
        assert result.stderr.startswith(f"error: {run / 'references.jsonl'}: holds no "), (
            command,
            result.stderr,
        )
    assert not (run / "judge_tasks.jsonl").exists()
    assert not (run / "report.json").exists()
