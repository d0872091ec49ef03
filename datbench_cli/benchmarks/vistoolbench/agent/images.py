"""How images travel to the model: the official JPEG q85 re-encoding, or the original bytes."""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass
from typing import Any

JPEG_Q85 = "jpeg-q85"
ORIGINAL = "original"
TRANSPORTS = (JPEG_Q85, ORIGINAL)

_MIME = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
}
# The model's code writes the images this process reads: PIL tries only these raster formats
# (its EPS reader runs Ghostscript on the file, outside the sandbox, with this process's
# environment), and decodes none larger than this (a 21 KB PNG of 13300 x 13300 pixels took
# 1.4 GB); either is sent as it is, with a note.
_FORMATS = tuple(_MIME)
MAX_PIXELS = 64_000_000
# A progressive JPEG's decoder runs over the whole image once per scan: a 536 KB file of 8000 x
# 8000 pixels with its last scan repeated 3,000 times took 127 s (about 0.7 ms a scan and
# megapixel). An encoder writes about ten scans; libjpeg-turbo's djpeg offers a scan bound too
# (-maxscans). Both bounds: at most 100 scans, and 640 scans x megapixels (about half a second).
MAX_JPEG_SCANS = 100
MAX_JPEG_SCAN_PIXELS = 640_000_000
_SOS = b"\xff\xda"  # a scan's start marker (0xFF in the entropy-coded data is stuffed)
# PIL's JPEG reader opens a JPEG with a multi-picture header as an MPO, decoded the same way
# (a 94 KB MPO of 1,000 scans over 4000 x 4000 pixels took 15 s).
_JPEGS = ("JPEG", "MPO")


@dataclass(frozen=True)
class SentImage:
    """One image as sent: its data URL, and what the trajectory records instead of the data."""

    url: str
    mime: str
    sha256: str
    size: int
    width: int | None
    height: int | None
    note: str | None = None

    def record(self, name: str) -> dict[str, Any]:
        """The trajectory's description of this image (no pixel data)."""
        return {
            "name": name,
            "mime": self.mime,
            "sha256": self.sha256,
            "bytes": self.size,
            "width": self.width,
            "height": self.height,
            **({"note": self.note} if self.note else {}),
        }


def _sent(data: bytes, mime: str, size: tuple[int, int] | None, note: str | None) -> SentImage:
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    width, height = size if size else (None, None)
    return SentImage(url, mime, hashlib.sha256(data).hexdigest(), len(data), width, height, note)


def _too_many_scans(scans: int, size: tuple[int, int]) -> bool:
    return scans > MAX_JPEG_SCANS or scans * size[0] * size[1] > MAX_JPEG_SCAN_PIXELS


def encode(data: bytes, transport: str) -> SentImage:
    """``data`` ready to send. ``jpeg-q85`` converts to RGB and re-encodes as JPEG quality 85
    (the official transport); an image PIL cannot read (or may not: see :data:`_FORMATS`) is
    sent as it is, as officially."""
    from PIL import Image  # only `agent` sends images: kept out of every other start-up

    try:
        with Image.open(io.BytesIO(data), formats=_FORMATS) as image:
            fmt, size = image.format or "", image.size
            note = None
            if size[0] * size[1] > MAX_PIXELS:
                note = f"image of {size[0]} x {size[1]} pixels, over {MAX_PIXELS:,}: not decoded"
            elif fmt in _JPEGS and _too_many_scans(scans := data.count(_SOS), size):
                note = f"JPEG of {scans} scans over {size[0]} x {size[1]} pixels: not decoded"
            if note is not None:
                return _sent(data, _MIME.get(fmt, "application/octet-stream"), size, note)
            if transport == JPEG_Q85:
                rgb = image if image.mode == "RGB" else image.convert("RGB")
                buffer = io.BytesIO()
                rgb.save(buffer, format="JPEG", quality=85, optimize=True)
                return _sent(buffer.getvalue(), "image/jpeg", size, None)
    except Exception as exc:  # noqa: BLE001 - PIL raises more than OSError on a hostile file
        # (SyntaxError for a broken PNG chunk, NotImplementedError, AttributeError, ...): the
        # model's code saves what it likes, and it must not end the turn.
        return _sent(data, "application/octet-stream", None, f"unreadable image: {exc}")
    return _sent(data, _MIME.get(fmt, "application/octet-stream"), size, None)
