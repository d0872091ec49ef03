"""The Quick Start's import name: ``from datbench import DatBenchEvaluator, VLMResponse, ...``.

The library is :mod:`datbench_cli`; this module gives its public names (``datbench_cli.__all__``)
under the name the DatBench evaluation library's documentation uses, loaded when first used.
"""

from __future__ import annotations

from typing import Any

import datbench_cli

__all__ = list(datbench_cli.__all__)


def __getattr__(name: str) -> Any:
    """A public name of :mod:`datbench_cli`."""
    if name not in __all__:
        raise AttributeError(f"module 'datbench' has no attribute {name!r}")
    return getattr(datbench_cli, name)


def __dir__() -> list[str]:
    return sorted(__all__)
