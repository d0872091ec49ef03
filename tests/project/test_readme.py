"""The README says only what is true: its shell blocks run as written, in order, on a fresh copy
of the project; its exit codes are the ones the code uses; the make targets it and
docs/development.md name exist, described as `make help` describes them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from datbench_cli import errors

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DEVELOPMENT = ROOT / "docs" / "development.md"
# A README line whose comment starts with this needs the network (or a model server): the test
# skips exactly those lines.
NETWORK = re.compile(r"#\s*network\b")


def shell_blocks(text: str) -> list[list[str]]:
    """The commands of each ```sh block, continuation lines joined."""
    blocks = []
    for body in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        commands: list[str] = []
        pending = ""
        for line in body.splitlines():
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            commands.append(pending + line)
            pending = ""
        blocks.append([c for c in commands if c.strip()])
    return blocks


def local_commands(text: str) -> list[str]:
    return [c for block in shell_blocks(text) for c in block if not NETWORK.search(c)]


def fresh_copy(target: Path) -> Path:
    """The project's files as a clone would have them (tracked and new, not ignored), their
    times kept, plus a `.venv` that stands for `make install`'s: the running interpreter's
    `bin/` and a fresh install stamp."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    venv_bin = Path(sys.prefix) / "bin"
    if not (venv_bin / "datbench").exists() or not (venv_bin / "activate").exists():
        pytest.skip("datbench is not installed in a virtual environment")
    (target / ".venv").mkdir()
    (target / ".venv" / "bin").symlink_to(venv_bin)
    (target / ".venv" / ".installed-stamp").touch()
    return target


def test_shell_blocks_are_split_into_commands() -> None:
    text = "```sh\na \\\n  b\nc   # network: no\n\n```\n```python\nx\n```\n"
    assert shell_blocks(text) == [["a    b", "c   # network: no"]]
    assert local_commands(text) == ["a    b"]


def test_the_readme_runs_as_written_on_a_fresh_copy(tmp_path: Path) -> None:
    commands = local_commands(README.read_text(encoding="utf-8"))
    assert any(c.startswith("source .venv/bin/activate") for c in commands)
    assert any(c.startswith("make demo") for c in commands)
    project = fresh_copy(tmp_path / "datbench")
    script = "set -e\n" + "".join(f"echo '+ {i}'\n{c}\n" for i, c in enumerate(commands))
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH") and not key.startswith("DATBENCH")
    }
    # The README's PATH comes from its own `source .venv/bin/activate`, not from this test.
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not Path(p, "datbench").exists()
    )
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    result = subprocess.run(
        ["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True
    )
    last = [line for line in result.stdout.splitlines() if line.startswith("+ ")][-1:]
    failed = commands[int(last[0][2:])] if last else "?"
    assert result.returncode == 0, (
        f"{failed!r} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
    )
    assert (project / "run" / "report.html").is_file()
    assert (project / "demo-run" / "report.html").is_file()


def test_the_exit_codes_are_the_ones_the_code_uses() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    listed = {int(code) for code in re.findall(r"`(\d+)`", section)}
    # success, usage errors (cli/command.py), an internal error, Ctrl-C, SIGTERM and a reader
    # gone (cli/common.py)
    used = {0, 2, 3, 130, 141, 143}
    pending = [errors.DatbenchError]
    while pending:
        kind = pending.pop()
        pending += kind.__subclasses__()
        if isinstance(getattr(kind, "exit_code", None), int):
            used.add(kind.exit_code)
    assert listed == used


def make_help() -> dict[str, str]:
    if shutil.which("make") is None:
        pytest.skip("no make")
    text = subprocess.run(
        ["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return dict(re.findall(r"^make (\S+) +- (.*)$", text, flags=re.M))


def test_the_make_targets_named_exist_and_are_described_as_make_help_says() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.M))
    described = make_help()
    assert set(described) <= targets
    for path in (README, DEVELOPMENT):
        text = path.read_text(encoding="utf-8")
        named = set(re.findall(r"(?:^|`)make ([a-z][\w-]*)", text, flags=re.M))
        assert named and named <= targets, path.name
        assert named <= {*described, "help"}, f"{path.name}: not in make help"
    development = DEVELOPMENT.read_text(encoding="utf-8")
    for target, description in described.items():
        assert re.search(
            rf"^make {re.escape(target)} +- {re.escape(description)}$", development, re.M
        )


def test_the_readme_stays_short_and_undated() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text)
    assert not re.search(r"\bissue \d+", text, flags=re.I)
    assert "offline" not in text.lower()
