"""The process that runs one piece of model-written code (started by ``sandbox.py``).

Standalone on purpose: it imports only the standard library and the preloaded analysis
packages, never ``datbench_cli``, and is run with ``python -I`` inside bubblewrap (see
``sandbox.py``; the kernel draws the boundary, nothing here does). Its settings come as one
JSON object on stdin. It copies the turn's files from the read-only ``source_dir`` into the
writable ``workdir``, applies the resource limits (address space, CPU seconds, file size, open
files, no core files, no new processes), preloads the tool's packages and runs the code, then
closes the descriptors the code left open. Its result goes to the file descriptor named in the
settings (never stdout, which the code may write to directly): one short JSON line (the sizes
of what follows), then the bytes of the code's stdout and stderr and of each file the call
wrote or changed (at most ``max_files``, saved images first).
"""

from __future__ import annotations

import builtins
import gc
import io
import json
import os
import re
import resource
import shutil
import signal
import sys
import traceback
from typing import Any

_CUT = "\n[... {n} more characters cut by the sandbox]"

# Quirk: the official tools run the model's code with only these builtins (plus ``__import__``,
# so ``import`` statements work); code calling e.g. ``sum`` or ``open`` fails there too.
_OFFICIAL_BUILTINS = (
    "print", "range", "len", "min", "max", "abs", "float", "int", "str", "list", "dict", "set",
    "tuple", "enumerate", "zip", "map", "filter", "__import__",
)  # fmt: skip


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


def _limits(config: dict, pids: tuple[int, ...]) -> None:
    mb = 1024 * 1024
    for name, soft, hard in (
        ("RLIMIT_AS", config["memory_mb"] * mb, config["memory_mb"] * mb),
        # SIGXCPU at the soft limit; the kernel's SIGKILL one second later if it is ignored.
        ("RLIMIT_CPU", config["cpu_seconds"], config["cpu_seconds"] + 1),
        ("RLIMIT_FSIZE", config["file_mb"] * mb, config["file_mb"] * mb),
        ("RLIMIT_NOFILE", 64, 64),
        ("RLIMIT_CORE", 0, 0),
        # Queued real-time signals are counted per host user (root's own sigqueue and
        # timer_create failed while a call held 96,000); Python queues none.
        ("RLIMIT_SIGPENDING", 16, 16),
        # Not enforced for host root (the seccomp filter is what holds there); it holds for
        # --unsafe-sandbox run by an ordinary user.
        ("RLIMIT_NPROC", 0, 0),
    ):
        for pid in pids:
            resource.prlimit(pid, getattr(resource, name), (soft, hard))
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


def _namespace(tool: str, loaded: dict) -> dict:
    names = {name: getattr(builtins, name) for name in _OFFICIAL_BUILTINS}
    namespace = {"__builtins__": names, "__name__": "__main__"}
    namespace.update(loaded)
    if tool == "python_image_processing":
        namespace["PROCESSED_IMAGE_SAVE_PATH"] = "."
    return namespace


def _snapshot(folder: str) -> dict[str, tuple[int, int]]:
    """Size and modification time of each regular file directly in ``folder``."""
    found = {}
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            found[entry.name] = (info.st_size, info.st_mtime_ns)
    return found


def _copy_in(source: str, target: str) -> None:
    """The turn's files, from the sandbox's read-only view into its writable folder."""
    for name in _snapshot(source):
        shutil.copyfile(os.path.join(source, name), os.path.join(target, name))


def _send(result_fd: int, ok: bool, streams: list[str], folder: str, names: list[str]) -> None:
    """One JSON line (``ok``, the byte sizes of the streams, each file's name and size), then
    the streams' bytes (lone surrogates as ``\\udcxx``), then the files' bytes. The line stays
    short whatever the code printed or wrote: the agent reads it only up to a small bound."""
    data = [text.encode("utf-8", "backslashreplace") for text in streams]
    sizes = [(name, os.stat(os.path.join(folder, name)).st_size) for name in names]
    head = {"ok": ok, "streams": [len(part) for part in data], "files": sizes}
    _write_all(result_fd, json.dumps(head).encode("utf-8") + b"\n")
    for part in data:
        _write_all(result_fd, part)
    for name, size in sizes:
        with open(os.path.join(folder, name), "rb") as handle:
            while size > 0 and (chunk := handle.read(min(size, 1 << 20))):
                _write_all(result_fd, chunk)
                size -= len(chunk)


def _returned(written: list[str], config: dict) -> tuple[list[str], str]:
    """The files sent back (UTF-8 names, at most ``max_files``, saved images first) and the
    notes saying which were left out."""
    named = [name for name in written if _utf8(name)]
    unnamed = [name for name in written if not _utf8(name)]
    notes = ""
    if unnamed:
        shown = ", ".join(repr(name) for name in unnamed[:3]) + (", ..." if unnamed[3:] else "")
        notes = f"\nsandbox: {len(unnamed)} file(s) not kept, their names not UTF-8 ({shown})"
    limit = config["max_files"]
    if len(named) > limit:
        notes += (
            f"\nsandbox: kept {limit} of the {len(named)} files the code wrote "
            "(the limit of one call)"
        )
        saved = re.compile(config["saved_images"], re.IGNORECASE)
        named = sorted(named, key=lambda name: not saved.match(name))[:limit]
    return named, notes


def _utf8(name: str) -> bool:
    """Whether ``name`` is UTF-8 (a name that is not holds lone surrogates, which the report,
    UTF-8 JSON, cannot carry)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _free_descriptors(result_fd: int) -> None:
    """Close every descriptor the code left open but the result pipe and the standard streams:
    listing and sending its files needs some, and the code may hold all 64 the limit allows
    (``Image.open`` keeps each image's file open). No cyclic collection after this: a file
    object the code left in a cycle would close a descriptor number now reused here."""
    gc.disable()
    top = max(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 64)
    os.closerange(3, result_fd)
    os.closerange(max(result_fd + 1, 3), top)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _die_with(parent: int) -> None:
    """Be killed when the agent ends, whatever ends it (SIGKILL too). Only for
    ``--unsafe-sandbox``: under bwrap, ``--die-with-parent`` does this. Linux only; elsewhere
    nothing is armed."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the agent ended before the signal was armed
        os._exit(1)


def main() -> None:
    config = json.loads(sys.stdin.read())
    if config.get("die_with") is not None:
        _die_with(int(config["die_with"]))
    result_fd = int(config["result_fd"])
    source, workdir = config["source_dir"], config["workdir"]
    copied = source != workdir
    if copied:
        _copy_in(source, workdir)
    before = _snapshot(workdir)
    # Under bwrap the parent is bubblewrap's own init (pid 1), which the code can reach through
    # /proc/1/mem and make run anything: it gets the same limits.
    _limits(config, (0, 1) if copied else (0,))
    loaded = _preload(config["preload"])
    os.environ.clear()
    out, err = _Capture(config["max_output_chars"]), _Capture(config["max_output_chars"])
    namespace = _namespace(config["tool"], loaded)
    ok = True
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(config["code"], "<llm_code>", "exec"), namespace, {})  # noqa: S102
    except BaseException:  # noqa: BLE001 - every failure is reported to the model
        ok = False
        try:
            traceback.print_exc(file=err)
        except BaseException:  # noqa: BLE001 - e.g. no memory left to format it
            err.write("the code raised an exception that could not be printed\n")
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    _free_descriptors(result_fd)
    os.chdir(workdir)
    after = _snapshot(workdir) if copied else {}
    written = sorted(name for name, stamp in after.items() if before.get(name) != stamp)
    named, notes = _returned(written, config)
    _send(result_fd, ok, [out.value(), err.value() + notes], workdir, named)
    os._exit(0)


if __name__ == "__main__":
    main()
