"""The nine DatBench capabilities (each a config of the hub dataset) and the default source."""

from __future__ import annotations

CAPABILITIES = (
    "chart",
    "counting",
    "document",
    "general",
    "grounding",
    "math",
    "scene",
    "spatial",
    "table",
)
DEFAULT_DATBENCH_SOURCE = "DatologyAI/DatBench"
