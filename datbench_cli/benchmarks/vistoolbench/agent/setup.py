"""From command-line choices to an :class:`AgentConfig`: which tools, how isolated (bubblewrap is
probed here, before the first request), which keys."""

from __future__ import annotations

import os

from datbench_cli.benchmarks.vistoolbench.agent import images, protocol, web
from datbench_cli.benchmarks.vistoolbench.agent.loop import LoopSettings
from datbench_cli.benchmarks.vistoolbench.agent.run import AgentConfig
from datbench_cli.benchmarks.vistoolbench.agent.sandbox import (
    Limits,
    SandboxUnavailable,
    detect_isolation,
)
from datbench_cli.benchmarks.vistoolbench.agent.settings import available_packages
from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings
from datbench_cli.errors import UsageError

DEFAULT_SERP_KEY_ENV = protocol.DEFAULT_SERP_KEY_ENV
DEFAULT_WEATHER_KEY_ENV = protocol.DEFAULT_WEATHER_KEY_ENV


def _key(name: str) -> str | None:
    return os.environ.get(name) or None


def build_config(
    *,
    model: str,
    system_prompt: str,
    max_tool_rounds: int,
    temperature: float | None,
    max_tokens: int | None,
    image_transport: str,
    code_tools: bool,
    web_tools: bool,
    unsafe_sandbox: bool,
    serp_key_env: str,
    weather_key_env: str,
    limits: Limits,
    concurrency: int,
) -> tuple[AgentConfig, list[str]]:
    """The run's configuration and the notes to show the user."""
    if system_prompt not in protocol.SYSTEM_PROMPTS:
        choices = ", ".join(protocol.SYSTEM_PROMPTS)
        raise UsageError(f"--system-prompt must be one of {choices}, got {system_prompt!r}")
    if image_transport not in images.TRANSPORTS:
        raise UsageError(f"--image-transport must be one of {', '.join(images.TRANSPORTS)}")
    if max_tool_rounds < 1:
        raise UsageError("--max-tool-rounds must be at least 1")
    if temperature is not None and not 0 <= temperature <= 2:  # nan too: sent as null
        raise UsageError(f"--temperature must be a number from 0 to 2, got {temperature}")
    notes: list[str] = []
    available = [protocol.CALCULATOR_TOOL]
    isolation = None
    if code_tools:
        try:
            isolation = detect_isolation(unsafe=unsafe_sandbox)
        except SandboxUnavailable as exc:
            raise UsageError(
                f"{exc}, so the Python tools cannot run isolated",
                hint=f"{exc.fix}; or pass --unsafe-sandbox to run them without isolation, "
                "or --no-code-tools",
            ) from None
        if isolation.bwrap is None:
            notes.append(
                "the Python tools run WITHOUT a sandbox (--unsafe-sandbox): model code can read "
                "and change what this user can"
            )
        available += list(protocol.CODE_TOOLS)
    keys = web.WebKeys()
    if web_tools:
        keys = web.WebKeys(_key(serp_key_env), _key(weather_key_env))
        available += list(protocol.WEB_TOOLS)
        for name, env in (
            (protocol.SEARCH_TOOL, serp_key_env),
            (protocol.WEATHER_TOOL, weather_key_env),
        ):
            if _key(env) is None:
                notes.append(f"{env} is not set: {name} answers every call with an error")
    ordered = tuple(name for name in protocol.OFFICIAL_TOOLS if name in available)
    loop = LoopSettings(
        model=model,
        system_prompt=system_prompt,
        max_tool_rounds=max_tool_rounds,
        temperature=protocol.temperature_for(model) if temperature is None else temperature,
        max_tokens=max_tokens,
        image_transport=image_transport,
    )
    tools = ToolSettings(ordered, limits, isolation, keys, tuple(available_packages()))
    record = {
        "web_tool_keys": {"serp_api": serp_key_env, "openweather": weather_key_env}
        if web_tools
        else None
    }
    return AgentConfig(loop, tools, concurrency, record), notes
