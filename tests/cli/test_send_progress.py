"""`send` to a server that refuses connections says so at once (not only after every retry),
and the retry counts it shows come from the sender's live counts."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.cli_helpers import SAMPLE, run_cli


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_connection_is_said_before_the_run_stops(tmp_path: Path) -> None:
    run = tmp_path / "run"
    exported = run_cli(
        "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run), "--format", "openai",
        "--model", "m", "--limit", "2", "-q",
    )  # fmt: skip
    assert exported.exit_code == 0, exported.stderr
    requests = sorted((run / "requests").glob("tasks.openai.*.jsonl"))
    result = run_cli(
        "send", *map(str, requests), "--base-url", f"http://127.0.0.1:{closed_port()}/v1",
        "--max-retries", "2", "--max-backoff", "0", "--concurrency", "1",
    )  # fmt: skip
    lines = result.stderr.splitlines()
    warned = [i for i, line in enumerate(lines) if "is the server running?" in line]
    assert len(warned) == 1, result.stderr  # once, not once per request or retry
    assert "Connection refused" in lines[warned[0]] or "refused" in lines[warned[0]]
    assert "up to 2 times" in lines[warned[0]]
    once = run_cli(
        "send", *map(str, requests), "--base-url", f"http://127.0.0.1:{closed_port()}/v1",
        "--max-retries", "1", "--max-backoff", "0", "--concurrency", "1",
    )  # fmt: skip
    assert "request up to once (" in once.stderr, once.stderr  # not "up to 1 times"
    stopped = [i for i, line in enumerate(lines) if line.startswith("error: stopped")]
    assert stopped and warned[0] < stopped[0]
    assert "running the same command again continues" in result.stderr


def test_live_counts_track_retrying_requests() -> None:
    from datbench_cli.batch.sender import SendConfig, SendResult, _Attempt, _Client

    calls: list[tuple[str, str | None]] = []
    counts = SendResult()
    seen: list[int] = []

    def on_retry(endpoint: str, problem: str, code: str | None, delay: float) -> None:
        calls.append((problem, code))
        seen.append(counts.retrying)

    config = SendConfig(base_url="http://127.0.0.1:9/v1", max_retries=2, backoff_max=0)
    client = _Client(config, lambda _s: None, counts, on_retry)
    answers = iter([_Attempt(503, {}, "", problem="HTTP 503: busy", code="http_503")] * 2)

    def post(url: str, data: bytes) -> _Attempt:
        return next(answers, _Attempt(200, {"choices": []}, ""))

    client._post = post  # type: ignore[method-assign]
    try:
        reply = client.send("a", "/v1/chat/completions", {"messages": []})
    finally:
        client.close()
    assert reply.line is not None
    assert calls == [("HTTP 503: busy", "http_503")] * 2
    assert seen == [1, 1]  # counted once while it waits, however many retries
    assert counts.retrying == 0  # and no longer once it is answered
