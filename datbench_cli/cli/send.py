"""``datbench send``: OpenAI request files -> an OpenAI-compatible server -> batch output lines."""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.batch.endpoint import DEFAULT_KEY_ENV, BaseUrl, choose_key, shown_url
from datbench_cli.batch.requests import REQUESTS_DIR
from datbench_cli.batch.sender import (
    DEFAULT_MAX_RESPONSE_BYTES,
    OutputFile,
    SendConfig,
    SendResult,
    check_request_paths,
    plan_send,
    send_requests,
    usable_concurrency,
)
from datbench_cli.cli.common import QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed, UsageError, name_ids
from datbench_cli.files.outputs import guard_output, locked_runs
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES

_MIB = 1024 * 1024
_OUTPUT_BY_STEM = {"tasks": RESPONSES, "judge_tasks": JUDGE_RESPONSES}


def default_output(requests: list[Path], run_dir: Path | None) -> Path:
    """``responses.jsonl`` for task requests, ``judge_responses.jsonl`` for judge requests, in
    ``--dir`` or else the run directory holding the ``requests/`` folder (else ``.``); files
    of several folders need ``--dir`` or ``--out``."""
    found = {_OUTPUT_BY_STEM.get(p.name.split(".openai.")[0]) for p in requests}
    names = {name for name in found if name is not None}
    if len(found) != 1 or len(names) != 1:
        raise UsageError(
            "cannot tell from the request file names whether they are tasks or judge tasks; "
            "pass --out/-o"
        )
    if run_dir is None:
        parents = {p.resolve().parent for p in requests}
        if len(parents) > 1:
            raise UsageError(
                f"the request files lie in {len(parents)} folders, so no one run directory "
                "holds their answers; send each run's files on their own, or pass --out/-o"
            )
        folder = parents.pop()
        run_dir = folder.parent if folder.name == REQUESTS_DIR else Path(".")
    return run_dir / names.pop()


@handle_errors
def send(
    requests: Annotated[
        list[Path],
        typer.Argument(
            help="OpenAI request files (e.g. requests/tasks.openai.*.jsonl).", show_default=False
        ),
    ],
    base_url: Annotated[
        str,
        typer.Option(
            help="The API root, e.g. http://localhost:8000/v1 (requests go to "
            "<root>/chat/completions, joined as the OpenAI SDK does).",
            show_default=False,
        ),
    ],
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help=f"Environment variable holding this server's API key, sent as a Bearer token "
            f"(default: ${DEFAULT_KEY_ENV}, sent only to https://api.openai.com).",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight at once.")] = 8,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output file, appended to (default: responses.jsonl or judge_responses.jsonl "
            "in the run directory, from the request file names).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Replace the model name of every request.", show_default=False),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds one attempt may take, from connecting to the answer's last byte.",
        ),
    ] = 600.0,
    max_response_mb: Annotated[
        float,
        typer.Option(
            "--max-response-mb",
            min=0.001,
            help="Largest answer accepted, in MiB (at most 255); a larger one is that request's error line.",
        ),
    ] = DEFAULT_MAX_RESPONSE_BYTES / _MIB,
    max_retries: Annotated[
        int, typer.Option(min=0, help="Retries of one request on 429, 5xx and timeouts.")
    ] = 6,
    max_backoff: Annotated[
        float,
        typer.Option(min=0, help="Longest wait before a retry, in seconds (caps Retry-After too)."),
    ] = 60.0,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            "-d",
            help="Run directory for the default output (default: the folder holding requests/).",
            show_default=False,
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Send request files to an OpenAI-compatible server and append its answers.

    \b
    Example:
      datbench send run/requests/tasks.*.jsonl --base-url http://localhost:8000/v1

    Answers go to responses.jsonl (judge requests: judge_responses.jsonl) in the run
    directory, as batch output lines. Ids already answered there are skipped, so an interrupted
    run continues where it stopped when the same command is run again. Exit 1 when some
    requests still failed.
    """
    out = Output(quiet)
    if not math.isfinite(max_response_mb):
        raise UsageError(f"--max-response-mb must be a number, got {max_response_mb}")
    check_request_paths(requests)
    key = choose_key(BaseUrl.parse(base_url), api_key_env, os.environ)
    config = SendConfig(
        base_url=base_url,
        api_key=key.key,
        model=model,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        backoff_max=max_backoff,
        max_response_bytes=max(1, int(max_response_mb * _MIB)),
        key_withheld=key.withheld,
    )
    if key.note:
        (out.info if key.withheld else out.warn)(key.note)
    target = out_path if out_path is not None else default_output(requests, run_dir)
    guard_output(target, "send", requests, option="the output" if out_path is None else "--out")
    with (
        locked_runs("send", [target]),
        OutputFile(target, named=out_path is not None) as output,
    ):
        _send(out, requests, output, config, base_url)


def _send(
    out: Output, requests: list[Path], output: OutputFile, config: SendConfig, base_url: str
) -> None:
    target = output.path
    plan = plan_send(requests, output, config.model)
    workers, note = usable_concurrency(config.concurrency, plan.pending)
    if note:
        out.warn(note)
    config = dataclasses.replace(config, concurrency=workers)
    if plan.repaired_tail:
        out.warn(f"{target}: {plan.repaired_tail}")
    if plan.duplicate_ids:
        out.warn(
            f"{len(plan.duplicate_ids)} duplicate custom_id(s) in the request files are sent "
            f"once: {name_ids(plan.duplicate_ids)}"
        )
    for (asked, answered), ids in plan.other_model.items():
        out.warn(
            f"{len(ids)} answer(s) already in {target} came from model {_short(answered)}, "
            f"not {_short(asked)}: they are kept and not sent again ({name_ids(ids)}); give "
            f"--out a new file to ask {_short(asked)}"
        )
    out.info(
        f"{plan.total - len(plan.duplicate_ids)} request(s): {plan.already_answered} already "
        f"answered in {target}, sending {plan.pending} to {shown_url(base_url)}"
    )
    live = SendResult()
    told: set[str] = set()
    told_lock = threading.Lock()

    def on_retry(endpoint: str, problem: str, code: str | None, delay: float) -> None:
        # Said at once, once per kind of trouble; the counts show how it goes on.
        with told_lock:
            if (code or problem) in told:
                return
            told.add(code or problem)
        if code == "connect_error":
            out.warn(
                f"{shown_url(endpoint)}: {problem}: is the server running? Retrying each "
                f"request up to {_times(config.max_retries)} (Ctrl-C stops; answers so far are "
                "kept)"
            )
        else:
            out.warn(
                f"{shown_url(endpoint)}: {problem}; retrying (up to {_times(config.max_retries)})"
            )

    def status() -> str:
        return f"{live.answered} answered, {len(live.failed_ids)} failed, {live.retrying} retrying"

    try:
        with out.progress("sending", plan.pending, rate_unit="req", status=status) as advance:
            result = send_requests(
                requests, output, config, plan, advance=advance, counts=live, on_retry=on_retry
            )
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the same kind, what was kept said
        if not target.is_file():  # a pipe or device (-o /dev/stdout): nothing to resume from
            raise type(stop)(f"{live.answered} answer(s) of this run written to {target}") from None
        raise type(stop)(
            f"kept in {target}: {_lines(target)} whole line(s) ({live.answered} answered in "
            "this run); run the same command again to send the rest (failed ones are tried "
            "again)"
        ) from None
    if not out.quiet:
        out.data(
            f"{result.answered} answered ({result.truncated} cut at max_tokens), "
            f"{len(result.failed_ids)} failed, {plan.already_answered} already answered; "
            f"output: {target}"
        )
    if result.failed_ids:
        filtered = ""
        if result.filtered_ids:
            filtered = (
                f" ({len(result.filtered_ids)} of them prompts the service's content filter "
                f"refused, which a retry gets again: {name_ids(result.filtered_ids)})"
            )
        raise CheckFailed(
            f"{len(result.failed_ids)} request(s) failed: {name_ids(result.failed_ids)}; "
            f"run the same command again to retry them{filtered}"
        )


def _short(model: str) -> str:
    """A model name as said in a message: quoted, cut at 80 characters."""
    return repr(model if len(model) <= 80 else model[:80] + "...")


def _lines(path: Path) -> int:
    """The number of whole lines in ``path`` (0 when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return 0


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"
