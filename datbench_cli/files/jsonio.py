"""JSON and JSONL input/output: orjson everywhere, line-numbered errors, atomic writes."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import socket
import stat
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from datbench_cli.errors import InputError, OutputError
from datbench_cli.runtime import interrupt

_BOM = b"\xef\xbb\xbf"
_TEMP_SUFFIX = ".tmp"
_GZIP_MAGIC = b"\x1f\x8b"
_UMASK_LOCK = threading.Lock()
# The most of a user-named input ever read, so that an endless one (/dev/zero, `yes` into a
# pipe) ends in one sentence: a JSON document (a report, an official results file), read
# whole into memory; a JSONL file, read line by line, in total. Both are replaced by
# DATBENCH_MAX_INPUT_MB (mebibytes) when it is set (see :func:`input_limit`).
MAX_DOCUMENT_BYTES = 512 << 20
MAX_JSONL_BYTES = 2 << 30
# The most lines of a JSONL file (blank ones too): an endless stream of short lines would
# otherwise fill memory with one small object per line long before the bytes run out (the
# bench's largest run has 50,000 samples).
MAX_JSONL_LINES = 4_000_000
LIMIT_VARIABLE = "DATBENCH_MAX_INPUT_MB"
# The longest JSONL line (an agent trajectory with its images is the largest).
MAX_LINE_BYTES = 256 << 20


def _default(value: Any) -> Any:
    """Serialise what orjson does not know: sets as lists, anything else as its ``str``."""
    if isinstance(value, set | frozenset):
        return list(value)
    return str(value)


def utf8_text(text: str) -> str:
    """``text`` as every output can hold it: a lone surrogate (a file or folder name that is
    not UTF-8, as Python decodes it) written as its ``\\udcXX`` escape, as messages show it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8_strings(value: Any) -> Any:
    """``value`` with every string in it (keys too) made :func:`utf8_text`."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, dict):
        return {_utf8_strings(k): _utf8_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_utf8_strings(v) for v in value]
    return value


def _dumps(obj: Any, option: int) -> bytes:
    """orjson's bytes; when a string holds a lone surrogate (a run directory named in Latin-1
    is recorded in the report), the same document with such strings made :func:`utf8_text`."""
    try:
        return orjson.dumps(obj, default=_default, option=option)
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
        return orjson.dumps(_utf8_strings(obj), default=_default, option=option)


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (non-string keys allowed, unknown types as ``str``)."""
    return _dumps(obj, orjson.OPT_NON_STR_KEYS)


def dumps_pretty(obj: Any) -> bytes:
    """Indented JSON bytes for human-read files (report, manifest)."""
    return _dumps(obj, orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2)


def input_limit(default: int) -> int:
    """``default``, or the limit ``DATBENCH_MAX_INPUT_MB`` sets (the one place it is read)."""
    value = os.environ.get(LIMIT_VARIABLE, "")
    return int(value) << 20 if value.isdigit() and int(value) > 0 else default


def _too_large(path: Path, limit: int, number: int | None = None) -> InputError:
    return InputError(
        f"is larger than {limit >> 20} MiB (an endless stream such as /dev/zero or `yes` "
        "into a pipe?); not reading further",
        path,
        number,
        hint=f"to read a larger file, set {LIMIT_VARIABLE} to its size in MiB",
    )


def _is_utf16(head: bytes | bytearray) -> bool:
    """Whether a file's first bytes are UTF-16 text (a byte order mark, or ASCII text with
    every other byte NUL, as a Windows editor or PowerShell's ``>`` writes it)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    sample = bytes(head[:64]).rstrip(b"\n")
    if len(sample) < 4:
        return False
    sample = sample[: len(sample) - len(sample) % 2]
    even, odd = sample[0::2], sample[1::2]
    return (odd.count(0) == len(odd) and 0 not in even) or (
        even.count(0) == len(even) and 0 not in odd
    )


def _utf16(path: Path, line: int | None = None) -> InputError:
    return InputError(
        "is UTF-16 text; datbench reads UTF-8",
        path,
        line,
        hint=f"convert it, e.g. iconv -f UTF-16 -t UTF-8 {path} > {path.stem}.utf8{path.suffix}",
    )


def read_bounded(path: Path, limit: int | None = None) -> bytearray:
    """The bytes of a user-named file read once, front to back (so a pipe or ``/dev/stdin``
    works), at most ``limit`` of them (by default :data:`MAX_DOCUMENT_BYTES`, see
    :func:`input_limit`): an endless or oversized input (``/dev/zero``) is an
    :class:`InputError` naming the file, never a memory error."""
    limit = limit if limit is not None else input_limit(MAX_DOCUMENT_BYTES)
    handle = _open_jsonl(path)
    data = bytearray()
    with handle:
        try:
            while chunk := handle.read(1 << 20):
                if not data and b"\0" in chunk:
                    raise (
                        _utf16(path, 1)
                        if _is_utf16(chunk)
                        else InputError(
                            "holds NUL bytes: binary data, not JSON text",
                            path,
                            chunk.count(b"\n", 0, chunk.index(b"\0")) + 1,
                        )
                    )
                data += chunk
                if len(data) > limit:
                    raise _too_large(path, limit)
        except OSError as exc:
            raise InputError(f"cannot read file ({exc.strerror})", path) from None
        except MemoryError:
            raise InputError("is too large for the memory available", path) from None
    return data


def read_json(path: Path) -> Any:
    """Read one JSON document (bounded, see :func:`read_bounded`); any problem becomes an
    :class:`InputError` naming the file."""
    data = read_bounded(path)
    if not data.removeprefix(_BOM).strip():
        raise InputError("is empty: no JSON document", path, 1)
    try:
        return orjson.loads(data.removeprefix(_BOM))
    except orjson.JSONDecodeError as exc:
        word = _non_finite(data.removeprefix(_BOM), exc)
        if word is not None:
            raise InputError(
                f"not valid JSON: {word} at column {_column(word, exc)}",
                path,
                exc.lineno,
                hint=NON_FINITE_HINT,
            ) from None
        raise InputError(
            f"not valid JSON ({exc.msg}, column {exc.colno})", path, exc.lineno
        ) from None
    except MemoryError:
        raise InputError("is too large to parse in the memory available", path) from None


def iter_jsonl_data(data: bytes | bytearray, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl` over bytes already read from ``path`` (a pipe cannot be read twice)."""
    for number, obj, _, _ in _spans(io.BytesIO(data), path, None):
        yield number, obj


def iter_jsonl(
    path: Path, on_torn_tail: Callable[[int], None] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Reads at most :data:`MAX_JSONL_BYTES` (see :func:`input_limit`) and
    :data:`MAX_JSONL_LINES` in all and :data:`MAX_LINE_BYTES` per line: past any, an
    :class:`InputError` naming the file and line, so an endless stream of short lines ends
    too. Accepts a UTF-8 BOM and CRLF line
    ends. A line that is not valid UTF-8 JSON, or whose value is
    not a JSON object, raises :class:`InputError` with the file and 1-based line number.

    With ``on_torn_tail``, a last line that has no line end and is not valid JSON (what a writer
    killed mid-line leaves; an appending writer always ends its lines) is passed to the callback
    by line number and skipped instead, but only after at least one complete line: a file that
    is nothing but one unterminated bad line (CR-only line ends, JSON objects glued together, a
    small gzip or other binary file) is an input error, never an empty file.
    """
    handle = _open_jsonl(path)
    for number, obj, _, _ in _spans(handle, path, on_torn_tail):
        yield number, obj


def iter_jsonl_lines(
    handle: IO[bytes],
    path: Path,
    on_torn_tail: Callable[[int], None] | None = None,
    on_read: Callable[[bytes], None] | None = None,
) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """:func:`iter_jsonl` over an open file (or pipe), each object with the raw bytes of its
    line (a first line's BOM left out); ``on_read`` is given every line read, blank, torn and
    BOM included, as it is read."""
    for number, obj, _, raw in _spans(handle, path, on_torn_tail, on_read):
        yield number, obj, raw


def open_jsonl(path: Path) -> IO[bytes]:
    """``path`` opened for reading; an :class:`InputError` naming it when it cannot be."""
    return _open_jsonl(path)


def _open_jsonl(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except FileNotFoundError:
        hint = "standard input is read as /dev/stdin" if str(path) == "-" else None
        raise InputError("file not found", path, hint=hint) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a JSONL file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", path) from None


def _spans(
    handle: IO[bytes],
    path: Path,
    on_torn_tail: Callable[[int], None] | None,
    on_read: Callable[[bytes], None] | None = None,
) -> Iterator[tuple[int, dict[str, Any], int, bytes]]:
    limit = input_limit(MAX_JSONL_BYTES)
    with handle:
        complete = 0
        offset = 0
        lines = iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b"")
        for number, raw in enumerate(lines, start=1):
            if offset + len(raw) > limit:
                raise _too_large(path, limit, number)
            if number > MAX_JSONL_LINES:
                raise InputError(
                    f"has more than {MAX_JSONL_LINES:,} lines (an endless stream such as `yes` "
                    "into a pipe?); not reading further",
                    path,
                    number,
                )
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(
                    f"line longer than {MAX_LINE_BYTES >> 20} MiB (an endless stream such as "
                    "/dev/zero?); not reading further",
                    path,
                    number,
                )
            if on_read is not None:
                on_read(raw)
            start = offset
            offset += len(raw)
            if number == 1:
                if raw.startswith(_GZIP_MAGIC):
                    raise InputError("is gzip-compressed, not JSONL; decompress it first", path, 1)
                if _is_utf16(raw):
                    raise _utf16(path, 1)
                if raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                    start += len(_BOM)
            line = raw.strip()
            if not line:
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                if on_torn_tail is not None and complete and not raw.endswith(b"\n"):
                    on_torn_tail(number)
                    return
                if not complete and line.startswith(b"["):  # a pretty-printed array
                    raise _json_array(path, number, line + handle.read(_PEEK)) from None
                word = _non_finite(line, exc)
                if word is not None:
                    raise InputError(
                        f"malformed JSON line: {word} at column {_column(word, exc)}",
                        path,
                        number,
                        hint=NON_FINITE_HINT,
                    ) from None
                raise InputError(_malformed(raw, exc), path, number) from None
            if isinstance(obj, list) and not complete:  # an array on one line
                raise _json_array(path, number, line)
            if not isinstance(obj, dict):
                kind = type(obj).__name__ if obj is not None else "null"
                raise InputError(f"expected a JSON object, got {kind}", path, number)
            complete += 1
            yield number, obj, start, raw


#: How much of a JSON array is looked at for what it holds (its first records).
_PEEK = 1 << 20


#: A benchmark's reader of a JSON array given for a JSON Lines file: given the array's first
#: bytes and the file, ``(message, hint)`` for a format it knows (an official runner's
#: results), else ``None``.
ArrayReader = Callable[[bytes, Path], "tuple[str, str] | None"]
_ARRAY_READERS: list[ArrayReader] = []


def recognise_arrays(*readers: ArrayReader) -> None:
    """Let the benchmarks name the JSON arrays they know (the benchmarks table does, once);
    this module knows no benchmark's format."""
    _ARRAY_READERS[:] = readers


def _json_array(path: Path, number: int, start: bytes) -> InputError:
    """A file that opens a JSON array (on one line, or pretty-printed; ``start``: its first
    bytes): no JSON Lines file. A format a benchmark knows is said as it says it (see
    :func:`recognise_arrays`); else the hint writes the lines beside it, never over it (a shell
    truncates its output first)."""
    for reader in _ARRAY_READERS:
        known = reader(bytes(start), path)
        if known is not None:
            return InputError(known[0], path, number, hint=known[1])
    name = path.stem + (".lines.jsonl" if path.suffix == ".jsonl" else ".jsonl")
    out = shlex.quote(str(path.with_name(name)))
    return InputError(
        "a JSON array, not JSON Lines: write one object per line",
        path,
        number,
        hint=f"jq -c '.[]' {shlex.quote(str(path))} > {out}",
    )


def _malformed(raw: bytes, exc: Exception) -> str:
    """The message for a line that is not JSON, naming the usual causes."""
    if b"\r" in raw.rstrip(b"\r\n"):
        return "malformed JSON line (the file seems to use CR-only line ends; use LF or CRLF)"
    if b"}{" in raw.replace(b" ", b""):
        return (
            "malformed JSON line (several JSON objects on one line? JSONL needs one object "
            "per line)"
        )
    if raw.strip() in (b"[", b"{"):
        return (
            "malformed JSON line (a pretty-printed JSON document? JSONL needs one object per line)"
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 (byte 0x{raw[bad.start]:02x}, column {bad.start + 1})"
    return f"malformed JSON line ({_short(exc)})"


# What Python's json module writes for a float that is not finite (unless allow_nan=False);
# no JSON parser reads them.
NON_FINITE_HINT = (
    "NaN and Infinity are not JSON (Python's json.dumps writes them unless allow_nan=False); "
    "write null instead"
)


def _non_finite(data: bytes | bytearray, exc: orjson.JSONDecodeError) -> str | None:
    """``NaN``, ``Infinity`` or ``-Infinity`` when that is where ``data`` stopped parsing."""
    rest = data[exc.pos :]
    for word in (b"NaN", b"Infinity"):
        if rest.startswith(word):
            negative = word == b"Infinity" and data[: exc.pos].endswith(b"-")
            return ("-" if negative else "") + word.decode()
    return None


def _column(word: str, exc: orjson.JSONDecodeError) -> int:
    """The column ``word`` starts at (the parser stops after the sign of ``-Infinity``)."""
    return exc.colno - word.startswith("-")


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into an :class:`OutputError` naming ``path``."""
    try:
        yield
    except OSError as exc:
        raise OutputError(path, exc) from None


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to the file descriptor ``fd`` (``os.write`` may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@functools.cache
def _host_tag() -> str:
    return f"{zlib.crc32(socket.gethostname().encode()):08x}"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (unknown counts as running)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def process_tag() -> str:
    """``<host>-<pid>``: names this process's temporary files and folders."""
    return f"{_host_tag()}-{os.getpid()}"


def is_stale_name(tagged: str) -> bool:
    """Whether ``tagged`` (``<host>-<pid>`` then anything after a dot) names a process of this
    host that is gone."""
    tag, _, pid = tagged.split(".", 1)[0].partition("-")
    return tag == _host_tag() and pid.isdigit() and not _alive(int(pid))


def remove_stale_temps(directory: Path, name: str) -> None:
    """Delete temporary files for ``name`` left in ``directory`` by killed writers.

    Only files made by :func:`make_temp` on this host whose process is gone are removed, so a
    concurrent writer's temporary file is never touched.
    """
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_TEMP_SUFFIX)):
            continue
        if is_stale_name(entry[len(prefix) :]):
            with contextlib.suppress(OSError):
                os.unlink(directory / entry)


def make_temp(directory: Path, name: str) -> tuple[int, Path]:
    """A new temporary file beside ``directory/name``: ``.<name>.<host>-<pid>.<random>.tmp``
    (unique even for concurrent writers); stale ones of killed writers are removed first."""
    remove_stale_temps(directory, name)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{name}.{process_tag()}.", suffix=_TEMP_SUFFIX, dir=directory
    )
    return fd, Path(tmp)


def _umask() -> int:
    """The process's umask (read without changing it where the system tells it)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets under the current umask (what ``open`` would give it)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """The mode a new folder gets under the current umask (what ``mkdir`` would give it)."""
    return 0o777 & ~_umask()


class StreamablePath(type(Path())):  # type: ignore[misc]
    """A user-named output path: when it is a character device or a pipe (``/dev/stdout``,
    ``/dev/null``, a FIFO, ``/proc/self/fd/1``) it is written directly, not replaced."""


def user_output(path: Path) -> Path:
    """Mark ``path`` as named by the user (see :class:`StreamablePath`)."""
    return StreamablePath(path)


def is_stream_output(path: Path) -> bool:
    """Whether a user-named output ``path`` is a character device or pipe written in place
    (``/dev/stdout``, ``/dev/null``, a FIFO), not a file to replace."""
    try:
        return _writes_directly(user_output(path))
    except OutputError:
        return False


# The folder of a process's descriptor links: /proc/<pid>/fd (or a thread's); on systems
# without /proc (macOS), /dev/fd itself, the calling process's descriptors.
_DESCRIPTOR_FOLDER = re.compile(r"/proc/[0-9]+(?:/task/[0-9]+)?/fd|/dev/fd")
_OWN_DESCRIPTOR_FOLDER = "/dev/fd"


def _descriptor_entry(path: Path) -> tuple[str, str] | None:
    """``(folder, name)`` of the ``/proc/<pid>/fd`` entry (``/dev/fd`` where it is a real
    folder, as on macOS) ``path`` is or leads to through links in ``/dev`` itself
    (``/dev/stdout``), else ``None``."""
    current = os.path.abspath(path)
    for _ in range(8):  # /dev/stdout -> /proc/self/fd/1 is one step; the bound is for safety
        folder = os.path.realpath(os.path.dirname(current))
        if _DESCRIPTOR_FOLDER.fullmatch(folder):
            return folder, os.path.basename(current)
        if folder != "/dev" or not os.path.islink(current):
            return None
        current = os.path.join(folder, os.readlink(current))
    return None


def is_descriptor_link(path: Path) -> bool:
    """Whether ``path`` is a link the system made to an open descriptor: ``/proc/self/fd/N``,
    ``/dev/fd/N``, or a link in ``/dev`` itself leading to one (``/dev/stdout``). A link a user
    made is not one, wherever it is (``/dev/shm`` is writable by everyone)."""
    return _descriptor_entry(path) is not None


def _own_descriptor(path: Path) -> int | None:
    """``N`` when ``path`` names this process's descriptor ``N`` (``/dev/stdout``: 1)."""
    entry = _descriptor_entry(path)
    if entry is None or not entry[1].isdigit():
        return None
    if entry[0] == _OWN_DESCRIPTOR_FOLDER:
        return int(entry[1])
    pid = int(entry[0].split("/")[2])
    return int(entry[1]) if pid == os.getpid() else None


def _open_in_place(path: Path) -> IO[bytes]:
    """``path`` opened to be written in place: this process's own descriptor (``/dev/stdout``)
    through a copy of it, so its offset and append mode hold (``-o /dev/stdout >> log``
    appends, where opening it anew would truncate the log); a device or pipe by name."""
    number = _own_descriptor(path)
    if number is not None:
        return os.fdopen(os.dup(number), "wb")
    return open(path, "wb")  # noqa: SIM115 - closed by the caller


def _existing_kind(path: Path, follow: bool) -> int | None:
    try:
        return (os.stat(path) if follow else os.lstat(path)).st_mode
    except OSError:
        return None


def _writes_directly(path: Path) -> bool:
    """Whether ``path`` is written in place rather than replaced by a renamed temporary file.

    A user-named character device or pipe (possibly behind a symlink such as ``/dev/stdout``) is
    written directly. Anything else that is not a regular file is refused: a device node is
    never replaced by a regular file, and a directory never written over. A symlink in a run
    directory is replaced, never written through.
    """
    user_named = isinstance(path, StreamablePath)
    own = _existing_kind(path, follow=False)
    if own is None:
        return False
    if stat.S_ISLNK(own):
        if not user_named:
            return False
        target = _existing_kind(path, follow=True)
        if target is None or stat.S_ISREG(target):
            # A descriptor link (/dev/stdout to a redirected file) is written through; any
            # other link is replaced, as in a run directory.
            return target is not None and is_descriptor_link(path)
        own = target
    if stat.S_ISREG(own):
        return False
    if user_named and (stat.S_ISCHR(own) or stat.S_ISFIFO(own)):
        return True
    if stat.S_ISDIR(own):
        raise OutputError(path, IsADirectoryError(21, "is a directory"))
    raise OutputError(
        path,
        OSError(
            0,
            "is a device, pipe or socket, not a regular file (datbench only replaces regular "
            "files; name a file)",
        ),
    )


class GuardedWriter:
    """A binary file being written whose write errors name the file (as :class:`OutputError`)."""

    def __init__(self, handle: IO[bytes], path: Path) -> None:
        self._handle = handle
        self.path = path

    def write(self, data: bytes) -> int:
        with writing(self.path):
            return self._handle.write(data)


@contextlib.contextmanager
def atomic_writer(path: Path, durable: bool = True) -> Iterator[GuardedWriter]:
    """Open a temporary file beside ``path``; on success (fsync it and) rename it into place.

    On any exception the temporary file is removed and ``path`` is left untouched; a failure to
    write (disk full, read-only directory) is an :class:`OutputError`. The rename alone makes the
    write atomic for every reader and against a killed process (whose temporary file the next
    writer of ``path`` removes); ``durable`` adds an fsync so the content also survives a power
    loss (skipped for bulk image files, where it would dominate the export time).

    The file gets the mode the umask allows (as ``open`` would create it). A user-named device
    or pipe is written directly (see :func:`user_output`); see :func:`_writes_directly`.
    """
    if _writes_directly(path):
        with writing(path):
            stream = _open_in_place(path)
        with stream:
            yield GuardedWriter(stream, path)
            with writing(path):
                stream.flush()
        return
    tmp: Path | None = None
    try:
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = make_temp(path.parent, path.name)
        handle = os.fdopen(fd, "wb")
        try:
            yield GuardedWriter(handle, path)
            with writing(path):
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
                handle.close()
        except BaseException:
            with contextlib.suppress(OSError):
                handle.close()
            raise
        interrupt.checkpoint()  # a Ctrl-C that Python dropped still keeps the old file
        with writing(path):
            os.chmod(tmp, file_mode())
            os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise


def save_target(path: Any) -> Path:
    """The file a report's ``save(path)`` writes: a ``TypeError`` naming ``path`` unless it is
    a string or a path object (not bytes, not a number), a ``ValueError`` for an empty string,
    which names no file (``Path("")`` is the current directory)."""
    if isinstance(path, Path):
        return path
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str):
        raise TypeError(f"path must be a str or a path object, got {type(path).__name__}")
    if not text:
        raise ValueError("path must name a file, got an empty string")
    return Path(text)


def write_bytes_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_writer`."""
    with atomic_writer(path, durable) as handle:
        handle.write(data)


def write_jsonl_atomic(path: Path, rows: Iterable[Any]) -> int:
    """Write one compact JSON line per row, atomically; return the number of lines."""
    count = 0
    with atomic_writer(path) as handle:
        for row in rows:
            handle.write(dumps(row))
            handle.write(b"\n")
            count += 1
    return count
