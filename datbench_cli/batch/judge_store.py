"""The answered lines of a judge-response file, for scoring, without one object per line.

:class:`JudgeStore` is to a judge file what
:class:`~datbench_cli.batch.response_store.ResponseStore` is to a response file: it reads the
file once with the rules of :func:`~datbench_cli.batch.responses.load_judge_responses` (plus
the digest a line without one takes from its judge task, as
:func:`~datbench_cli.benchmarks.datbench.stages.read_judge_responses` gives it) and keeps, per
answered line, its id, line number and raw bytes in the run store; a judge response is parsed
again from those bytes when its sample is scored.
Judge responses already in memory (the Python API) go into the same kind of store
(:func:`held_judges`). A store answers by *position* among the answered lines; the last line
of an id counts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from datbench_cli.batch.answers import JudgeResponse, plain_judge
from datbench_cli.batch.line_keys import JUDGE_KEYS
from datbench_cli.batch.response_store import AnsweredLines, read_answered, stored_line
from datbench_cli.batch.responses import LoadedResponses, ResponseLine
from datbench_cli.files.run_store import unknown

_TEXT, _PARSED = "raw_judge_output", "verdict"


class JudgeStore(AnsweredLines):
    """A judge file's answered lines in the run store (see the module docstring); build it
    with :func:`load_judge_store` and use it as a context manager. A line's extra value is the
    digest it took from its judge task, if any."""

    fields = (_TEXT, _PARSED)
    table_name = "judges"

    def parser(self) -> Callable[[tuple[int, bytes, Any]], JudgeResponse]:
        """A function (picklable) from a value of :meth:`raws` to the judge response."""
        return self._parser(line_judge)

    def line_ids(self) -> Iterator[str]:
        """The id of every answered line, in file order (an id answered twice comes twice)."""
        return self.lines.ids()


def held_judges(judges: Iterable[JudgeResponse]) -> JudgeStore:
    """Judge responses in memory (the Python API) in a private store."""
    store = JudgeStore(None)
    store.hold(map(plain_judge, judges), lambda _: None)
    return store


def line_judge(path: Path, raw: tuple[int, bytes, Any]) -> JudgeResponse:
    """The judge response of a stored line (see :meth:`JudgeStore.raws`; its extra value is
    the digest it took from its judge task, if any)."""
    line = stored_line(path, JudgeStore.fields, raw[0], raw[1])
    digest = line.digest if line.digest is not None else raw[2]
    return JudgeResponse(line.id, line.text or "", line.parsed, response_digest=digest)


def load_judge_store(
    path: Path,
    task_digests: Mapping[str, str] | None = None,
    db: sqlite3.Connection | None = None,
    scan: Callable[[bytes], None] | None = None,
) -> tuple[JudgeStore, LoadedResponses]:
    """The answered lines of a judge-response file as a :class:`JudgeStore` (a table of
    ``db``, or of a private store of its own), and what was set aside (``errored_ids``,
    ``truncated_ids``, the torn last line and unknown keys; no judge responses and no
    statuses: the store has them). A line without a digest takes the one of its judge task in
    ``task_digests`` (id -> digest). ``scan`` is given every line read."""
    store = JudgeStore(path, db)
    digests = task_digests or {}

    def filled(line: ResponseLine) -> str | None:
        return digests.get(line.id) if line.digest is None else None

    try:
        return store, read_answered(store, JUDGE_KEYS, filled, scan)
    except BaseException:
        store.close()
        raise


def unknown_ids(
    judges: JudgeStore,
    errored_ids: Iterable[str],
    samples_of: Callable[[Sequence[str]], Collection[str]],
) -> list[str]:
    """The judge ids (answered, then errored) that are no sample's, each once, in the order
    they first appear (see :func:`~datbench_cli.files.run_store.unknown`)."""
    return unknown(chain(judges.line_ids(), errored_ids), samples_of)
