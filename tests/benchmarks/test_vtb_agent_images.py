"""The images the model's code saves are read by the agent's own process, outside the sandbox:
only plain raster formats are decoded, and none past the pixel cap."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from PIL import EpsImagePlugin, Image

from datbench_cli.benchmarks.vistoolbench.agent import images

EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n(pwned) print {} loop\n"


def test_postscript_never_reaches_ghostscript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PIL's EPS reader ran Ghostscript on the model's PostScript, outside every namespace,
    # with the agent's environment (its API keys).
    marker = tmp_path / "ran"
    gs = tmp_path / "gs"
    gs.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    gs.chmod(0o755)
    monkeypatch.setattr(EpsImagePlugin, "gs_binary", str(gs))
    for transport in images.TRANSPORTS:
        sent = images.encode(EPS, transport)
        assert sent.mime == "application/octet-stream"
        assert "unreadable image" in (sent.note or "")
    assert not marker.exists()
    # The reader would have run it: the fake Ghostscript is the one PIL calls.
    with Image.open(io.BytesIO(EPS)) as image, pytest.raises(subprocess.CalledProcessError):
        image.load()
    assert marker.exists()


def test_an_image_past_the_pixel_cap_is_sent_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # A 21 KB PNG of 13300 x 13300 pixels took the agent to 1.4 GB when decoded.
    monkeypatch.setattr(images, "MAX_PIXELS", 10_000)
    buffer = io.BytesIO()
    Image.new("1", (101, 100)).save(buffer, format="PNG")
    data = buffer.getvalue()
    sent = images.encode(data, images.JPEG_Q85)
    assert (sent.mime, sent.size, sent.width, sent.height) == ("image/png", len(data), 101, 100)
    assert "not decoded" in (sent.note or "")
    small = io.BytesIO()
    Image.new("1", (100, 100)).save(small, format="PNG")
    assert images.encode(small.getvalue(), images.JPEG_Q85).mime == "image/jpeg"


def test_a_jpeg_of_too_many_scans_is_sent_as_it_is() -> None:
    # Each scan of a progressive JPEG is a pass over the whole image: 536 KB of one scan
    # repeated 3,000 times over 8000 x 8000 pixels took the agent's decoder 127 s.
    buffer = io.BytesIO()
    Image.new("L", (64, 64), 128).save(buffer, format="JPEG", progressive=True)
    data = buffer.getvalue()
    last = data.rindex(b"\xff\xda")
    scans = data[:last] + data[last:-2] * 150 + data[-2:]
    sent = images.encode(scans, images.JPEG_Q85)
    assert (sent.mime, sent.size) == ("image/jpeg", len(scans))
    count = scans.count(b"\xff\xda")
    assert count > 150
    assert sent.note == f"JPEG of {count} scans over 64 x 64 pixels: not decoded"
    assert images.encode(data, images.JPEG_Q85).note is None  # an encoder's own few scans
    # Fewer scans over more pixels cost as much: bounded by scans times pixels too.
    big = io.BytesIO()
    Image.new("L", (8000, 8000), 128).save(big, format="JPEG", progressive=True)
    data = big.getvalue()
    last = data.rindex(b"\xff\xda")
    assert images.encode(data[:last] + data[last:-2] * 11 + data[-2:], images.JPEG_Q85).note


def test_a_multi_picture_jpeg_of_too_many_scans_is_sent_as_it_is() -> None:
    # PIL opens a JPEG with a multi-picture (MPF) header as an MPO: the scan bound applied to
    # "JPEG" only, and a 94 KB MPO of 1,000 scans over 4000 x 4000 pixels took 15 s.
    buffer = io.BytesIO()
    first, second = Image.new("L", (64, 64), 128), Image.new("L", (8, 8))
    first.save(buffer, format="MPO", save_all=True, append_images=[second], progressive=True)
    data = buffer.getvalue()
    end = data.index(b"\xff\xd9\xff\xd8")  # the first picture's end, the second's start
    last = data.rindex(b"\xff\xda", 0, end)
    scans = data[:last] + data[last:end] * 150 + data[end:]
    with Image.open(io.BytesIO(scans)) as image:
        assert image.format == "MPO"
    sent = images.encode(scans, images.JPEG_Q85)
    assert sent.size == len(scans)
    count = scans.count(b"\xff\xda")
    assert sent.note == f"JPEG of {count} scans over 64 x 64 pixels: not decoded"
    assert images.encode(data, images.JPEG_Q85).note is None  # the encoder's own scans
