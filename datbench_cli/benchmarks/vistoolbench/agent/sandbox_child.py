"""The process that runs one piece of model-written code (started by ``sandbox.py``).

Standalone on purpose: it imports only the standard library and the preloaded analysis
packages, never ``datbench_cli``, and is run with ``python -I`` (no user site, no ``PYTHON*``
variables) in a private working directory with an almost empty environment. Its settings come
as one JSON object on stdin; its result goes as one JSON object to the file descriptor named
there (never stdout, which the model's code may write to directly).

Layers, in order: resource limits (address space, CPU seconds, file size, open files, no core
files); the preloads; dropping root to a throw-away uid when started as root (so the process
limit below is enforced and root-only files are unreadable); no new processes or threads
(``RLIMIT_NPROC`` 0); then an audit hook (PEP 578), which cannot be removed once added, refusing
sockets, process creation, signals, ``ctypes``, introspection that could reach the hook, and file
access outside the working directory and the Python installation. The network namespace and the
wall-clock limit are applied from outside by the parent.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import resource
import signal
import sys
import sysconfig
import traceback
from typing import Any

_CUT = "\n[... {n} more characters cut by the sandbox]"

# Quirk: the official tools run the model's code with only these builtins (plus ``__import__``,
# so ``import`` statements work); code calling e.g. ``sum`` or ``open`` fails there too.
_OFFICIAL_BUILTINS = (
    "print", "range", "len", "min", "max", "abs", "float", "int", "str", "list", "dict", "set",
    "tuple", "enumerate", "zip", "map", "filter", "__import__",
)  # fmt: skip

_DENIED_EVENTS = (
    "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    "subprocess.Popen", "_posixsubprocess.fork_exec", "os.kill", "os.killpg",
    "signal.pthread_kill", "os.symlink", "os.link", "os.setuid", "os.setgid",
    "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys._current_frames", "sys.addaudithook", "sys.setprofile",
    "sys.settrace", "socket.__new__",
    "socket.socketpair", "socket.connect", "socket.bind", "socket.getaddrinfo", "os.add_dll_directory",
    "webbrowser.open", "pty.spawn", "os.startfile", "os.putenv", "os.unsetenv",
    "_thread.start_new_thread",
)  # fmt: skip
_DENIED_PREFIXES = ("ctypes.", "socket.", "mmap.", "winreg.")
# Imported before the hook (libraries may import them), so only their use is refused above.
_PRELOADED_STDLIB = ("ctypes",)
# Events naming a path: (position of the path argument, whether it writes).
_PATH_EVENTS = {
    "open": (0, None),
    "os.listdir": (0, False),
    "os.scandir": (0, False),
    "os.chdir": (0, False),
    "os.mkdir": (0, True),
    "os.remove": (0, True),
    "os.rmdir": (0, True),
    "os.rename": (0, True),
    "os.replace": (0, True),
    "os.chmod": (0, True),
    "os.chown": (0, True),
    "os.truncate": (0, True),
    "os.utime": (0, True),
    "os.chflags": (0, True),
    "os.setxattr": (0, True),
    "os.removexattr": (0, True),
    "os.listxattr": (0, False),
    "os.getxattr": (0, False),
    "shutil.copyfile": (1, True),
    "shutil.copytree": (1, True),
    "shutil.rmtree": (0, True),
    "shutil.move": (1, True),
    "glob.glob": (0, False),
}
_SECOND_PATH = {"os.rename", "os.replace", "shutil.move", "shutil.copyfile", "shutil.copytree"}
_READ_EXTRA = ("/dev/null", "/dev/urandom", "/proc/meminfo", "/sys/devices/system/cpu/")


class _Capture(io.TextIOBase):
    """A text stream keeping the first ``limit`` characters and counting the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.dropped = limit, 0, 0
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def value(self) -> str:
        text = "".join(self.parts)
        return text + _CUT.format(n=self.dropped) if self.dropped else text


def _limits(config: dict) -> None:
    mb = 1024 * 1024
    for name, soft, hard in (
        ("RLIMIT_AS", config["memory_mb"] * mb, config["memory_mb"] * mb),
        # SIGXCPU at the soft limit; the kernel's SIGKILL one second later if it is ignored.
        ("RLIMIT_CPU", config["cpu_seconds"], config["cpu_seconds"] + 1),
        ("RLIMIT_FSIZE", config["file_mb"] * mb, config["file_mb"] * mb),
        ("RLIMIT_NOFILE", 64, 64),
        ("RLIMIT_CORE", 0, 0),
    ):
        resource.setrlimit(getattr(resource, name), (soft, hard))
    # A too-large write raises OSError(EFBIG) in the code instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class _Lazy:
    """A module imported on first use (slow imports such as pandas cost nothing until used)."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attribute: str) -> object:
        return getattr(
            __import__(object.__getattribute__(self, "_name"), fromlist=["_"]), attribute
        )

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_name')!r} (loaded on first use)>"


def _preload(names: list[list[str]]) -> dict:
    """``[alias, "module", lazy]`` or ``[alias, "module:attribute", lazy]``; packages that are
    not installed are skipped."""
    import importlib.util

    for module in _PRELOADED_STDLIB:
        __import__(module)
    loaded: dict[str, object] = {}
    for alias, target, lazy in names:
        module, _, attribute = target.partition(":")
        try:
            if importlib.util.find_spec(module.split(".")[0]) is None:
                continue
            if lazy and not attribute:
                loaded[alias] = _Lazy(module)
                continue
            value = __import__(module, fromlist=["_"])
            loaded[alias] = getattr(value, attribute) if attribute else value
        except Exception:  # noqa: BLE001 - a broken package is simply not offered
            continue
    image: Any = loaded.get("Image")
    if image is not None:
        image.Image.show = lambda *args, **kwargs: None  # no viewer windows
    return loaded


def _drop_root(uid: int | None) -> None:
    if uid is None or os.geteuid() != 0:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _read_roots() -> list[str]:
    roots = []
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(os.path.realpath(path) + os.sep)
    return [*roots, *_READ_EXTRA]


def _die_with_parent(parent: int) -> None:
    """Be killed when the agent dies (a SIGKILLed run leaves no code running behind it)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the CPU limit still ends the process
        return
    if os.getppid() != parent:
        os._exit(1)


def _install_hook(workdir: str, max_writes: int, read_roots: list[str]) -> None:
    work = os.path.realpath(workdir) + os.sep
    writes = [0]
    realpath, fspath, fsdecode = os.path.realpath, os.fspath, os.fsdecode
    startswith = str.startswith

    def deny(what: str) -> None:
        raise PermissionError(f"the sandbox does not allow {what}")

    def inside(path: Any, roots: tuple) -> bool:
        if isinstance(path, int):
            return True  # an already open descriptor
        try:
            full = realpath(fsdecode(fspath(path)))
        except (TypeError, ValueError):
            return False
        for root in roots:
            if root.endswith(os.sep):
                if startswith(full + os.sep, root):
                    return True
            elif full == root:
                return True
        return False

    allowed_read = (work, *read_roots)
    allowed_write = (work,)

    def hook(event: str, args: tuple) -> None:
        if event in _DENIED_EVENTS or startswith(event, _DENIED_PREFIXES):
            deny(event)
        spec = _PATH_EVENTS.get(event)
        if spec is None or not args:
            return
        position, writes_flag = spec
        paths = [args[position]] if len(args) > position else []
        if event in _SECOND_PATH and len(args) > 1:
            paths = [args[0], args[1]]
        if event == "open":
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writes_flag = any(c in mode for c in "wax+") or bool(
                flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
            )
        for path in paths:
            if path is None:
                continue
            roots = allowed_write if writes_flag else allowed_read
            if not inside(path, roots):
                deny(f"access to {path!r}")
        if event == "open" and writes_flag:
            writes[0] += 1
            if writes[0] > max_writes:
                deny(f"writing more than {max_writes} files")

    sys.addaudithook(hook)


def _namespace(tool: str, loaded: dict, workdir: str) -> dict:
    names = {name: getattr(builtins, name) for name in _OFFICIAL_BUILTINS}
    namespace = {"__builtins__": names, "__name__": "__main__"}
    namespace.update(loaded)
    if tool == "python_image_processing":
        namespace["PROCESSED_IMAGE_SAVE_PATH"] = "."
    return namespace


def main() -> None:
    config = json.loads(sys.stdin.read())
    result_fd = int(config["result_fd"])
    _limits(config)
    loaded = _preload(config["preload"])
    read_roots = _read_roots()
    _drop_root(config.get("uid"))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    _die_with_parent(int(config["parent_pid"]))  # after the uid change, which clears it
    os.environ.clear()
    out, err = _Capture(config["max_output_chars"]), _Capture(config["max_output_chars"])
    namespace = _namespace(config["tool"], loaded, config["workdir"])
    code = config["code"]
    _install_hook(config["workdir"], config["max_files"], read_roots)
    ok = True
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(code, "<llm_code>", "exec"), namespace, {})  # noqa: S102 - sandboxed
    except BaseException:  # noqa: BLE001 - every failure is reported to the model
        ok = False
        try:
            traceback.print_exc(file=err)
        except BaseException:  # noqa: BLE001 - e.g. no memory left to format it
            err.write("the code raised an exception that could not be printed\n")
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    payload = json.dumps({"ok": ok, "stdout": out.value(), "stderr": err.value()})
    data = payload.encode("utf-8", "replace")
    while data:
        data = data[os.write(result_fd, data) :]
    os._exit(0)


if __name__ == "__main__":
    main()
