"""JSON and JSONL input/output: orjson everywhere, line-numbered errors, atomic writes."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from datbench_cli.errors import InputError, OutputError

_BOM = b"\xef\xbb\xbf"
_TEMP_SUFFIX = ".tmp"


def _default(value: Any) -> Any:
    """Serialise what orjson does not know: sets as lists, anything else as its ``str``."""
    if isinstance(value, set | frozenset):
        return list(value)
    return str(value)


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (non-string keys allowed, unknown types as ``str``)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS)


def dumps_pretty(obj: Any) -> bytes:
    """Indented JSON bytes for human-read files (report, manifest)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2)


def read_json(path: Path) -> Any:
    """Read one JSON document; any problem becomes an :class:`InputError` naming the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", path) from None
    try:
        return orjson.loads(data.removeprefix(_BOM))
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc})", path) from None


def iter_jsonl(
    path: Path, on_torn_tail: Callable[[int], None] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Accepts a UTF-8 BOM and CRLF line ends. A line that is not valid UTF-8 JSON, or whose value is
    not a JSON object, raises :class:`InputError` with the file and 1-based line number.

    With ``on_torn_tail``, a last line that has no line end and is not valid JSON (what a writer
    killed mid-line leaves; an appending writer always ends its lines) is passed to the callback
    by line number and skipped instead.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a JSONL file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", path) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(_BOM)
            line = raw.strip()
            if not line:
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                if on_torn_tail is not None and not raw.endswith(b"\n"):
                    on_torn_tail(number)
                    return
                raise InputError(f"malformed JSON line ({_short(exc)})", path, number) from None
            if not isinstance(obj, dict):
                kind = type(obj).__name__ if obj is not None else "null"
                raise InputError(f"expected a JSON object, got {kind}", path, number)
            yield number, obj


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


def remove_stale_temps(directory: Path, name: str) -> None:
    """Delete temporary files for ``name`` left in ``directory`` by killed writers.

    Only files made by :func:`make_temp` on this host whose process is gone are removed, so a
    concurrent writer's temporary file is never touched.
    """
    prefix, host = f".{name}.", _host_tag()
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_TEMP_SUFFIX)):
            continue
        tag, _, pid = entry[len(prefix) :].split(".", 1)[0].partition("-")
        if tag == host and pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(directory / entry)


def make_temp(directory: Path, name: str) -> tuple[int, Path]:
    """A new temporary file beside ``directory/name``: ``.<name>.<host>-<pid>.<random>.tmp``
    (unique even for concurrent writers); stale ones of killed writers are removed first."""
    remove_stale_temps(directory, name)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{name}.{_host_tag()}-{os.getpid()}.", suffix=_TEMP_SUFFIX, dir=directory
    )
    return fd, Path(tmp)


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
    """
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
        with writing(path):
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise


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
