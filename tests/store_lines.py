"""Reading one line of a response or judge store back, as the tests check it."""

from __future__ import annotations

from typing import Any

from datbench_cli.batch.response_store import AnsweredLines


def line_at(store: Any, position: int) -> Any:
    """The parsed line at ``position`` of ``store`` (a response or judge store)."""
    return store.parser()(store.raws([position])[0])


def last_line(store: AnsweredLines, ident: str) -> Any:
    """The parsed last line of ``ident`` in ``store`` (``None``: no line has it)."""
    position = store.last_by_id().get(ident)
    return None if position is None else line_at(store, position)
