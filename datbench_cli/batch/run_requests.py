"""A run directory's OpenAI request files: ``requests/tasks.openai.NNNNN.jsonl`` from
tasks.jsonl and ``requests/<judge stem>.openai.NNNNN.jsonl`` from judge task lines.

The benchmark says what a task's inference units are and what its judge sees; this module only
writes the part files (and removes stale ones when no request format is asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from datbench_cli.batch.digests import DIGEST_FIELD, tag_id
from datbench_cli.batch.requests import (
    REQUESTS_DIR,
    InferenceUnit,
    RequestSettings,
    judge_request,
    part_name,
    remove_parts,
    task_requests,
    write_parts,
)
from datbench_cli.errors import UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import run_root_of
from datbench_cli.files.rundir import JUDGE_DIGESTS, TASKS, RunDir
from datbench_cli.files.staging import check_replaceable

UnitsOf = Callable[[dict[str, Any]], Iterable[InferenceUnit]]
JudgeTextOf = Callable[[dict[str, Any]], str]

# The stem of export-tasks's request files: requests/tasks.openai.NNNNN.jsonl.
TASK_STEM = "tasks"


def check_judge_stem(out: Path) -> None:
    """Refuse a judge-tasks output whose request files would be the export's task requests
    (``-o elsewhere/tasks.jsonl`` would replace, or without ``--format openai`` delete,
    ``requests/tasks.openai.*.jsonl``), or that is a run directory's judge_digests.json (the
    guard lets make-judge-tasks write it, but not as its judge tasks)."""
    if out.name == JUDGE_DIGESTS and run_root_of(out) is not None:
        raise UsageError(
            f"--out {out} is the run directory's {JUDGE_DIGESTS}, where make-judge-tasks "
            "records what the judge was asked about; name the judge tasks otherwise "
            "(e.g. judge_tasks.jsonl)"
        )
    # Its parts read as the export's to everyone (send, a re-export) when their name before
    # ".openai." is "tasks": ``-o tasks.openai.jsonl`` too, and ``-o
    # requests/tasks.openai.00001.jsonl`` is itself an export's request file.
    if part_name(out.name.removesuffix(".jsonl"), 1).split(".openai.")[0] == TASK_STEM:
        raise UsageError(
            f"--out {out}: it or its request files would be requests/{TASK_STEM}.openai.*.jsonl, "
            "the model's requests that export-tasks wrote; name the judge tasks otherwise "
            "(e.g. judge_tasks.jsonl)"
        )


def check_judge_outputs(run: RunDir, out: Path) -> None:
    """Refuse, before anything is written, what :func:`write_judge_requests` would refuse
    after the judge tasks are written: the stem of ``out`` (:func:`check_judge_stem`), or a
    run directory's ``requests`` that is a link or a file (even without request files,
    stale ones are removed from it)."""
    check_judge_stem(out)
    check_replaceable(run.path(REQUESTS_DIR))


def write_task_requests(
    run: RunDir,
    settings: RequestSettings | None,
    units_of: UnitsOf,
    named: RunDir | None = None,
    *,
    text_first: bool = False,
) -> list[Path]:
    """``requests/tasks.openai.NNNNN.jsonl`` from the run's tasks.jsonl; without
    ``settings``, stale task request files are removed. ``named``: the run directory that
    ``--image-mode file`` URLs name (``run`` being an export's private folder); ``text_first``:
    each user message puts its prompt before its images."""
    directory = run.path(REQUESTS_DIR)
    check_replaceable(directory)
    if settings is None:
        remove_parts(directory, TASK_STEM)
        return []
    rows = (
        request
        for _, task in jsonio.iter_jsonl(run.path(TASKS))
        for request in task_requests(
            units_of(task), run.root, settings, named.root if named else None, text_first
        )
    )
    return write_parts(directory, TASK_STEM, rows, max_bytes=settings.max_file_bytes)


def custom_id(line: dict[str, Any]) -> str:
    """The ``custom_id`` of a judge request: ``<id>#<response digest>`` when the judge task
    records the digest of the judged response, which every batch runner's output carries back,
    so a verdict stays matched to the text it judged."""
    digest = line.get(DIGEST_FIELD)
    return tag_id(line["id"], digest) if isinstance(digest, str) else line["id"]


def write_judge_requests(
    run: RunDir,
    out: Path,
    lines: list[dict[str, Any]],
    settings: RequestSettings | None,
    text_of: JudgeTextOf,
    *,
    response_format: dict[str, Any] | None = None,
) -> list[Path]:
    """``requests/<out stem>.openai.NNNNN.jsonl``: one text-only request per judge task line
    (``text_of(line)`` is what the judge sees); without ``settings``, stale request files of
    that stem are removed."""
    check_judge_stem(out)
    directory, stem = run.path(REQUESTS_DIR), out.name.removesuffix(".jsonl")
    check_replaceable(directory)
    try:
        if settings is None:
            remove_parts(directory, stem)
            return []
        rows = (
            judge_request(custom_id(line), text_of(line), settings, response_format=response_format)
            for line in lines
        )
        return write_parts(directory, stem, rows, max_bytes=settings.max_file_bytes)
    except KeyboardInterrupt as stop:  # ``out`` is already the new one: say so
        raise type(stop)(
            f"{out} was written, its request files were not ({directory}/{stem}.openai.* "
            "may be the earlier ones); run the same command again"
        ) from None
