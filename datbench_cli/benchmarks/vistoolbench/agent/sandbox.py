"""Running model-written code under bubblewrap (the parent side).

Every call starts ``bwrap`` with a root built from nothing (``bwrap.bwrap_argv``) and a
seccomp filter refusing new processes and threads (``seccomp``). Inside, ``sandbox_child.py``
copies the turn's files from a read-only view into ``/turn`` (a size-capped tmpfs, the only
writable folder besides ``/tmp``), applies the resource limits, runs the code and sends its
output and the files it wrote back on one pipe; the parent writes those files into the turn's
folder. The host's files, the run directory and
the agent's environment are never in the sandbox's view. The parent kills the call at its
wall-clock limit; ``--die-with-parent`` ends it with the agent.

``--unsafe-sandbox`` runs the same child without bubblewrap (limits only), for machines that
forbid user namespaces; the run records it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.batch.sender import MAX_SECONDS
from datbench_cli.benchmarks.vistoolbench.agent import protocol, seccomp
from datbench_cli.benchmarks.vistoolbench.agent.bwrap import (
    NAMESPACES,
    SANDBOX_UID,
    TURN,
    TURN_IN,
    Bwrap,
    SandboxUnavailable,  # noqa: F401 - raised by detect_isolation
    bwrap_argv,
    bwrap_candidates,
    explain,
    find_bwrap,
    proc_hidden,
    read_only_binds,
)
from datbench_cli.errors import UsageError

_CHILD = Path(__file__).with_name("sandbox_child.py")
_RAW_OUTPUT_CAP = 16_000
# The report's first line names at most ``max_files`` files (a name is at most 255 bytes, 6
# bytes each as JSON escapes); a longer line is refused before it is parsed.
_HEAD_BYTES_PER_FILE = 2048
_MB = 1024 * 1024
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


@dataclass(frozen=True)
class Limits:
    """What one call of model code may use (``max_dir_mb``: the turn folder's size cap;
    ``max_files``: the files one call may add to or change in it)."""

    cpu_seconds: int = 60
    wall_seconds: float = 120.0
    memory_mb: int = 2048
    file_mb: int = 64
    max_output_chars: int = 20_000
    max_dir_mb: int = 256
    max_files: int = 64
    tmp_mb: int = 64

    def __post_init__(self) -> None:
        if not 0 < self.wall_seconds <= MAX_SECONDS:  # nan or inf: no wall-clock limit at all
            raise UsageError(
                f"--tool-wall-seconds must be a positive number of seconds, at most {MAX_SECONDS:g}"
            )

    def as_dict(self) -> dict[str, Any]:
        """The limits as recorded in the run settings."""
        return dict(self.__dict__)


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
            "namespaces": list(NAMESPACES),
            "uid": SANDBOX_UID,
            "capabilities": "none",
            "environment": sorted(_ENV),
            "seccomp": "no new processes or threads ("
            + ", ".join(seccomp.DENIED_SYSCALLS)
            + "), no memory outside the address space ("
            + ", ".join(seccomp.MEMORY_SYSCALLS)
            + "), no kernel objects counted per host user ("
            + ", ".join(seccomp.PER_USER_SYSCALLS)
            + "), no kernel interfaces image code never needs ("
            + ", ".join(seccomp.KERNEL_SYSCALLS)
            + "), no sockets ("
            + ", ".join(seccomp.SOCKET_SYSCALLS)
            + ")",
            "writable": {
                TURN: f"tmpfs {limits.max_dir_mb} MB",
                "/tmp": f"tmpfs {limits.tmp_mb} MB",
            },
            "read_only": [path for path, _ in read_only_binds()],
            "hidden": ["/proc/sys", *(path for path, _ in proc_hidden())],
        }


# --- finding and probing bwrap ------------------------------------------------------------


def probe(bwrap: Bwrap) -> None:
    """Run one trivial call under ``bwrap`` (default limits: the run's own cannot make it
    fail); :class:`SandboxUnavailable` if it fails."""
    with tempfile.TemporaryDirectory(prefix="datbench-probe-") as folder:
        result = run_code("print(6 * 7)", "python_interpreter", Path(folder), Limits(),
                          Isolation(bwrap), [])  # fmt: skip
    if not (result.ok and result.stdout == "42\n"):
        raise explain(result.stderr)


def detect_isolation(*, unsafe: bool, source: str | None = None) -> Isolation:
    """The isolation of a run: a probed bwrap, or none with ``unsafe`` (the explicit opt-in)."""
    if unsafe:
        return Isolation(None)
    candidates = bwrap_candidates(source) or [find_bwrap(source)]  # find_bwrap raises
    failures = []
    for bwrap in candidates:
        try:
            probe(bwrap)
        except SandboxUnavailable as exc:
            failures.append(exc)
            continue
        return Isolation(bwrap)
    raise failures[0]  # the system's reason: the wheel's is the same or less telling


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
    program = seccomp.program()
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
        "max_files": limits.max_files,
        "saved_images": protocol.TRANSFORMED_NAME,
        # Without bwrap's --die-with-parent: the child ends with the agent by itself.
        "die_with": None if sandboxed else os.getpid(),
    }
    seccomp = _seccomp_fd() if sandboxed else None
    if isolation.bwrap is not None:
        command = bwrap_argv(
            isolation.bwrap,
            env=_ENV,
            tmp_mb=limits.tmp_mb,
            turn_mb=limits.max_dir_mb,
            turn_dir=workdir,
            child=_CHILD,
            seccomp_fd=seccomp,
        )
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


@dataclass
class _Report:
    ok: bool
    stdout: str
    stderr: str
    files: list[tuple[str, bytes]]


def _parse_report(data: bytearray, max_files: int) -> _Report | None:
    """The child's report: one short JSON line (``ok``, the sizes of the two streams, each
    file's name and size), then those bytes. The code can write its own report: a first line
    longer than ``max_files`` files need, or naming more, is refused unparsed."""
    end = data.find(b"\n", 0, 1024 + max_files * _HEAD_BYTES_PER_FILE)
    try:
        head = orjson.loads(memoryview(data)[:end]) if end >= 0 else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(head, dict) or not isinstance(head.get("files"), list):
        return None
    streams, listed = head.get("streams"), head["files"]
    if not (isinstance(streams, list) and len(streams) == 2 and len(listed) <= max_files):
        return None
    if not all(isinstance(item, list) and len(item) == 2 for item in listed):
        return None
    if not all(isinstance(name, str) and _safe_name(name) for name, _ in listed):
        return None
    sizes = [*streams, *(size for _, size in listed)]
    if not all(isinstance(size, int) and size >= 0 for size in sizes):
        return None
    body, parts, offset = memoryview(data)[end + 1 :], [], 0
    for size in sizes:
        parts.append(bytes(body[offset : offset + size]))
        offset += size
    if offset != len(body):
        return None
    stdout, stderr = (part.decode("utf-8", "replace") for part in parts[:2])
    files = [(name, part) for (name, _), part in zip(listed, parts[2:], strict=True)]
    return _Report(head.get("ok") is True, stdout, stderr, files)


def _safe_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters and the child's note of the cut. The child cuts its output,
    but the code runs in the child's interpreter and can lift that cut."""
    if len(text) <= limit + 512:  # room for the child's own notes
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut by the sandbox]"


def _outcome(
    status: int, timed_out: bool, raw: _Drain, report: _Drain, limits: Limits, elapsed: float
) -> CodeResult:
    result = CodeResult(False, exit_status=status, elapsed_s=round(elapsed, 3))
    parsed = None
    if not (report.dropped or report.is_alive()):
        parsed = _parse_report(report.data, limits.max_files)
    if parsed is not None and not timed_out and status == 0:
        result.ok, result.files = parsed.ok, parsed.files
        result.stdout = _clip(parsed.stdout, limits.max_output_chars)
        result.stderr = _clip(parsed.stderr, limits.max_output_chars)
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
