"""An export's new ``images/`` folder, built aside and swapped in only when the export succeeds.

The staging folder is a fresh private folder of this process
(``.datbench-staging.<host>-<pid>.<random>``), so nothing planted in the run directory (a
symlink named like it, another export's folder) is ever written through; files are created
with ``O_EXCL | O_NOFOLLOW`` under the umask. The swap renames the old ``images/`` to a fresh
hidden name, the staging folder to ``images/``, then deletes the old one. A planted ``images/``
symlink is refused before anything is written. Leftovers of a killed export (its staging or old
folder, found by host and dead process id) are removed by the next export.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from pathlib import Path
from types import TracebackType

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

STAGING_PREFIX = ".datbench-staging"
OLD_PREFIX = ".datbench-old-images"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def check_replaceable(folder: Path) -> None:
    """Refuse a run-directory folder the export would replace but did not make: a symlink
    (never followed, never removed) or a file."""
    if folder.is_symlink():
        raise InputError(
            f"{folder.name} is a symbolic link (to {os.readlink(folder)}); datbench writes only "
            "folders it made: remove the link or use another run directory",
            folder,
        )
    if folder.exists() and not folder.is_dir():
        raise InputError(
            f"{folder.name} is not a folder; remove it or use another run directory", folder
        )


def remove_leftovers(root: Path) -> None:
    """Delete staging and old-image folders that killed exports left in ``root``.

    Only real folders (never symlinks) named by this host for a process that is gone, and the
    fixed names earlier versions used, are removed.
    """
    try:
        entries = os.listdir(root)
    except OSError:
        return
    for entry in entries:
        if not entry.startswith((STAGING_PREFIX, OLD_PREFIX)):
            continue
        path = root / entry
        with contextlib.suppress(OSError):
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                continue
            legacy = entry in {STAGING_PREFIX, OLD_PREFIX}
            if legacy or jsonio.is_stale_name(entry.split(".", 2)[-1]):
                shutil.rmtree(path)


def _fresh_name(prefix: str) -> str:
    return f"{prefix}.{jsonio.process_tag()}.{secrets.token_hex(4)}"


class ImageStaging:
    """A context manager: ``write`` image files, ``commit`` them as ``images/``; on leaving
    without a commit, the staging folder is deleted and ``images/`` is untouched."""

    def __init__(self, root: Path, target: str) -> None:
        self.root = root
        self.target = root / target
        self.path = root / _fresh_name(STAGING_PREFIX)
        self._made: set[Path] = set()

    def __enter__(self) -> ImageStaging:
        check_replaceable(self.target)
        remove_leftovers(self.root)
        with jsonio.writing(self.path):
            os.mkdir(self.path, jsonio.dir_mode())
        self._made.add(self.path)
        return self

    def write(self, relative: str, data: bytes) -> None:
        """Create ``relative`` (a path inside ``images/``) holding ``data``."""
        path = self.path / relative
        with jsonio.writing(self.target / relative):
            self._folder(path.parent)
            fd = os.open(path, _NEW_FILE, 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)

    def _folder(self, folder: Path) -> None:
        if folder in self._made:
            return
        self._folder(folder.parent)
        os.mkdir(folder)
        self._made.add(folder)

    def commit(self) -> None:
        """Put the staged folder in place as ``images/`` (the old one is deleted)."""
        check_replaceable(self.target)
        old = self.root / _fresh_name(OLD_PREFIX)
        with jsonio.writing(self.target):
            if self.target.exists():
                os.replace(self.target, old)
            os.replace(self.path, self.target)
        self._made.clear()
        shutil.rmtree(old, ignore_errors=True)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._made:
            shutil.rmtree(self.path, ignore_errors=True)
