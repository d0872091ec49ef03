"""An export's files, written into a private folder of the run directory and switched in whole.

An export writes every new file (tasks, references, images, request files) into a fresh
private folder of the run directory, ``.datbench-export.<host>-<pid>.<random>`` (made with
``mkdir``, which never follows or reuses a name; image files created with
``O_EXCL | O_NOFOLLOW``), and the new manifest into that folder last. The rename that puts the
manifest into the folder commits the export; it is the one rename that decides:

- before it, the previous export is untouched: a failure removes the folder at once, a kill
  leaves it for the next command to remove;
- after it, :func:`switch_in` removes the previous export's files that the new one does not
  have (as the previous manifest lists them), moves the new files into place (a folder absent
  from the run directory in one rename) and renames the manifest into the run directory last,
  then removes the empty private folder.

Every step of :func:`switch_in` can be repeated, so a kill in the middle is finished by the
next command that takes the run directory's lock (:func:`settle`, run by
:func:`~datbench_cli.files.locking.hold_lock`): the run directory ends with the previous export
or the new one, never a mix, and no private folder is left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.runfiles import IMAGES, MANIFEST, REFERENCES, TASKS

PREFIX = ".datbench-export."
_STAGE_NAME = re.compile(r"\.datbench-export\.[0-9a-f]{8}-[0-9]+\.[0-9a-f]{8}")
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_ALWAYS_WRITTEN = (MANIFEST, TASKS, REFERENCES)
# The request files an export writes (requests/tasks.openai.NNNNN.jsonl).
_TASK_REQUESTS = re.compile(r"requests/tasks\.openai\.[0-9]{5,}\.jsonl")


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
    files.update(_task_images(root / TASKS))
    return files


def _task_images(tasks: Path) -> set[str]:
    """The image files an older export's tasks name (every ``images/...`` string of its
    lines), not every file under ``images/``: a user's own file there is never the export's
    to remove. An unreadable tasks file names none."""
    found: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, str) and value.startswith(f"{IMAGES}/"):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    if tasks.is_file() and not tasks.is_symlink():
        with contextlib.suppress(InputError, OSError):
            for _, line in jsonio.iter_jsonl(tasks):
                collect(line)
    return found


def previous_files(root: Path) -> set[str] | None:
    """Relative paths the export of ``root`` wrote (its manifest included; never a path
    outside ``root``, whatever a hand-edited manifest says); ``None`` when ``root`` holds no
    export."""
    manifest = _read_manifest_quietly(root / MANIFEST)
    if manifest is None:
        return None
    written = manifest.get("written")
    if isinstance(written, dict):
        files = {MANIFEST, *(k for k in written if isinstance(k, str))}
    else:
        files = _legacy_files(root, manifest)
    return {rel for rel in files if _is_inside(rel) and _is_export_name(rel)}


def previous_rows(root: Path) -> dict[str, str]:
    """The row digests (sample or task id -> digest) of the export of ``root``; empty when it
    holds none, or one that recorded none."""
    manifest = _read_manifest_quietly(root / MANIFEST)
    rows = manifest.get("rows") if manifest is not None else None
    return rows if isinstance(rows, dict) else {}


def _is_inside(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts


def _is_export_name(rel: str) -> bool:
    """Whether an export could have written ``rel``: a hand-edited ``written`` map never makes
    a re-export remove another stage's file (the responses, the report, judge files)."""
    return (
        rel in _ALWAYS_WRITTEN
        or rel.startswith(f"{IMAGES}/")
        or _TASK_REQUESTS.fullmatch(rel) is not None
    )


def check_replaceable(folder: Path) -> None:
    """Refuse a run-directory folder the export writes into but did not make: a symlink
    (never followed, never removed) or a file."""
    if folder.is_symlink():
        raise InputError(
            f"this folder is a symbolic link (to {os.readlink(folder)}); datbench writes only "
            "into folders it made",
            folder,
            hint="remove the link or export into another directory (--dir)",
        )
    if folder.exists() and not folder.is_dir():
        raise InputError(
            "this is not a folder",
            folder,
            hint="move it away or export into another directory (--dir)",
        )


def check_placeable(root: Path, rels: Iterable[str]) -> None:
    """Refuse, before the export is committed, a folder of ``root`` that a file of ``rels``
    would go into and that is a symlink or a file (see :func:`check_replaceable`)."""
    folders: set[str] = set()
    for rel in rels:
        folder = rel.rpartition("/")[0]
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(folders, key=lambda f: f.count("/")):
        check_replaceable(root / folder)


def leftovers(root: Path) -> list[Path]:
    """The private export folders in ``root`` (real folders only, never a link)."""
    try:
        entries = os.listdir(root)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.startswith(PREFIX) and _STAGE_NAME.fullmatch(entry):
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(root / entry).st_mode):
                    found.append(root / entry)
    return sorted(found)


def _committed(stage: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISREG(os.lstat(stage / MANIFEST).st_mode)
    return False


def settle(root: Path) -> None:
    """Finish what killed exports left in ``root`` (the caller holds the lock exclusively): a
    committed private folder is switched in, an uncommitted one removed."""
    for stage in leftovers(root):
        if _committed(stage):
            switch_in(root, stage)
        else:
            with jsonio.writing(stage):
                shutil.rmtree(stage)


def switch_in(root: Path, stage: Path) -> None:
    """Put the committed export in ``stage`` into ``root`` (see the module docstring); safe to
    run again after a kill at any point."""
    manifest = stage / MANIFEST
    if _committed(stage):
        new = _read_manifest_quietly(manifest)
        written = new.get("written") if new is not None else None
        if not isinstance(written, dict):
            raise InputError(
                "this unfinished export's manifest lists no files; remove the folder and run "
                "`datbench export-tasks` again",
                manifest,
            )
        keep = {MANIFEST, *written}
        for rel in sorted((previous_files(root) or set()) - keep, reverse=True):
            if _through_link(root, rel):
                continue  # a folder on the way was made a link: never followed
            path = root / rel
            if path.is_file() or path.is_symlink():
                with jsonio.writing(path):
                    path.unlink()
            _remove_empty_parents(root, path)  # also when a kill came between the two
        _move_tree(stage, root, skip=MANIFEST)
        with jsonio.writing(root / MANIFEST):
            os.replace(manifest, root / MANIFEST)
    with jsonio.writing(stage):
        shutil.rmtree(stage)


def _through_link(root: Path, rel: str) -> bool:
    """Whether a folder on the way from ``root`` to ``rel`` is a symbolic link (its files
    are not the run directory's)."""
    folder = root
    for part in Path(rel).parts[:-1]:
        folder = folder / part
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                return True
    return False


def _move_tree(source: Path, target: Path, skip: str = "") -> None:
    """Move every entry of ``source`` into ``target``: a folder absent there in one rename,
    a file replacing the file of its name."""
    for entry in sorted(os.listdir(source)):
        if entry == skip:
            continue
        here, there = source / entry, target / entry
        with jsonio.writing(there):
            if stat.S_ISDIR(os.lstat(here).st_mode):
                if not os.path.lexists(there):
                    try:
                        os.rename(here, there)
                        continue
                    except OSError as exc:  # made meanwhile (not empty): move file by file
                        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                            raise
                check_replaceable(there)
                _move_tree(here, there)
            else:
                os.replace(here, there)


def _remove_empty_parents(root: Path, path: Path) -> None:
    parent = path.parent
    while parent != root and root in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


class Stage:
    """A context manager: a new private export folder in ``root``. :meth:`write` puts image
    files in it; the export writes its other files into :attr:`path`, the manifest last. On
    leaving, an uncommitted folder (no manifest) is removed; a committed one stays for
    :func:`switch_in` (or, after a failure there, the next command's :func:`settle`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / f"{PREFIX}{jsonio.process_tag()}.{secrets.token_hex(4)}"
        self._staged = os.fspath(self.path)
        self._made: set[str] = {""}

    def __enter__(self) -> Stage:
        with jsonio.writing(self.path):
            self.root.mkdir(parents=True, exist_ok=True)
            os.mkdir(self.path, 0o777)
        return self

    def write(self, relative: str, data: bytes) -> None:
        """Write ``relative`` (a path inside the run directory) holding ``data``.

        Plain ``os.open``/``os.write``/``os.close``: no file object (whose ``fstat``, ``ioctl``
        and ``lseek`` would triple the system calls of a small file)."""
        with jsonio.writing(self.root / relative):
            self._folder(relative.rpartition("/")[0])
            fd = os.open(os.path.join(self._staged, relative), _NEW_FILE, 0o666)
            try:
                jsonio.write_all(fd, data)
            finally:
                os.close(fd)

    def _folder(self, folder: str) -> None:
        if folder in self._made:
            return
        self._folder(folder.rpartition("/")[0])
        os.mkdir(os.path.join(self._staged, folder))
        self._made.add(folder)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if os.path.isdir(self.path) and not _committed(self.path):
            shutil.rmtree(self.path, ignore_errors=True)
