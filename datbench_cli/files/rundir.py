"""The run directory: where each stage's files live, the manifest, and safe file names."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.fields import OBJECT, STRING, check_document
from datbench_cli.files.locking import hold_lock, settle
from datbench_cli.files.runfiles import (  # noqa: F401 - re-exported: the names live there
    IMAGES,
    JUDGE_DIGESTS,
    JUDGE_RESPONSES,
    JUDGE_TASKS,
    MANIFEST,
    REFERENCES,
    REPORT,
    RESPONSES,
    TASKS,
)
from datbench_cli.version import __version__

# The types of the fields every export writes (a benchmark checks its own where it reads them);
# a revision is an object (``requested``, ``resolved``, ``how``), or a string in older exports.
MANIFEST_FIELDS: dict[str, tuple[type, ...]] = {
    "tool": STRING,
    "version": STRING,
    "source": STRING,
    "split": STRING,
    "revision": OBJECT + STRING,
    "reference": STRING,
    **dict.fromkeys(("options", "counts", "rows", "written", "image_sizes", "libraries"), OBJECT),
}
AGAIN = "run `datbench export-tasks` again"

# The files whose SHA-256 the manifest records (written by the export, read by later stages).
_HASHED = (TASKS, REFERENCES)

_SAFE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
# Names Windows reserves; refused so a run directory can be copied anywhere.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def safe_file_stem(sample_id: object) -> str | None:
    """``sample_id`` itself when it is usable as a file name inside ``images/``, else ``None``.

    Usable: 1-200 characters from ``[A-Za-z0-9._-]``, starting with a letter or digit (so never
    ``.``, ``..`` or a hidden file), and not a reserved device name. Anything with a path
    separator or an absolute path is refused, so an id can never choose a path outside the run
    directory.
    """
    if not isinstance(sample_id, str) or not _SAFE_NAME_RE.fullmatch(sample_id):
        return None
    if sample_id.split(".", 1)[0].lower() in _RESERVED:
        return None
    return sample_id


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunDir:
    """Paths of one run directory."""

    root: Path

    def path(self, name: str) -> Path:
        """A file of the run directory by its fixed name."""
        return self.root / name

    def resolve_input(self, given: Path | None, default: str) -> Path:
        """A user-given path (relative to the current directory), or the run directory's file."""
        return given if given is not None else self.root / default

    def optional_file(self, name: str) -> Path | None:
        """The run directory's file ``name`` when it is there, ``None`` when nothing is; a
        folder, device, pipe or broken link of that name is an :class:`InputError` (never
        read as no file)."""
        path = self.path(name)
        if path.is_file():
            return path
        if not os.path.lexists(path):
            return None
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise InputError(f"is {kind}; the run directory's {name} must be a file", path)

    def require_exists(self) -> None:
        """Refuse a run directory that does not exist (or is not a directory)."""
        if self.root.exists() and not self.root.is_dir():
            raise InputError(
                "is a file, not a run directory (pass the directory that holds "
                f"{MANIFEST} with --dir)",
                self.root,
            )
        if not self.root.is_dir():
            raise InputError(
                "run directory does not exist (create it with `datbench export-tasks`, "
                "or pass --dir)",
                self.root,
            )

    @contextlib.contextmanager
    def lock(self, stage: str, *, shared: bool = False, create: bool = False) -> Iterator[None]:
        """Hold the run directory's lock while ``stage`` writes (see :mod:`.locking`).

        Exclusive for stages that replace a set of files (export, make-judge-tasks); ``shared``
        for ``score``, whose only output is renamed into place whole, so several scores of one
        export run at once, while an export started meanwhile is refused. ``create``: make the
        directory first (an export).
        """
        made = create and not self.root.exists()
        if made:
            with jsonio.writing(self.root):
                self.root.mkdir(parents=True, exist_ok=True)
        self.require_exists()
        with hold_lock(self.root, stage, shared=shared):
            try:
                yield
            except BaseException:
                # A failed export leaves no empty folder it made behind, removed while the
                # lock is held: a stage refused the lock never removes the folder of the one
                # holding it (two exports into a new folder both see it absent and make it).
                if made:
                    with contextlib.suppress(OSError):
                        self.root.rmdir()
                raise

    def read_manifest(self) -> dict[str, Any]:
        """The manifest, checked against the files it describes."""
        self.require_exists()
        settle(self.root)
        path = self.path(MANIFEST)
        if not path.is_file():
            raise InputError(
                f"no {MANIFEST} here: this is not a run directory made by "
                "`datbench export-tasks` (or the export did not finish; run it again)",
                self.root,
            )
        manifest = jsonio.read_json(path)
        if not isinstance(manifest, dict) or "benchmark" not in manifest:
            raise InputError("manifest is not a datbench manifest", path)
        _check_benchmark(manifest["benchmark"], path)
        check_document(manifest, MANIFEST_FIELDS, path, AGAIN)
        files = manifest.get("files")
        if not isinstance(files, dict):
            raise InputError(
                'manifest "files" is not an object; run `datbench export-tasks` again', path
            )
        for name, recorded in files.items():
            # Only the files an export hashes: a hand-edited name must never make us read
            # (or hang on) an arbitrary path such as /dev/zero.
            if name not in _HASHED or not isinstance(recorded, dict):
                raise InputError(
                    f"manifest lists an unexpected file entry {name!r}; "
                    "run `datbench export-tasks` again",
                    path,
                )
            file = self.path(name)
            if not file.is_file():
                raise InputError(f"{name} is missing; run `datbench export-tasks` again", file)
            if sha256_file(file) != recorded.get("sha256"):
                raise InputError(
                    f"{name} does not match the manifest (changed after export?); "
                    "run `datbench export-tasks` again",
                    file,
                )
        missing = [name for name in _HASHED if name not in files]
        if missing:
            raise InputError(
                f"manifest records no digest of {', '.join(missing)} (edited by hand?); "
                "run `datbench export-tasks` again",
                path,
            )
        return manifest

    def benchmark(self) -> str | None:
        """The manifest's ``benchmark`` without checking the files; ``None`` with no manifest
        (or one naming no known benchmark)."""
        if self.root.is_dir():
            settle(self.root)
        path = self.path(MANIFEST)
        if not path.is_file():
            return None
        manifest = jsonio.read_json(path)
        value = manifest.get("benchmark") if isinstance(manifest, dict) else None
        return value if isinstance(value, str) and value else None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write the manifest last: its presence marks a finished export."""
        files = {}
        for name in _HASHED:
            file = self.path(name)
            if file.is_file():
                files[name] = {"sha256": sha256_file(file)}
        body = {"tool": "datbench", "version": __version__, **manifest, "files": files}
        jsonio.write_bytes_atomic(self.path(MANIFEST), jsonio.dumps_pretty(body) + b"\n")


def _check_benchmark(value: Any, path: Path) -> str:
    # Only its shape: which names are benchmarks is for the benchmarks table (benchmarks.named).
    if not isinstance(value, str) or not value:
        raise InputError(
            f"manifest names no benchmark (got {jsonio.dumps(value).decode()[:80]}); "
            "run `datbench export-tasks` again",
            path,
        )
    return value
