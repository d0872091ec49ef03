"""A report's results a slice at a time, so a leaderboard of many large runs never holds a
whole parsed report (a 205,000-sample DatBench report is ~200 MB of JSON and several times
that as Python objects).

Reports as ``datbench score`` writes them (two-space indented, ``results`` last) are cut at the
boundaries between result entries (``\\n    },\\n    {\\n``: JSON strings hold no raw
newline, so it occurs nowhere else), about 2 MB at a time, and each slice handed on as the bytes of a JSON
array (the benchmark's columnar reader decodes only the fields it needs; :func:`parse` reads
it whole). Any other layout, and any slice that does not parse, is read whole instead
(:func:`whole`), which also gives the exact error message for a malformed file.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.compare.inputs import RunReport, checked_run, load_run, locate

_START = b'\n  "results": ['
_BOUNDARY = b"\n    },\n    {\n"
_SLICE_BYTES = 2 << 20  # a few thousand entries


class NotStreamable(Exception):
    """The report is not in the layout :func:`streamed` reads."""


def whole(given: Path) -> tuple[RunReport, Iterator[bytes | list[Any]]]:
    """The report read whole, its results as one slice (already parsed)."""
    run = load_run(given)
    return run, iter([run.results])


def streamed(given: Path) -> tuple[RunReport, Iterator[bytes | list[Any]]]:
    """The report's head (``results`` empty) and its results in slices (each the bytes of a
    JSON array of entries); raises :class:`NotStreamable` for another layout (before any
    slice)."""
    report_path, manifest = locate(given)
    if not report_path.is_file():  # a pipe or device: read once, front to back, whole
        raise NotStreamable
    with report_path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            raise NotStreamable
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    start = data.find(_START)
    end = data.rfind(b"]")
    if start < 0 or data.find(_START, start + 1) >= 0 or end < start:
        raise NotStreamable
    if data[end:].strip() != b"]\n}" and data[end:].strip() != b"]}":
        raise NotStreamable
    head_bytes = data[:start].rstrip()
    if not head_bytes.endswith(b","):
        raise NotStreamable
    try:
        head = orjson.loads(head_bytes[:-1] + b"}")
    except orjson.JSONDecodeError as exc:
        raise NotStreamable from exc
    if not isinstance(head, dict) or "results" in head:
        raise NotStreamable
    run = checked_run(given, report_path, {**head, "results": []}, manifest)
    return run, _slices(data, start + len(_START), end)


def parse(piece: bytes) -> list[Any]:
    """A slice's entries; raises :class:`NotStreamable` when it does not parse."""
    try:
        entries = orjson.loads(piece)
    except orjson.JSONDecodeError as exc:
        raise NotStreamable from exc
    if not isinstance(entries, list):
        raise NotStreamable
    return entries


def _slices(data: mmap.mmap, begin: int, end: int) -> Iterator[bytes | list[Any]]:
    """Slices of about :data:`_SLICE_BYTES`, each cut at the first boundary past that size."""
    first = begin
    while True:
        at = data.find(_BOUNDARY, first + _SLICE_BYTES, end) if first + _SLICE_BYTES < end else -1
        if at < 0:
            if data[first:end].strip():
                yield b"[" + data[first:end] + b"]"
            return
        yield b"[" + data[first : at + 6] + b"]"  # through "\n    }"
        first = at + 8  # from "    {"
