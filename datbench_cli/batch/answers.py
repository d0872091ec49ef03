"""What a model and a judge answered for one sample: the records the response files hold."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from datbench_cli.batch.digests import is_digest
from datbench_cli.files.loading import not_a_collection

T = TypeVar("T")


@dataclass
class VLMResponse:
    """The model's output for one sample; ``parsed_answer`` wins over ``raw_output`` when set."""

    id: str
    raw_output: str
    parsed_answer: str | None = None

    def __post_init__(self) -> None:
        # Accepted: ``raw_output=None`` (the spec's vectors score a null raw output as the
        # reference does: like an empty answer). Anything else but text is refused.
        check_text(self, "id", self.id, optional=False)
        check_text(self, "raw_output", self.raw_output, optional=True)
        check_text(self, "parsed_answer", self.parsed_answer, optional=True)

    @property
    def model_output(self) -> str:
        """The text that is scored: ``parsed_answer`` if non-empty, else ``raw_output``."""
        return self.parsed_answer or self.raw_output


@dataclass
class JudgeResponse:
    """The judge's output for one sample; ``verdict`` (if set) takes precedence over the text.

    ``response_digest`` (optional): the digest of the response text that was judged, as
    ``make-judge-tasks`` records it; a verdict whose digest differs from the current response's
    is stale and scores 0.
    """

    id: str
    raw_judge_output: str
    verdict: str | None = None
    response_digest: str | None = None

    def __post_init__(self) -> None:
        check_text(self, "id", self.id, optional=False)
        check_text(self, "raw_judge_output", self.raw_judge_output, optional=True)
        check_text(self, "verdict", self.verdict, optional=True)
        check_text(self, "response_digest", self.response_digest, optional=True)
        if self.response_digest is not None and not is_digest(self.response_digest):
            # As a judge file's line with one is refused: it would only make the verdict stale.
            raise ValueError(
                "JudgeResponse.response_digest must be the 16 hex digits of the judge task's "
                f"response_digest, or None; got {self.response_digest[:40]!r}"
            )


def plain_response(response: VLMResponse) -> VLMResponse:
    """A :class:`VLMResponse` of ``response``'s fields only: what travels (pickled) to the
    scoring workers, so that a caller's subclass defined in a function, or an attribute
    added to a response (a lock, a client, a lambda), does not stop the scoring."""
    return VLMResponse(response.id, response.raw_output, response.parsed_answer)


def plain_judge(judge: JudgeResponse) -> JudgeResponse:
    """A :class:`JudgeResponse` of ``judge``'s fields only (see :func:`plain_response`)."""
    return JudgeResponse(judge.id, judge.raw_judge_output, judge.verdict, judge.response_digest)


def check_text(owner: object, name: str, value: object, *, optional: bool) -> None:
    """``TypeError`` unless ``value`` is a string (or ``None`` when ``optional``);
    ``ValueError`` for a string with a lone surrogate (``"\\ud800"``, as decoding with
    ``errors="surrogateescape"`` leaves): no JSON file holds it, so the report could not be
    saved, as a response file with one is refused."""
    if optional and value is None:
        return
    if not isinstance(value, str):
        kind = "a string or None" if optional else "a string"
        raise TypeError(f"{type(owner).__name__}.{name} must be {kind}, got {type(value).__name__}")
    at = surrogate_at(value)
    if at is not None:
        raise ValueError(
            f"{type(owner).__name__}.{name} holds a lone surrogate "
            f"({value[at]!r} at position {at}), which is not text a JSON "
            "file can hold; decode the model's bytes with errors='replace'"
        )


def surrogate_at(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (``"\\ud800"``), which no JSON file can hold;
    ``None`` when it holds none."""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        return error.start
    return None


def checked(values: Iterable[Any], kind: type[T], argument: str) -> Iterator[T]:
    """Each of ``values`` (a caller's ``argument``), a ``TypeError`` naming it at the first
    that is not a ``kind``: a string, a dict or another record would otherwise fail far from
    the call, or be scored 0 as a scorer error."""
    if not_a_collection(values) or isinstance(values, kind):
        raise TypeError(
            f"{argument} must be an iterable of {kind.__name__} objects, "
            f"got {type(values).__name__}"
        )
    for number, value in enumerate(values):
        if not isinstance(value, kind):
            raise TypeError(
                f"{argument}[{number}] must be a {kind.__name__}, got {type(value).__name__}"
            )
        yield value
