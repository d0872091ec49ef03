"""An export's image files, staged aside and put into ``images/`` only when the export succeeds.

The staging folder is a fresh private folder of this process
(``.datbench-staging.<host>-<pid>.<random>``, made with ``mkdir``, which never follows or reuses
an existing name), so nothing planted in the run directory (a ``.datbench-staging`` or
``.datbench-old-images`` symlink, another export's folder) is ever written through, removed or
even looked at. Staged files are created with ``O_EXCL | O_NOFOLLOW`` under the umask.

On success the staged files are moved into ``images/`` one by one (other files there stay:
the export guard decides which of the earlier export's files go). Before anything is moved,
:meth:`ImageStaging.check_placeable` refuses a target folder that is a symlink or not a folder
(``images/`` itself or one task's sub-folder), so a failed check leaves the earlier export
intact. Leftovers of a killed export (a staging folder named for a dead process of this host)
are removed by the next export; the fixed names older versions used are removed only from a
run directory whose earlier export listed them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Collection
from pathlib import Path
from types import TracebackType

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

STAGING_PREFIX = ".datbench-staging"
OLD_PREFIX = ".datbench-old-images"
LEGACY_NAMES = (STAGING_PREFIX, OLD_PREFIX)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


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


def remove_leftovers(root: Path, owned: Collection[str] = ()) -> None:
    """Delete staging folders that killed exports left in ``root``.

    Only real folders (never symlinks) named by this host for a process that is gone are
    removed, and the fixed names earlier versions used when ``owned`` (what the earlier export
    of ``root`` wrote) lists them.
    """
    try:
        entries = os.listdir(root)
    except OSError:
        return
    for entry in entries:
        if not entry.startswith(LEGACY_NAMES):
            continue
        path = root / entry
        with contextlib.suppress(OSError):
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                continue
            if entry in LEGACY_NAMES:
                if entry in owned:
                    shutil.rmtree(path)
            elif jsonio.is_stale_name(entry.split(".", 2)[-1]):
                shutil.rmtree(path)


def _fresh_name(prefix: str) -> str:
    return f"{prefix}.{jsonio.process_tag()}.{secrets.token_hex(4)}"


class ImageStaging:
    """A context manager: :meth:`write` image files, :meth:`place` them into ``target``; on
    leaving, the staging folder is deleted (``target`` is untouched unless placed)."""

    def __init__(self, root: Path, target: str, owned: Collection[str] = ()) -> None:
        self.root = root
        self.target = root / target
        self.path = root / _fresh_name(STAGING_PREFIX)
        self._owned = owned
        self._made: set[Path] = set()
        self._files: list[str] = []

    def __enter__(self) -> ImageStaging:
        check_replaceable(self.target)
        remove_leftovers(self.root, self._owned)
        with jsonio.writing(self.path):
            self.root.mkdir(parents=True, exist_ok=True)
            os.mkdir(self.path, 0o777)
        self._made.add(self.path)
        return self

    def write(self, relative: str, data: bytes) -> None:
        """Stage ``relative`` (a path inside the target folder) holding ``data``."""
        path = self.path / relative
        with jsonio.writing(self.target / relative):
            self._folder(path.parent)
            fd = os.open(path, _NEW_FILE, 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        self._files.append(relative)

    def _folder(self, folder: Path) -> None:
        if folder in self._made:
            return
        self._folder(folder.parent)
        os.mkdir(folder)
        self._made.add(folder)

    def _target_folders(self) -> list[Path]:
        folders = {self.target}
        for relative in self._files:
            parent = (self.target / relative).parent
            while parent != self.target:
                folders.add(parent)
                parent = parent.parent
        return sorted(folders, key=lambda p: len(p.parts))

    def check_placeable(self) -> None:
        """Refuse, before anything is replaced, a target folder (``images/`` or one of its
        sub-folders) that is a symlink or a file: datbench never writes through a link it did
        not make, nor removes one."""
        for folder in self._target_folders():
            check_replaceable(folder)

    def place(self) -> None:
        """Move every staged file into the target folder (replacing the file of that name)."""
        self.check_placeable()
        for folder in self._target_folders():
            with jsonio.writing(folder):
                if not folder.is_dir():
                    os.mkdir(folder, 0o777)
        for relative in self._files:
            with jsonio.writing(self.target / relative):
                os.replace(self.path / relative, self.target / relative)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._made:
            shutil.rmtree(self.path, ignore_errors=True)
