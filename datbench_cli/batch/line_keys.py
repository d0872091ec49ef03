"""Keys a native response line may carry, and a warning for the ones it should not.

A misspelt optional key (``parsed_answers``) would otherwise be ignored without a word; a whole
file of the wrong kind (judge responses given as responses, ``tasks.jsonl``) gets a hint that
names the right usage.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from datbench_cli.batch.digests import DIGEST_FIELD
from datbench_cli.errors import InputError
from datbench_cli.files.jsonio import iter_jsonl_lines, open_jsonl

Line = TypeVar("Line")

# Fields a runner may add that carry no meaning for scoring (``manifest_sha256``, the export a
# line was made against, is read by the report's provenance: docs/guide.md).
_TOLERATED = frozenset({"model", "usage", "created", "latency", "metadata", "manifest_sha256"})
RESPONSE_KEYS = frozenset(
    {"id", "raw_output", "parsed_answer", "error", "finish_reason", "refusal", "turns"}
)
JUDGE_KEYS = frozenset(
    {
        "id",
        "raw_judge_output",
        "verdict",
        DIGEST_FIELD,
        "error",
        "finish_reason",
        "refusal",
        "task_id",
        "turn_index",
        "rubric_id",
    }
)


class UnknownKeys:
    """Collects the keys of native lines that no reader uses, with the first line of each."""

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.seen: dict[str, int] = {}

    def check(self, obj: dict[str, Any], number: int) -> None:
        for key in obj:
            if key not in self.known and key not in _TOLERATED and key not in self.seen:
                self.seen[key] = number

    def message(self, path: object) -> str | None:
        """One warning for the whole file (``None`` when every key is known)."""
        if not self.seen:
            return None
        parts = []
        for key, number in self.seen.items():
            close = difflib.get_close_matches(key, sorted(self.known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            parts.append(f"{key!r} (first on line {number}{hint})")
        return f"{path}: unknown key(s) ignored: {', '.join(parts)}"


def torn_tail_message(path: Path, number: int) -> str:
    """The warning for a last line cut off mid-write (by a killed ``send``), which is ignored."""
    return (
        f"the last line of {path} (line {number}) is incomplete, as an interrupted writer "
        "leaves it, and was ignored (rerun `datbench send` to finish)"
    )


def torn_tail_warner(path: Path, warn: Callable[[str], None]) -> Callable[[int], None]:
    """The ``on_torn_tail`` callback of a reader of ``path`` that tells ``warn``."""
    return lambda number: warn(torn_tail_message(path, number))


def _is_reference_line(obj: dict[str, Any]) -> bool:
    """Whether a line holds answers, as only ``references.jsonl`` lines do (either benchmark)."""
    if "all_answers" in obj or "eval_metrics" in obj:
        return True
    turns = obj.get("turns")
    return isinstance(turns, list) and any(isinstance(t, dict) and "rubrics" in t for t in turns)


#: A benchmark's reader of a line given to the wrong command: the hint for a record of a
#: format it knows (an official runner's results), else ``None``.
LineReader = Callable[[dict[str, Any]], "str | None"]
_LINE_READERS: list[LineReader] = []


def recognise_lines(*readers: LineReader) -> None:
    """Let the benchmarks name the records of their own formats (the benchmarks table does,
    once); this module knows no benchmark's format."""
    _LINE_READERS[:] = readers


def wrong_file_hint(obj: dict[str, Any], judge: bool) -> str | None:
    """A hint when a line shows the file is of another kind than the command expects."""
    for reader in _LINE_READERS:
        # Before the others: a multi-turn official record also carries its turns' rubrics.
        hint = reader(obj)
        if hint is not None:
            return hint
    if not judge and ("raw_judge_output" in obj or "verdict" in obj):
        return "this looks like a judge-response file: pass it with --judge-responses"
    if judge and "raw_output" in obj:
        return "this looks like a model-response file: pass judge responses here"
    if "vlm_response" in obj and "judge_prompt" in obj:
        # Before the others: a judge task also carries the question and (DatBench) all_answers.
        kind = "its responses" if judge else "the model's responses"
        return f"this looks like judge_tasks.jsonl (the judge's input), not {kind}"
    if _is_reference_line(obj):
        kind = "judge responses" if judge else "the model's responses"
        return f"this looks like references.jsonl (the answer key export-tasks wrote), not {kind}"
    if "question" in obj or "turncase" in obj:
        wanted = '{"id", "raw_judge_output"}' if judge else '{"id", "raw_output"}'
        kind = "judge responses" if judge else "responses"
        return f"this looks like tasks.jsonl (the runner's input): {kind} are {wanted} lines"
    return None


def other_service_hint(obj: dict[str, Any], judge: bool) -> str | None:
    """A hint when a line is another batch service's result line, which datbench does not
    read (an Anthropic Message Batches result; a Gemini or Vertex AI batch output line)."""
    if "custom_id" in obj and isinstance(obj.get("result"), dict):
        service, text = "an Anthropic Message Batches result", '"text" blocks, not "thinking"'
    elif "id" not in obj and ("key" in obj or "request" in obj):
        service, text = "a Gemini batch output", 'parts without "thought"'
    else:
        return None
    field = "raw_judge_output" if judge else "raw_output"
    return (
        f"this looks like {service} line, which datbench does not read: write each answer as "
        f'a native {{"id", "{field}"}} line (its {text}), or run the requests on an '
        "OpenAI-compatible endpoint (docs/runners.md)"
    )


def native_id(obj: dict[str, Any], path: Path | None, number: int | None, judge: bool) -> str:
    """A native line's ``id``; :class:`InputError` naming the line when it is not a non-empty
    string (with a hint when the line is another batch service's)."""
    ident = obj.get("id")
    if not isinstance(ident, str) or not ident:
        raise InputError(
            'each line needs an "id" that is a non-empty string',
            path,
            number,
            hint=other_service_hint(obj, judge),
        )
    return ident


def checked_lines(
    path: Path,
    known: frozenset[str],
    parse: Callable[[dict[str, Any], Path, int], Line],
    warn: Callable[[str], None] | None = None,
    scan: Callable[[bytes], None] | None = None,
) -> Iterator[Line]:
    """Each line of a response file as ``parse`` reads it (errors name file and line);
    ``warn`` hears once, at the end, about keys of native lines that no reader uses. With
    ``warn``, a last line cut off mid-write is ignored and ``warn`` told so (without, it is an
    error). ``scan`` is given every line read (a pipe is read once)."""
    unknown = UnknownKeys(known)
    torn = None if warn is None else torn_tail_warner(path, warn)
    for number, obj, _ in iter_jsonl_lines(open_jsonl(path), path, torn, scan):
        if not is_batch_line(obj):
            unknown.check(obj, number)
        yield parse(obj, path, number)
    message = unknown.message(path)
    if message and warn is not None:
        warn(message)


def is_batch_line(obj: dict[str, Any]) -> bool:
    """True for an OpenAI-style batch output line (it carries ``custom_id``)."""
    return "custom_id" in obj
