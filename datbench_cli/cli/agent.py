"""``datbench agent``: run the VisualToolBench tool loop against an OpenAI-compatible server."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.batch.endpoint import BaseUrl, choose_key
from datbench_cli.benchmarks import runners
from datbench_cli.benchmarks.runners import (
    DEFAULT_IMAGE_TRANSPORT,
    DEFAULT_MAX_TOOL_ROUNDS,
    DEFAULT_SERP_KEY_ENV,
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_WEATHER_KEY_ENV,
)
from datbench_cli.cli.common import (
    DirOpt,
    QuietOpt,
    RunDirArg,
    handle_errors,
    positional_directory,
)
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed, name_ids
from datbench_cli.files.rundir import RunDir

_SANDBOX = "Sandbox"
_SERVER = "Server"


@handle_errors
def agent(
    base_url: Annotated[
        str,
        typer.Option(
            help="The server, e.g. http://localhost:8000/v1.",
            show_default=False,
            rich_help_panel=_SERVER,
        ),
    ],
    model: Annotated[
        str,
        typer.Option(
            help="Model name sent with each request.", show_default=False, rich_help_panel=_SERVER
        ),
    ],
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding the server's API key (sent to --base-url's "
            "host); by default $OPENAI_API_KEY, sent only to https://api.openai.com.",
            show_default=False,
            rich_help_panel=_SERVER,
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Turns in flight at once.")] = 4,
    max_tool_rounds: Annotated[
        int,
        typer.Option(
            min=1,
            help="Rounds with tool calls before the turn answers the official 'maximum' literal.",
        ),
    ] = DEFAULT_MAX_TOOL_ROUNDS,
    system_prompt: Annotated[
        str,
        typer.Option(
            help="System prompt level: high (official default), mid, low, medium (official quirk: none), none."
        ),
    ] = DEFAULT_SYSTEM_PROMPT,
    temperature: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Sampling temperature (default: the official rule, 1.0 for reasoning-model names, else 0).",
            show_default=False,
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            min=1, help="max_tokens of each request (officially not set).", show_default=False
        ),
    ] = None,
    image_transport: Annotated[
        str,
        typer.Option(
            help="jpeg-q85 (official: re-encode every image) or original (the exported bytes)."
        ),
    ] = DEFAULT_IMAGE_TRANSPORT,
    web_tools: Annotated[
        bool,
        typer.Option(
            "--web-tools",
            help="Offer google_search, browser_get_page_text and historical_weather (uses the network and your keys).",
        ),
    ] = False,
    serp_api_key_env: Annotated[
        str, typer.Option(help="Environment variable with the SerpAPI key (google_search).")
    ] = DEFAULT_SERP_KEY_ENV,
    openweather_key_env: Annotated[
        str, typer.Option(help="Environment variable with the OpenWeatherMap key.")
    ] = DEFAULT_WEATHER_KEY_ENV,
    code_tools: Annotated[
        bool,
        typer.Option(
            "--code-tools/--no-code-tools",
            help="Offer the two Python tools (sandboxed).",
            rich_help_panel=_SANDBOX,
        ),
    ] = True,
    unsafe_sandbox: Annotated[
        bool,
        typer.Option(
            "--unsafe-sandbox",
            help="Run the Python tools WITHOUT bubblewrap (limits only; the code can read and "
            "change what you can). Recorded in agent.json and shown by score.",
            rich_help_panel=_SANDBOX,
        ),
    ] = False,
    tool_cpu_seconds: Annotated[
        int, typer.Option(min=1, help="CPU seconds per code call.", rich_help_panel=_SANDBOX)
    ] = 60,
    tool_wall_seconds: Annotated[
        float,
        typer.Option(min=0.1, help="Wall-clock seconds per code call.", rich_help_panel=_SANDBOX),
    ] = 120.0,
    tool_memory_mb: Annotated[
        int, typer.Option(min=64, help="Address-space MB per code call.", rich_help_panel=_SANDBOX)
    ] = 2048,
    tool_file_mb: Annotated[
        int,
        typer.Option(
            min=1, help="Largest file a code call may write, MB.", rich_help_panel=_SANDBOX
        ),
    ] = 64,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds one attempt may take, from connecting to the answer's last byte.",
            rich_help_panel=_SERVER,
        ),
    ] = 600.0,
    max_retries: Annotated[
        int,
        typer.Option(
            min=0, help="Retries of one request on 429, 5xx, timeouts.", rich_help_panel=_SERVER
        ),
    ] = 6,
    max_backoff: Annotated[
        float,
        typer.Option(min=0, help="Longest wait before a retry, seconds.", rich_help_panel=_SERVER),
    ] = 60.0,
    run_dir_arg: RunDirArg = None,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Answer every exported VisualToolBench turn with the official tool loop.

    \b
    Example:
      datbench agent vtb/ --base-url http://127.0.0.1:8000/v1 --model MODEL

    The official runs used this tool-calling loop: Python image processing whose saved images
    are shown back to the model, a Python interpreter, web search, web-page text, historical
    weather and a calculator, at most 20 tool-calling rounds, a system prompt urging
    crop/zoom/enhance, images as JPEG q85 and temperature 0 (1.0 for reasoning models); the
    final assistant text of each turn is what gets judged.

    Writes responses.jsonl (what make-judge-tasks and score read), trajectories.jsonl (one per
    turn) and agent.json (settings, tools, comparability). Rerunning continues where a stopped
    run left off. Exit 1 when some turns errored (rerun to retry them).
    """
    out = Output(quiet)
    run = RunDir(positional_directory(run_dir, run_dir_arg))
    runners.require_agent(run)
    config, notes = runners.build_agent_config(
        model=model,
        system_prompt=system_prompt,
        max_tool_rounds=max_tool_rounds,
        temperature=temperature,
        max_tokens=max_tokens,
        image_transport=image_transport,
        code_tools=code_tools,
        web_tools=web_tools,
        unsafe_sandbox=unsafe_sandbox,
        serp_key_env=serp_api_key_env,
        weather_key_env=openweather_key_env,
        limits=runners.Limits(
            cpu_seconds=tool_cpu_seconds,
            wall_seconds=tool_wall_seconds,
            memory_mb=tool_memory_mb,
            file_mb=tool_file_mb,
        ),
        concurrency=concurrency,
    )
    key = choose_key(BaseUrl.parse(base_url), api_key_env, os.environ)
    if key.note:
        (out.info if key.withheld else out.warn)(key.note)
    client = runners.ChatClient(
        runners.ServerConfig(
            base_url,
            key.key,
            timeout,
            max_retries,
            1.0,
            max_backoff,
            connections=concurrency,
            key_withheld=key.withheld,
        )
    )
    for note in notes:
        out.warn(note)
    out.info(f"tools: {', '.join(config.tools.available)}")
    progress: dict[str, int] = {"done": 0}
    bar: list[Callable[..., None]] = []

    def on_plan(result: runners.AgentResult, pending: int) -> None:
        progress["pending"] = pending
        if bar:
            bar[0](0, total=pending)
        out.info(
            f"{result.turns} turn(s): {result.already_done} already answered by this agent, "
            f"{result.answered_elsewhere} by another runner, running {pending}"
        )

    def advance_counted(n: int = 1, total: int | None = None) -> None:
        progress["done"] += n
        bar[0](n, total)

    try:
        with out.progress("turns", None, rate_unit="turn") as advance:
            bar.append(advance)
            result = runners.run_agent(
                run, config, client, warn=out.warn, advance=advance_counted, on_plan=on_plan
            )
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the same kind, what was kept said
        raise type(stop)(
            f"{progress['done']} turn(s) finished in this run are kept in {run.root} "
            "(trajectories.jsonl, responses.jsonl); run the same command again to continue"
        ) from None
    finally:
        client.close()
    for message in result.repaired:
        out.warn(message)
    if result.recovered:
        out.info(
            f"{result.recovered} committed answer(s) of this agent copied to responses.jsonl, "
            "which lacked them (a run stopped between the two writes, or the file was replaced)"
        )
    if not quiet:
        out.data(
            f"{result.answered} answered ({result.max_rounds} hit the tool-round limit), "
            f"{result.errored} errored, {result.already_done} already answered"
        )
    if result.errored_ids:
        raise CheckFailed(
            f"{result.errored} turn(s) errored: {name_ids(result.errored_ids)}; run the same command again to retry them"
        )
