"""Ctrl-C (and SIGTERM) is never lost.

Python drops an exception raised where it cannot propagate (inside a ``__del__``, a weakref or
garbage-collector callback: "Exception ignored in ..."), so the ``KeyboardInterrupt`` of a
Ctrl-C that lands there vanishes and the command would run on to a normal end, exit 0, and
replace its outputs. The command-line program runs each command in :func:`remembering_ctrl_c`; the places
that commit work (renaming an output into place, appending a line to a log, claiming an
export, each step a progress bar counts) call :func:`checkpoint`, which raises the
``KeyboardInterrupt`` again when a press was swallowed, and the dropped one is not printed
("Exception ignored ..." and its traceback would break the one-line error). In library use
nothing is installed and :func:`checkpoint` never raises.

SIGTERM (what ``timeout``, ``kill``, a batch scheduler or a container runtime sends) stops a
command the same way, as :class:`Terminated`, a ``KeyboardInterrupt``: its temporary files are
removed, its locks released and what it kept named, where the default action would end the
process on the spot and leave them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


class Terminated(KeyboardInterrupt):
    """A SIGTERM, stopping a command the way Ctrl-C does (exit status 143, not 130)."""


# What a press inside remembering_ctrl_c raised (None: nothing was pressed).
_pressed: type[KeyboardInterrupt] | None = None


# The process that installed the handlers (a child forked meanwhile inherits them).
_owner = 0


def _on_signal(signum: int, frame: Any) -> None:
    global _pressed
    if os.getpid() != _owner:
        # A worker forked meanwhile, before its own set-up (which ignores Ctrl-C and lets
        # SIGTERM end it): do what it would.
        if signum == signal.SIGTERM:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        return
    _pressed = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    raise _pressed


@contextlib.contextmanager
def remembering_ctrl_c() -> Iterator[None]:
    """Inside the block Ctrl-C (SIGINT) and SIGTERM are remembered as well as raised;
    afterwards the previous handlers are back and the press forgotten (a program that runs
    several commands in one process starts each afresh). Each signal only where Python's own
    handling is in place (SIGINT: its handler; SIGTERM: the default action), in the main
    thread: a caller's handler or an ignored signal is left alone, and a job started in the
    background, which ignores SIGINT, still cleans up after a SIGTERM."""
    global _pressed, _owner
    main = threading.current_thread() is threading.main_thread()
    ours = [
        (number, default)
        for number, default in (
            (signal.SIGINT, signal.default_int_handler),
            (signal.SIGTERM, signal.SIG_DFL),
        )
        if main and signal.getsignal(number) is default
    ]
    if not ours:
        yield
        return
    _owner = os.getpid()
    for number, _ in ours:
        signal.signal(number, _on_signal)
    previous_hook = sys.unraisablehook

    def drop_remembered(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous_hook(unraisable)  # remembered presses are raised again at a checkpoint

    sys.unraisablehook = drop_remembered
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for number, default in ours:
            signal.signal(number, default)
        _pressed = None


def pressed() -> bool:
    """Whether Ctrl-C (or SIGTERM) came inside :func:`remembering_ctrl_c` (swallowed or not)."""
    return _pressed is not None


def checkpoint() -> None:
    """Raise ``KeyboardInterrupt`` (:class:`Terminated` for a SIGTERM) if Ctrl-C was pressed,
    even when its first one was dropped."""
    if _pressed is not None:
        raise _pressed
