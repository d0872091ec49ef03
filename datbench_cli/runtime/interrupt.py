"""Ctrl-C is never lost.

Python drops an exception raised where it cannot propagate (inside a ``__del__``, a weakref or
garbage-collector callback: "Exception ignored in ..."), so the ``KeyboardInterrupt`` of a
Ctrl-C that lands there vanishes and the command would run on to a normal end, exit 0, and
replace its outputs. The command-line program runs each command in :func:`remembering_ctrl_c`; the places
that commit work (renaming an output into place, appending a line to a log, claiming an
export, each step a progress bar counts) call :func:`checkpoint`, which raises the
``KeyboardInterrupt`` again when a press was swallowed, and the dropped one is not printed
("Exception ignored ..." and its traceback would break the one-line error). In library use
nothing is installed and :func:`checkpoint` never raises.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

_pressed = False


def _on_sigint(signum: int, frame: Any) -> None:
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def remembering_ctrl_c() -> Iterator[None]:
    """Inside the block Ctrl-C (SIGINT) is remembered as well as raised; afterwards the
    previous handler is back and the press forgotten (a program that runs several commands in
    one process starts each afresh). Only where Python's own handler is installed: a caller's
    handler, SIGINT ignored, or a thread other than the main one are left alone."""
    global _pressed
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    previous_hook = sys.unraisablehook

    def drop_remembered(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous_hook(unraisable)  # remembered presses are raised again at a checkpoint

    sys.unraisablehook = drop_remembered
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _pressed = False


def pressed() -> bool:
    """Whether Ctrl-C was pressed inside :func:`remembering_ctrl_c` (swallowed or not)."""
    return _pressed


def checkpoint() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed, even when its first one was dropped."""
    if _pressed:
        raise KeyboardInterrupt
