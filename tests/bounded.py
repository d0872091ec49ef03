"""A time bound for tests that check something *finishes*: a hang fails the test, never the suite.

:func:`within` runs a function in a forked child and returns its result; when the child takes
longer than the bound it is killed and the test fails. (A timeout is never a pass.)
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def within(seconds: float, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, run in a forked child that must finish within ``seconds``."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def child() -> None:
        try:
            result: tuple[str, Any] = ("ok", function(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent to re-raise
            result = ("raised", exc)
        try:
            sender.send(result)
        except Exception:  # noqa: BLE001 - an unpicklable result or exception
            sender.send(("raised", AssertionError(f"{result[0]}: {result[1]!r}")))

    process = context.Process(target=child)
    process.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            raise AssertionError(f"did not finish within {seconds} s")
        kind, value = receiver.recv()
    except EOFError:
        raise AssertionError(f"the child died ({process.exitcode})") from None
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    if kind == "raised":
        raise value
    return value
