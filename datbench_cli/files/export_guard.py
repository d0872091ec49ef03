"""What an export may touch: only files an earlier export wrote, never anyone else's.

An export starts by reading which files the directory's previous export wrote (the manifest's
``written`` map, plus the journal an interrupted export left). A directory that is not empty
and holds neither is refused unless ``--force``. Every file the export is about to write is
checked first: an existing file no export wrote is never overwritten, even with ``--force``.
Paths are appended to a journal before they are written, so an interrupted export's files are
still known as ours to the next one. At the end, the files the previous export listed and this
one did not write are removed (and only those), then the manifest is written, then the journal
removed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import EXPORT_JOURNAL, IMAGES, MANIFEST, REFERENCES, TASKS, RunDir
from datbench_cli.runtime import interrupt

JOURNAL = EXPORT_JOURNAL
# The fixed staging names of earlier versions (removed only when an earlier export owns them).
STAGING = ".datbench-staging"
_OLD_IMAGES = ".datbench-old-images"
_REQUESTS = "requests"
_ALWAYS_WRITTEN = (MANIFEST, TASKS, REFERENCES)


def _read_manifest_quietly(path: Path) -> dict[str, Any] | None:
    """The manifest as a dict when it is a datbench manifest, else ``None`` (never raises)."""
    try:
        manifest = jsonio.read_json(path)
    except InputError:
        return None
    if not isinstance(manifest, dict) or manifest.get("tool") != "datbench":
        return None
    return manifest


def _legacy_files(root: Path, manifest: dict[str, Any]) -> set[str]:
    """What an export of an older version wrote (its manifest has no ``written`` map)."""
    files = set(_ALWAYS_WRITTEN)
    options = manifest.get("options")
    requests = options.get("openai_requests") if isinstance(options, dict) else None
    listed = requests.get("files") if isinstance(requests, dict) else None
    files.update(name for name in listed or () if isinstance(name, str))
    images = root / IMAGES
    if images.is_dir() and not images.is_symlink():
        files.update(
            p.relative_to(root).as_posix()
            for p in images.rglob("*")
            if p.is_file() or p.is_symlink()
        )
    return files


def previous_files(root: Path) -> set[str] | None:
    """Relative paths the previous export of ``root`` wrote; ``None`` when none did."""
    owned: set[str] | None = None
    manifest = _read_manifest_quietly(root / MANIFEST)
    if manifest is not None:
        written = manifest.get("written")
        if isinstance(written, dict):
            owned = {MANIFEST, *(k for k in written if isinstance(k, str))}
        else:
            owned = _legacy_files(root, manifest)
    if owned is not None:
        owned.update((STAGING, _OLD_IMAGES))
    journal = root / JOURNAL
    if journal.is_file() and not journal.is_symlink():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            lines = journal.read_text(encoding="utf-8").splitlines()
            owned = (owned or set()) | {line for line in lines if line} | {JOURNAL}
    return owned


def _is_inside(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts


class ExportGuard:
    """The ownership rules of one export into ``root`` (see the module docstring)."""

    def __init__(self, root: Path, owned: set[str]) -> None:
        self.root = root
        self.owned = owned
        self.claimed: set[str] = set()
        self._journal: IO[str] | None = None
        self._placing = False
        self._fixed: list[str] = []
        # Folders (relative) seen to be absent: nothing inside them can exist, so checking a
        # path in one costs no system call. Rebuilt by every :meth:`claim`.
        self._absent: dict[str, bool] = {}

    @classmethod
    def begin(
        cls, root: Path, *, force: bool, also: Iterable[str] = (), requests: bool = True
    ) -> ExportGuard:
        """Check ``root`` may take an export and open the journal.

        ``also``: further fixed paths the export writes. ``requests``: the export writes or
        removes ``requests/tasks.openai.*`` part files.
        """
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
        fixed = [*_ALWAYS_WRITTEN, *also]
        if requests:
            fixed += guard._request_parts()
        for rel in fixed:
            guard.check(rel)
        guard._fixed = fixed
        guard.check(JOURNAL)
        with jsonio.writing(root / JOURNAL):
            root.mkdir(parents=True, exist_ok=True)
            fd = os.open(root / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            guard._journal = os.fdopen(fd, "w", encoding="utf-8")
        try:
            guard._append([*sorted(owned), *fixed])
        except BaseException:
            # A full disk takes the journal's first line: nothing was written, leave nothing.
            guard._close(remove=True)
            raise
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

    def _append(self, rels: Iterable[str]) -> None:
        assert self._journal is not None
        with jsonio.writing(self.root / JOURNAL):
            self._journal.write("".join(f"{rel}\n" for rel in rels))
            self._journal.flush()

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
        """Check ``rels`` (afresh: folders seen absent before are looked at again) and record
        them in the journal before they are written."""
        interrupt.checkpoint()  # the last moment a dropped Ctrl-C leaves the old export whole
        self._absent.clear()
        fresh = [rel for rel in rels if rel not in self.claimed]
        for rel in fresh:
            self.check(rel)
        self._append(fresh)
        self.claimed.update(fresh)

    def record(self, rels: Iterable[str]) -> None:
        """Journal paths just written whose names were checked earlier (request parts)."""
        fresh = [rel for rel in rels if rel not in self.claimed]
        self._append(fresh)
        self.claimed.update(fresh)

    def start_placing(self) -> None:
        """From here on files of the previous export are replaced: the journal must stay
        until the manifest is written, even when the export fails."""
        self._placing = True

    def remove_stale(self, written: Iterable[str]) -> list[str]:
        """Remove what the previous export wrote and this one did not; returns their paths.

        Called before the new manifest is written, so a kill meanwhile leaves a directory
        without a manifest (every stage refuses it, the rerun repairs it), never a finished
        export beside stale files of the previous one (old request parts).
        """
        keep = {MANIFEST, JOURNAL, *written}
        removed = []
        for rel in sorted(self.owned - keep, reverse=True):
            path = self.root / rel
            if not _is_inside(rel) or rel in (STAGING, _OLD_IMAGES):
                continue
            if path.is_file() or path.is_symlink():
                with jsonio.writing(path):
                    path.unlink(missing_ok=True)
                removed.append(rel)
                self._remove_empty_parents(path)
        return removed

    def _remove_empty_parents(self, path: Path) -> None:
        parent = path.parent
        while parent != self.root and self.root in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent

    @classmethod
    def around(
        cls, root: Path, body: Callable[[ExportGuard], dict[str, Any]], *, force: bool
    ) -> dict[str, Any]:
        """Run an export under a guard: :meth:`begin`, then ``body(guard)``, which places the
        files and returns the manifest; :meth:`remove_stale` with its ``written`` files, the
        manifest written last, then the journal removed; :meth:`fail` if any step raised."""
        guard = cls.begin(root, force=force)
        try:
            manifest = body(guard)
            guard.remove_stale(manifest["written"])
            RunDir(root).write_manifest(manifest)
        except BaseException:
            guard.fail()
            raise
        guard._close(remove=True)
        return manifest

    def fail(self) -> None:
        """The export failed: drop the journal when nothing of an old export was replaced;
        with no old export at all, also remove every file this one placed (a full disk in a
        fresh directory leaves nothing behind)."""
        if self._placing and not self.owned:
            for rel in sorted({*self.claimed, *self._fixed} - {JOURNAL}, reverse=True):
                path = self.root / rel
                if _is_inside(rel) and (path.is_file() or path.is_symlink()):
                    with contextlib.suppress(OSError):
                        path.unlink()
                        self._remove_empty_parents(path)
            self._close(remove=True)
            return
        self._close(remove=not self._placing)

    def _close(self, *, remove: bool) -> None:
        if self._journal is not None:
            with contextlib.suppress(OSError):
                self._journal.close()
            self._journal = None
        if remove:
            with contextlib.suppress(OSError):
                os.unlink(self.root / JOURNAL)
