"""Image files: naming by format, written byte-for-byte (never decoded, never re-encoded)."""

from __future__ import annotations

from pathlib import PurePosixPath

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
