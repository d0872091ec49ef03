"""An export's image files, staged aside and put into ``images/`` only when the export succeeds.

The staging folder is a fresh private folder of this process
(``.datbench-staging.<host>-<pid>.<random>``, made with ``mkdir``, which never follows or reuses
an existing name), so nothing planted in the run directory (a ``.datbench-staging`` or
``.datbench-old-images`` symlink, another export's folder) is ever written through, removed or
even looked at. Staged files are created with ``O_EXCL | O_NOFOLLOW`` under the umask.

On success the staged files are put into ``images/``: when there is no ``images/`` yet, by
renaming the staging folder itself (one ``rename`` that never replaces anything: see
:func:`rename_no_replace`), otherwise one by one (other files there stay: the export guard
decides which of the earlier export's files go). Either way a reader never sees half a file.
A staged file costs three system calls (``open``, ``write``, ``close``). Before anything is moved,
:meth:`ImageStaging.check_placeable` refuses a target folder that is a symlink or not a folder
(``images/`` itself or one task's sub-folder), so a failed check leaves the earlier export
intact. Leftovers of a killed export (a staging folder named for a dead process of this host)
are removed by the next export; the fixed names older versions used are removed only from a
run directory whose earlier export listed them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Collection
from pathlib import Path
from types import TracebackType

from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

STAGING_PREFIX = ".datbench-staging"
OLD_PREFIX = ".datbench-old-images"
LEGACY_NAMES = (STAGING_PREFIX, OLD_PREFIX)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_RENAME_NOREPLACE = 1  # linux/fs.h
_AT_FDCWD = -100


def _renameat2() -> object | None:
    """glibc's ``renameat2`` (Linux), or ``None`` where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # already loaded by datasets/pyarrow in an export

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def rename_no_replace(source: Path, target: Path) -> bool:
    """Rename ``source`` to ``target`` only if nothing is at ``target``; ``False`` when something
    is (then nothing was moved).

    On Linux this is one ``renameat2(RENAME_NOREPLACE)``, which cannot replace anything. Where
    that call is missing, ``target`` is checked with ``lstat`` first and renamed only when
    absent: a folder renamed onto an existing file, link or non-empty folder fails, so what a
    race could replace is at most an empty folder made in between.
    """
    function = _renameat2()
    if function is not None:
        import ctypes

        result = function(  # type: ignore[operator]
            _AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE
        )
        if result == 0:
            return True
        code = ctypes.get_errno()
        if code == errno.EEXIST:
            return False
        if code not in (errno.EINVAL, errno.ENOSYS):  # EINVAL: a file system without the flag
            raise OSError(code, os.strerror(code), str(target))
    if os.path.lexists(target):
        return False
    try:
        os.rename(source, target)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
            return False
        raise
    return True


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
        self._staged = os.fspath(self.path)
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
        """Stage ``relative`` (a path inside the target folder) holding ``data``.

        Plain ``os.open``/``os.write``/``os.close``: no file object (whose ``fstat``, ``ioctl``
        and ``lseek`` would triple the system calls of a small file)."""
        with jsonio.writing(self.target / relative):
            folder, _, _ = relative.rpartition("/")
            if folder:
                self._folder(self.path / folder)
            fd = os.open(os.path.join(self._staged, relative), _NEW_FILE, 0o666)
            try:
                jsonio.write_all(fd, data)
            finally:
                os.close(fd)
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
        """Move every staged file into the target folder (replacing the file of that name):
        the whole staging folder in one rename when the target folder does not exist yet."""
        self.check_placeable()
        with jsonio.writing(self.target):
            if not os.path.lexists(self.target) and rename_no_replace(self.path, self.target):
                self._made.clear()
                return
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
