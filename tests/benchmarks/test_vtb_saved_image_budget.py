"""The images the model's code saves are sent within a budget per turn: their JPEG re-encoding
can be far larger than their files (a 1.4 MB PNG of 64 megapixels became 44 MB of JPEG; 12
of them in one call made a 713 MB request)."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image

from datbench_cli.benchmarks.vistoolbench.agent import images, loop


def _noise(seed: int) -> bytes:
    generator = random.Random(seed)
    image = Image.frombytes("RGB", (200, 200), generator.randbytes(200 * 200 * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_saved_images_past_the_budget_are_neither_decoded_nor_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    saved = [(f"transformed_image_{i}.png", _noise(i)) for i in range(4)]
    size = images.encode(saved[0][1], images.JPEG_Q85).size
    decoded: list[int] = []
    real = images.encode
    monkeypatch.setattr(images, "encode", lambda data, how: decoded.append(1) or real(data, how))
    conversation = loop._Conversation(images.JPEG_Q85, saved_budget=int(size * 1.5))
    # The turn's own images are the task's: always sent, never counted.
    conversation.add_user("prompt", saved[:2], plain=False)
    described = conversation.add_user("saved", saved, plain=False, saved=True)
    parts = conversation.messages[-1]["content"]
    assert [part["type"] for part in parts] == ["text", "image_url", "text", "text", "text"]
    assert parts[2]["text"] == (
        "[transformed_image_1.png was not sent: the images saved in this turn are over the limit]"
    )
    assert [item.get("note") for item in described] == [None, *["not sent: over the limit"] * 3]
    assert len(decoded) == 2 + 2  # the turn's two, then the one sent and the one too large
    # The budget is spent for the rest of the turn.
    conversation.add_user("later", saved[:1], plain=False, saved=True)
    assert conversation.messages[-1]["content"][1]["type"] == "text"
