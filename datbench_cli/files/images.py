"""Image files: naming by format, written byte-for-byte (never decoded, never re-encoded).

An image cell's ``path`` (read when its ``bytes`` are empty) is read only from inside the
dataset's own folders (:class:`DatasetFiles`): a path to ``/etc/passwd``, ``/proc/self/environ``
or ``../..`` is a dataset defect, never copied into a run directory or a request file.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


class ImageOutsideDataset(Exception):
    """An image cell's ``path`` names a file outside the dataset's folders (a dataset defect)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"image path {path[:200]!r} lies outside the dataset's folder; only files inside "
            "it are read"
        )


@dataclass(frozen=True)
class DatasetFiles:
    """The folders an image cell's ``path`` may name: the dataset's own (its local copy, or its
    hub cache folder). A relative path is taken inside the first folder; a path is resolved
    (symlinks followed, ``..`` removed) before it is checked."""

    roots: tuple[Path, ...]

    @classmethod
    def of(cls, folders: Sequence[Path]) -> DatasetFiles:
        return cls(tuple(Path(os.path.realpath(folder)) for folder in folders))

    def resolve(self, hint: str) -> Path | None:
        """The real path of ``hint`` if it lies inside a root (``None`` when no such file).

        Raises :class:`ImageOutsideDataset` for any path that leaves the roots.
        """
        given = Path(hint).expanduser()
        base = self.roots[0] if self.roots else Path.cwd()
        real = Path(os.path.realpath(given if given.is_absolute() else base / given))
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise ImageOutsideDataset(hint)
        return real if real.is_file() else None


def image_cell_bytes(
    cell: Any, files: DatasetFiles | None = None
) -> tuple[bytes, str | None] | None:
    """The original bytes of an undecoded image cell ``{"bytes", "path"}``, with its path.

    When ``bytes`` is empty the file at ``path`` is read if it exists, and with ``files`` only
    from inside the dataset's folders (else :class:`ImageOutsideDataset`); without ``files``
    (rows the caller built in memory) the path is the caller's own. ``None`` when the cell holds
    no image (or is not such a cell).
    """
    if not isinstance(cell, dict):
        return None
    hint = cell.get("path") if isinstance(cell.get("path"), str) else None
    data = cell.get("bytes")
    if data:
        return bytes(data), hint
    if not hint:
        return None
    if files is None:
        found: Path | None = Path(hint) if Path(hint).is_file() else None
    else:
        found = files.resolve(hint)
    if found is None:
        return None
    try:
        return found.read_bytes(), hint
    except OSError:
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
    from datbench_cli.files.jsonio import write_bytes_atomic  # jsonio imports this module

    write_bytes_atomic(path, data, durable=False)
