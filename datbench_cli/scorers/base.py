"""The contract every dataset scorer module meets, and the default scorer input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

# Metadata keys every scorer receives when the row has them.
COMMON_MCQ_FIELDS = ("options", "index2ans", "all_choices")


class SampleFields(Protocol):
    """The sample fields a scorer input is built from (``DatBenchSample`` has them)."""

    @property
    def id(self) -> str: ...

    @property
    def question(self) -> str: ...

    @property
    def answer(self) -> str: ...

    @property
    def all_answers(self) -> Any: ...


class Scorer(Protocol):
    """A dataset scorer: a module with ``score_sample`` and ``compute_metrics``, optionally
    ``scorer_input`` and ``KNOWN_DEFECT``.

    ``scorer_input(sample, metadata)`` builds the dict ``score_sample`` receives from the sample
    and its parsed metadata; a module without one gets :func:`default_input`. It may raise (a
    missing required field): the evaluator records the exception as that sample's scorer error.
    ``score_sample`` receives that dict and the model output; it returns the score details, a
    dict with at least ``"score"``, and may raise likewise. ``compute_metrics`` receives the
    score details of the dataset's direct-mode samples (bare dicts, in sample order; the
    reference wraps each as ``{"score_details": details}`` and every scorer unwraps it) and
    returns the dataset's aggregate metrics.
    """

    def score_sample(self, sample: dict[str, Any], model_output: str) -> dict[str, Any]: ...

    def compute_metrics(self, predictions: list[dict[str, Any]]) -> dict[str, Any]: ...


def copy_fields(target: dict[str, Any], metadata: Any, fields: Sequence[str]) -> None:
    """Copy each of ``fields`` that ``metadata`` has into ``target``.

    Quirk: membership is tested on whatever the metadata parsed to, as in the reference: ``None``
    (from ``"null"``) raises ``TypeError`` and a list (from ``"[]"``) has no field.
    """
    for name in fields:
        if name in metadata:
            target[name] = metadata[name]


def default_input(
    sample: SampleFields, metadata: Any, copied: Sequence[str] = ()
) -> dict[str, Any]:
    """The reference's base scorer input: id, question, answer, all_answers, the common MCQ
    fields, then the dataset's ``copied`` metadata fields, each when present."""
    out: dict[str, Any] = {
        "question_id": sample.id,
        "question": sample.question,
        "answer": sample.answer,
        "all_answers": sample.all_answers,
    }
    copy_fields(out, metadata, COMMON_MCQ_FIELDS)
    copy_fields(out, metadata, copied)
    return out


def required_field(sample: SampleFields, metadata: Any, label: str, name: str) -> Any:
    """``metadata[name]``, or the reference's ``ValueError`` naming the sample and the field."""
    if name not in metadata:
        raise ValueError(f"{label} sample {sample.id} missing required metadata field: {name}")
    return metadata[name]


def note_correction(details: dict[str, Any], reference_score: Any, fix: str) -> dict[str, Any]:
    """``details`` of a corrected-profile score, naming ``fix`` under ``"corrections"`` when
    its score differs from ``reference_score`` (the reference profile's)."""
    if details.get("score") != reference_score:
        details["corrections"] = [fix]
    return details
