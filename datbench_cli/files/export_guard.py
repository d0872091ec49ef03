"""What an export may touch: only files an earlier export wrote, never anyone else's.

An export starts by reading which files the directory's previous export wrote (its manifest's
``written`` map). A directory that is not empty and holds no export is refused unless
``--force``. Every file the export is about to write is checked first, and all of them again
just before the export is committed: an existing file no export wrote is never overwritten,
even with ``--force``. The export's files are written into a private folder and switched in
whole (:mod:`datbench_cli.files.staging`), which also removes the files the previous export
wrote and this one did not. An export that replaces one whose samples differ records how many
changed (``replaced``), so that ``score`` can say when the responses predate the change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.files.rundir import MANIFEST, REFERENCES, TASKS, RunDir
from datbench_cli.files.staging import (
    Stage,
    check_placeable,
    previous_files,
    previous_rows,
    switch_in,
)
from datbench_cli.runtime import interrupt

_REQUESTS = "requests"
_ALWAYS_WRITTEN = (MANIFEST, TASKS, REFERENCES)


class ExportGuard:
    """The ownership rules of one export into ``root`` (see the module docstring)."""

    def __init__(self, root: Path, owned: set[str]) -> None:
        self.root = root
        self.owned = owned
        self.claimed: set[str] = set()
        # Folders (relative) seen to be absent: nothing inside them can exist, so checking a
        # path in one costs no system call. Rebuilt by every :meth:`claim`.
        self._absent: dict[str, bool] = {}

    @classmethod
    def begin(cls, root: Path, *, force: bool) -> ExportGuard:
        """Check ``root`` may take an export."""
        if root.exists() and not root.is_dir():
            raise InputError("not a directory; pass a directory with --dir", root)
        owned = previous_files(root) if root.is_dir() else set()
        if owned is None:
            if any(root.iterdir()) and not force:
                raise InputError(
                    f"the directory is not empty and holds no datbench export ({MANIFEST}); "
                    "export into a new or empty directory with --dir, or pass --force to add "
                    "the export beside these files (it never deletes or overwrites them)",
                    root,
                )
            owned = set()
        guard = cls(root, owned)
        for rel in [*_ALWAYS_WRITTEN, *guard._request_parts()]:
            guard.check(rel)
        return guard

    def _request_parts(self) -> list[str]:
        folder = self.root / _REQUESTS
        if not folder.is_dir():
            return []
        return sorted(
            f"{_REQUESTS}/{p.name}"
            for p in folder.iterdir()
            if p.name.startswith("tasks.openai.") and p.name.endswith(".jsonl")
        )

    def check(self, rel: str) -> None:
        """Refuse to go on when ``rel`` exists and no datbench export wrote it."""
        if rel in self.owned or rel in self.claimed:
            return
        folder = rel.rpartition("/")[0]
        if folder and self._folder_absent(folder):
            return
        path = self.root / rel
        if path.exists() or path.is_symlink():
            raise InputError(
                f"the export would overwrite {rel}, which no datbench export wrote; move it "
                "away or export into another directory (--dir)",
                self.root,
            )

    def _folder_absent(self, folder: str) -> bool:
        """Whether nothing (not even a link) is at the relative ``folder`` (remembered)."""
        known = self._absent.get(folder)
        if known is None:
            parent = folder.rpartition("/")[0]
            known = (bool(parent) and self._folder_absent(parent)) or not os.path.lexists(
                self.root / folder
            )
            self._absent[folder] = known
        return known

    def claim(self, rels: Iterable[str]) -> None:
        """Check ``rels`` afresh (folders seen absent before are looked at again)."""
        self._absent.clear()
        fresh = [rel for rel in rels if rel not in self.claimed]
        for rel in fresh:
            self.check(rel)
        self.claimed.update(fresh)

    @classmethod
    def around(
        cls,
        root: Path,
        body: Callable[[ExportGuard, RunDir, Stage], dict[str, Any]],
        *,
        force: bool,
    ) -> dict[str, Any]:
        """Run an export under a guard: ``body(guard, staged, stage)`` writes the export's
        files into the private folder (``staged`` is it as a run directory, ``stage`` writes
        images into it) and returns the manifest; every path and folder is checked again, the
        manifest written into the folder (the commit), and the folder switched in."""
        guard = cls.begin(root, force=force)
        before = previous_rows(root) if guard.owned else {}
        with Stage(root) as stage:
            staged = RunDir(stage.path)
            manifest = body(guard, staged, stage)
            changed = changed_samples(before, manifest.get("rows"))
            if changed:
                manifest["replaced"] = {"changed_samples": changed}
            guard.claim(manifest["written"])
            check_placeable(root, manifest["written"])
            interrupt.checkpoint()  # the last moment a dropped Ctrl-C leaves the old export
            staged.write_manifest(manifest)
            switch_in(root, stage.path)
        return manifest


def changed_samples(before: dict[str, str], after: Any) -> int:
    """How many samples both exports hold whose rows differ (question, answer, image, ...)."""
    if not isinstance(after, dict):
        return 0
    return sum(1 for name, digest in after.items() if name in before and before[name] != digest)
