"""Image files: naming by format, written byte-for-byte (never decoded, never re-encoded)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path, PurePosixPath
from typing import Any

from datbench_cli.files.jsonio import write_bytes_atomic

# (magic prefix, extension); WEBP is checked separately (RIFF....WEBP).
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"BM", "bmp"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
)
_KNOWN_SUFFIXES = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff"})


def extension_from_bytes(data: bytes | None) -> str:
    """The file extension for an image's bytes, from its magic number ("bin" if unknown)."""
    if not data:
        return "bin"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    for magic, ext in _SIGNATURES:
        if data.startswith(magic):
            return ext
    return "bin"


def extension_for(data: bytes | None, path_hint: str | None = None) -> str:
    """Extension from the original file name when it is a known image suffix, else the bytes."""
    if path_hint:
        suffix = PurePosixPath(path_hint).suffix.lower().lstrip(".")
        if suffix in _KNOWN_SUFFIXES:
            return suffix
    return extension_from_bytes(data)


def image_cell_bytes(cell: Any) -> tuple[bytes, str | None] | None:
    """The original bytes of an undecoded image cell ``{"bytes", "path"}``, with its path.

    When ``bytes`` is empty the file at ``path`` is read if it exists. ``None`` when the cell
    holds no image (or is not such a cell).
    """
    if not isinstance(cell, dict):
        return None
    hint = cell.get("path") if isinstance(cell.get("path"), str) else None
    data = cell.get("bytes")
    if data:
        return bytes(data), hint
    if hint and Path(hint).is_file():
        return Path(hint).read_bytes(), hint
    return None


def encode_png(image: Any) -> bytes:
    """PNG bytes of a decoded (PIL) image: the fallback when the original bytes are gone."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_if_changed(path: Path, data: bytes) -> None:
    """Write ``data`` atomically (no fsync: bulk image files), unless the file already holds
    exactly these bytes."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return
    write_bytes_atomic(path, data, durable=False)
