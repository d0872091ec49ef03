"""JSON and JSONL input/output: orjson everywhere, line-numbered errors, atomic writes."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from datbench_cli.errors import InputError

_BOM = b"\xef\xbb\xbf"


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
def atomic_writer(path: Path, durable: bool = True) -> Iterator[IO[bytes]]:
    """Open a temporary file beside ``path``; on success (fsync it and) rename it into place.

    On any exception the temporary file is removed and ``path`` is left untouched. The rename
    alone makes the write atomic for every reader and against a killed process; ``durable``
    adds an fsync so the content also survives a power loss (skipped for bulk image files, where
    it would dominate the export time).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
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
