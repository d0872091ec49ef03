"""Runners some benchmarks bring: a tool-using agent, and importers of an official runner's
output files. The commands resolve them from the run directory's benchmark through the one
benchmarks table (its optional members `has_agent`, `imports_official`), never by name.

Only VisualToolBench has either today; a benchmark without one gets a clear usage error.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datbench_cli.benchmarks.base import Benchmark
from datbench_cli.benchmarks.vistoolbench.agent import images as _images
from datbench_cli.benchmarks.vistoolbench.agent import protocol as _protocol
from datbench_cli.errors import UsageError
from datbench_cli.files.rundir import RunDir

if TYPE_CHECKING:
    from datbench_cli.benchmarks.vistoolbench.agent.run import AgentResult, run_agent
    from datbench_cli.benchmarks.vistoolbench.agent.sandbox import Limits
    from datbench_cli.benchmarks.vistoolbench.agent.setup import build_config as build_agent_config
    from datbench_cli.benchmarks.vistoolbench.agent.transport import ChatClient, ServerConfig
    from datbench_cli.benchmarks.vistoolbench.official_import import ImportResult

__all__ = [
    "AgentResult",
    "ChatClient",
    "ImportResult",
    "Limits",
    "ServerConfig",
    "build_agent_config",
    "import_official_results",
    "require_agent",
    "run_agent",
]

DEFAULT_MAX_TOOL_ROUNDS = _protocol.DEFAULT_MAX_TOOL_ROUNDS
DEFAULT_SYSTEM_PROMPT = _protocol.DEFAULT_SYSTEM_PROMPT
DEFAULT_IMAGE_TRANSPORT = _images.JPEG_Q85
DEFAULT_SERP_KEY_ENV = _protocol.DEFAULT_SERP_KEY_ENV
DEFAULT_WEATHER_KEY_ENV = _protocol.DEFAULT_WEATHER_KEY_ENV

# The agent's machinery (HTTP client, sandbox, tools) is imported on first use, so commands
# that never run an agent (score, export) do not pay for it at start-up.
_LAZY = {
    "AgentResult": ("datbench_cli.benchmarks.vistoolbench.agent.run", "AgentResult"),
    "run_agent": ("datbench_cli.benchmarks.vistoolbench.agent.run", "run_agent"),
    "Limits": ("datbench_cli.benchmarks.vistoolbench.agent.sandbox", "Limits"),
    "build_agent_config": ("datbench_cli.benchmarks.vistoolbench.agent.setup", "build_config"),
    "ChatClient": ("datbench_cli.benchmarks.vistoolbench.agent.transport", "ChatClient"),
    "ServerConfig": ("datbench_cli.benchmarks.vistoolbench.agent.transport", "ServerConfig"),
    "ImportResult": ("datbench_cli.benchmarks.vistoolbench.official_import", "ImportResult"),
}


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value
    return value


def _benchmark(run: RunDir) -> Benchmark:
    from datbench_cli.benchmarks import of_run

    return of_run(run)


def _names(has: Callable[[Benchmark], bool]) -> str:
    from datbench_cli.benchmarks import BENCHMARKS

    return ", ".join(sorted(name for name, b in BENCHMARKS.items() if has(b)))


def require_agent(run: RunDir) -> None:
    """Refuse a run directory whose benchmark has no tool-using agent."""
    bench = _benchmark(run)
    if not bench.has_agent:
        raise UsageError(
            f"{run.root} was exported for {bench.name!r}, which has no tool-using agent "
            f"(available for: {_names(lambda b: b.has_agent)})"
        )


def import_official_results(path: Path, run: RunDir) -> ImportResult:
    """The run directory's responses from an official runner's output file."""
    bench = _benchmark(run)
    if not bench.imports_official:
        raise UsageError(
            f"{run.root} was exported for {bench.name!r}; import-responses reads the official "
            f"runner files of: {_names(lambda b: b.imports_official)}"
        )
    return bench.import_official(path, run)  # type: ignore[no-any-return]
