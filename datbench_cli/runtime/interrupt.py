"""Ctrl-C is never lost.

Python drops an exception raised where it cannot propagate (inside a ``__del__``, a weakref or
garbage-collector callback: "Exception ignored in ..."), so the ``KeyboardInterrupt`` of a
Ctrl-C that lands there vanishes and the command would run on to a normal end, exit 0, and
replace its outputs. The command-line program installs :func:`remember_ctrl_c`; the places
that commit work (renaming an output into place, appending a line to a log, claiming an
export, each step a progress bar counts) call :func:`checkpoint`, which raises the
``KeyboardInterrupt`` again when a press was swallowed. In library use nothing is installed
and :func:`checkpoint` never raises.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

_pressed = False


def _on_sigint(signum: int, frame: Any) -> None:
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


def remember_ctrl_c() -> None:
    """Make Ctrl-C (SIGINT) remembered as well as raised; only where Python's own handler is
    installed (a caller's handler, or SIGINT ignored, is left alone)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def pressed() -> bool:
    """Whether Ctrl-C was pressed since :func:`remember_ctrl_c` (swallowed or not)."""
    return _pressed


def checkpoint() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed, even when its first one was dropped."""
    if _pressed:
        raise KeyboardInterrupt
