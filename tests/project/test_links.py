"""The repository commits no symbolic link that leads outside it (a link to one machine's path
dangles on every other clone)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def committed_links() -> list[tuple[str, str]]:
    """(path, target) of every symbolic link in the index (mode 120000)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(
        ["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    links = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, blob = meta.split()[:2]
        if mode == "120000":
            target = subprocess.run(
                ["git", "cat-file", "blob", blob], cwd=ROOT, capture_output=True, check=True
            ).stdout.decode()
            links.append((path, target))
    return links


def leads_outside(path: str, target: str) -> bool:
    """Whether ``target``, read from the link at ``path``, names a place outside the
    repository (absolute, or climbing above the root)."""
    if os.path.isabs(target):
        return True
    joined = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return joined == ".." or joined.startswith("../")


def test_no_committed_link_leads_outside() -> None:
    outside = [f"{p} -> {t}" for p, t in committed_links() if leads_outside(p, t)]
    assert outside == []


@pytest.mark.parametrize(
    ("path", "target", "outside"),
    [
        (".venv-main", "/work/main/.venv", True),
        ("docs/a", "../../elsewhere", True),
        ("docs/a", "../README.md", False),
        ("docs/a", "screenshots/x.png", False),
    ],
)
def test_the_rule_tells_inside_from_outside(path: str, target: str, outside: bool) -> None:
    assert leads_outside(path, target) is outside
