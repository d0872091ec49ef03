"""Running model-written code in a separate, limited process (the parent side).

Each call starts ``python -I sandbox_child.py`` in the turn's private working directory, in a
new session, with an almost empty environment, inside a new network namespace (``unshare
--net``) when the machine allows one, and kills the whole process group when the call ends or
its wall-clock limit passes. CPU time, address space, file size, open files and process count
are limited by the child itself before the code runs (see ``sandbox_child``). Output is bounded
twice: inside the child (characters kept of stdout/stderr) and here (bytes read from its pipes).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import site
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson

_CHILD = Path(__file__).with_name("sandbox_child.py")
_RAW_OUTPUT_CAP = 16_000
_MAX_TASKS = 4  # the child and a thread or two of its libraries; never a process tree
# Throw-away uids for code started as root: far above any real account, new for every call.
_UID_BASE, _UID_SPAN = 1_600_000_000, 100_000_000
_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
    "MPLBACKEND": "Agg",
}


@dataclass(frozen=True)
class Limits:
    """What one call of model code may use."""

    cpu_seconds: int = 60
    wall_seconds: float = 120.0
    memory_mb: int = 2048
    file_mb: int = 64
    max_files: int = 64
    max_output_chars: int = 20_000
    max_dir_mb: int = 512

    def as_dict(self) -> dict[str, Any]:
        """The limits as recorded in the run settings."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Isolation:
    """How the child is isolated: the command prefix (network namespace), whether root is
    dropped to a throw-away uid, and the pids cgroup (if any) capping its processes."""

    prefix: tuple[str, ...]
    network: str  # "namespace" or "none (unsafe)"
    drop_root: bool
    pids_cgroup: Path | None = None

    def describe(self) -> dict[str, Any]:
        """What the run records about the isolation it had."""
        process_limit = "RLIMIT_NPROC=0" if self.drop_root or os.geteuid() != 0 else None
        if self.pids_cgroup is not None:
            process_limit = "pids cgroup" + (f" + {process_limit}" if process_limit else "")
        return {
            "network": self.network,
            "process_limit": process_limit or "audit hook only",
            "user": "throw-away uid"
            if self.drop_root
            else ("root" if os.geteuid() == 0 else "own"),
            "file_access": "audit hook" + (" + unprivileged uid" if self.drop_root else ""),
        }


def _world_reachable(path: Path) -> bool:
    """Whether any user can reach ``path``: every directory above it searchable by others."""
    try:
        for parent in [*reversed(path.resolve().parents), path.resolve()]:
            mode = parent.stat().st_mode
            if parent.is_dir() and not mode & stat.S_IXOTH:
                return False
        return bool(path.resolve().stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _pids_cgroup_root() -> Path | None:
    """A writable pids cgroup hierarchy (cgroup v1 ``pids`` or v2 with the controller)."""
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        probe = root / f"datbench-probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            (probe / "pids.max").write_text("4")
            _remove_stale_cgroups(root)
            return root
        except OSError:
            continue
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return None


@cache
def _unshare_works(*args: str) -> bool:
    binary = shutil.which("unshare")
    if binary is None:
        return False
    try:
        done = subprocess.run(
            [binary, *args, "--", sys.executable, "-I", "-c", "pass"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def detect_isolation(allow_unsafe: bool) -> Isolation | None:
    """A network namespace when one can be made (as root, or through a user namespace);
    ``None`` when none can and ``allow_unsafe`` is false (the caller refuses the tools)."""
    root = os.geteuid() == 0
    binary = shutil.which("unshare") or "unshare"
    # Root is dropped only when the interpreter stays readable for an unprivileged uid.
    drop = root and all(
        _world_reachable(Path(str(p)))
        for p in (sys.executable, sys.prefix, sys.base_prefix, _CHILD, *site.getsitepackages())
    )
    cgroup = _pids_cgroup_root() if root else None
    if root and _unshare_works("--net"):
        return Isolation((binary, "--net"), "namespace", drop, cgroup)
    if not root and _unshare_works("--net", "--map-root-user"):
        return Isolation((binary, "--net", "--map-root-user"), "namespace", False)
    if allow_unsafe:
        return Isolation((), "none (unsafe)", drop, cgroup)
    return None


@dataclass
class CodeResult:
    """What one call produced: the child's report, or why there is none."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    limit: str | None = None  # which limit stopped the code, if one did
    exit_status: int | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)


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


def _remove_stale_cgroups(root: Path) -> None:
    """Remove the empty cgroups of killed agents (``datbench-sandbox-<dead pid>-*``)."""
    for group in root.glob("datbench-sandbox-*"):
        pid = group.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                group.rmdir()


def _join_cgroup(root: Path | None, pid: int) -> Path | None:
    """Put the (still waiting) child in a new pids cgroup allowing a handful of tasks."""
    if root is None:
        return None
    group = root / f"datbench-sandbox-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(_MAX_TASKS))
        (group / "cgroup.procs").write_text(str(pid))
    except OSError:
        _end_cgroup(group)
        return None
    return group


def _end_cgroup(group: Path | None) -> None:
    """Kill whatever is left in the cgroup and remove it."""
    if group is None:
        return
    for _ in range(50):
        try:
            pids = (group / "cgroup.procs").read_text().split()
        except OSError:
            pids = []
        for pid in pids:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_code(
    code: str,
    tool: str,
    workdir: Path,
    limits: Limits,
    isolation: Isolation,
    preload: list[tuple[str, str, bool]],
) -> CodeResult:
    """Run ``code`` once in ``workdir`` under ``limits``; never raises for what the code does."""
    uid = _UID_BASE + secrets.randbelow(_UID_SPAN) if isolation.drop_root else None
    if uid is not None:
        os.chown(workdir, uid, uid)
        for entry in workdir.iterdir():
            with contextlib.suppress(OSError):
                os.chown(entry, uid, uid, follow_symlinks=False)
    result_read, result_write = os.pipe()
    config = {
        "code": code,
        "tool": tool,
        "workdir": str(workdir),
        "result_fd": result_write,
        "uid": uid,
        "parent_pid": os.getpid(),
        "preload": [list(item) for item in preload],
        "cpu_seconds": limits.cpu_seconds,
        "memory_mb": limits.memory_mb,
        "file_mb": limits.file_mb,
        "max_files": limits.max_files,
        "max_output_chars": limits.max_output_chars,
    }
    command = [*isolation.prefix, sys.executable, "-I", str(_CHILD)]
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=dict(_ENV),
            pass_fds=(result_write,),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        os.close(result_read)
        os.close(result_write)
        return CodeResult(False, stderr=f"the sandbox could not start: {exc}", limit="start")
    os.close(result_write)
    group = _join_cgroup(isolation.pids_cgroup, child.pid)
    assert child.stdout is not None and child.stdin is not None
    raw = _Drain(os.dup(child.stdout.fileno()), _RAW_OUTPUT_CAP)
    child.stdout.close()
    report = _Drain(result_read, limits.max_output_chars * 8 + 65536)
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
        _kill_group(child.pid)
        child.wait()
        _end_cgroup(group)
    raw.join(5)
    report.join(5)
    elapsed = time.monotonic() - started
    return _outcome(child.returncode, timed_out, raw, report, limits, elapsed)


def _outcome(
    status: int, timed_out: bool, raw: _Drain, report: _Drain, limits: Limits, elapsed: float
) -> CodeResult:
    result = CodeResult(False, exit_status=status, elapsed_s=round(elapsed, 3))
    parsed: Any = None
    if report.data and not report.dropped:
        with contextlib.suppress(orjson.JSONDecodeError):
            parsed = orjson.loads(bytes(report.data))
    if isinstance(parsed, dict) and not timed_out and status == 0:
        result.ok = parsed.get("ok") is True
        result.stdout = str(parsed.get("stdout", ""))
        result.stderr = str(parsed.get("stderr", ""))
        return result
    if timed_out:
        result.limit = "wall_clock"
        result.stderr = (
            f"the sandbox stopped the code after {limits.wall_seconds:g} s of wall-clock time"
        )
    elif status == -signal.SIGXCPU or status == -signal.SIGKILL:
        # Nothing here sends SIGKILL before the wall-clock limit: the kernel's CPU hard limit
        # (or the machine's out-of-memory killer) did.
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
