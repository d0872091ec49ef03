"""The retry counts `send` shows come from the sender's live counts (a refusal mid-run, said
once: tests/batch/test_server_reachability.py)."""

from __future__ import annotations


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
