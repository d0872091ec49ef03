"""The public dataclasses of the library: samples, tasks, responses, scores and the report.

Field names, order and defaults follow the DatBench seed, so positional construction works as it
does in the reference harness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The response records live with the response files (batch/); re-exported as the seed names them.
from datbench_cli.batch.answers import JudgeResponse as JudgeResponse
from datbench_cli.batch.answers import VLMResponse as VLMResponse
from datbench_cli.benchmarks.datbench.judge import rewrite_judge_prompt
from datbench_cli.files import jsonio
from datbench_cli.files.fields import NULL, NUMBER, OBJECT, STRING

_DEFAULT_PROMPT_FORMAT = {"prefix": "", "suffix": ""}


# The columns every row must have (the others take their defaults).
REQUIRED_COLUMNS = ("id", "image", "question", "answer")

# The types of the fields scoring reads as they are (an export refuses a row, and score a
# references line, that holds another): the id names the sample, the capability groups it, the
# eval_mode picks direct or judge scoring; an answer may be a number (the reference scores it)
# or null (a dataset defect the export names).
REFERENCE_FIELDS: dict[str, tuple[type, ...]] = {
    "id": STRING,
    "capability": STRING,
    "eval_mode": STRING,
    "answer": STRING + NUMBER + (NULL,),
    "all_answers": (list, NULL),
    "is_circular": (bool, NULL),
    "source_info": OBJECT + (NULL,),
}


@dataclass
class DatBenchSample:
    """One DatBench row: image, prompt parts, references and scoring metadata."""

    id: str
    capability: str
    image: Any
    question: str
    prompt_format: dict[str, str]
    answer: str
    all_answers: list[str] = field(default_factory=list)
    eval_mode: str = "direct"
    judge_prompt: str = ""
    is_circular: bool = False
    metadata: Any = "{}"
    source_info: dict[str, str] = field(default_factory=dict)
    eval_metrics: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_hf_row(cls, row: Mapping[str, Any], capability: str) -> DatBenchSample:
        """Build a sample from a dataset row.

        :data:`REQUIRED_COLUMNS` (``id``, ``image``, ``question``, ``answer``) are required. The
        other fields take their default only when the key is absent: a present ``None`` stays
        ``None`` (reference behaviour). No type coercion is applied.
        """
        return cls(
            id=row["id"],
            capability=capability,
            image=row["image"],
            question=row["question"],
            prompt_format=row.get("prompt_format", dict(_DEFAULT_PROMPT_FORMAT)),
            answer=row["answer"],
            all_answers=row.get("all_answers", [row["answer"]]),
            eval_mode=row.get("eval_mode", "direct"),
            judge_prompt=row.get("judge_prompt", ""),
            is_circular=row.get("is_circular", False),
            metadata=row.get("metadata", "{}"),
            source_info=row.get("source_info", {}),
            eval_metrics=row.get("eval_metrics", {}),
        )

    @property
    def dataset(self) -> str:
        """The source dataset name that selects the scorer ("" when absent)."""
        info = self.source_info
        return info.get("dataset", "") if isinstance(info, dict) else ""

    def prompt_defect(self) -> str | None:
        """What makes this sample's prompt wrong, or ``None``: a question that is not text
        (it would reach the model as the word "None"), a ``prompt_format`` that is not an
        object, or a prefix or suffix in it that is not text."""
        if not isinstance(self.question, str):
            return (
                f"question is {_kind(self.question)}, not text (a dataset defect; "
                "the prompt would be wrong)"
            )
        fmt = self.prompt_format
        if fmt is None:
            return None
        if not isinstance(fmt, dict):
            return f"prompt_format is {_kind(fmt)}, not an object"
        for part in ("prefix", "suffix"):
            if part in fmt and not isinstance(fmt[part], str):
                return (
                    f"prompt_format.{part} is {_kind(fmt[part])}, not text (a dataset "
                    "defect; the prompt would be wrong)"
                )
        return None

    def judge_prompt_defect(self) -> str | None:
        """What makes this sample's judge prompt wrong, or ``None``: one that is neither text
        nor null (null is no prompt, as in the reference)."""
        if self.judge_prompt is None or isinstance(self.judge_prompt, str):
            return None
        return (
            f"judge_prompt is {_kind(self.judge_prompt)}, not text (a dataset defect; "
            "the judge prompt would be wrong)"
        )

    def formatted_question(self) -> str:
        """The prompt sent to the model: prefix + question + suffix, nothing added."""
        fmt = self.prompt_format or {}
        return f"{fmt.get('prefix', '')}{self.question}{fmt.get('suffix', '')}"


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


@dataclass
class InferenceTask:
    """What the VLM sees: the image and the formatted prompt."""

    id: str
    image: Any
    question: str
    eval_mode: str

    @classmethod
    def from_sample(cls, sample: DatBenchSample) -> InferenceTask:
        """The task for one sample (the image object is passed through as loaded)."""
        return cls(sample.id, sample.image, sample.formatted_question(), sample.eval_mode)


@dataclass
class JudgeRequest:
    """Input for the judge LLM (judge-mode samples only)."""

    id: str
    vlm_response: str
    ground_truth: str
    judge_prompt: str

    @classmethod
    def from_sample_and_response(
        cls, sample: DatBenchSample, response: VLMResponse
    ) -> JudgeRequest:
        """The request for one judge-mode sample, with the judge prompt rewritten."""
        return cls(
            id=sample.id,
            vlm_response=response.model_output,
            ground_truth=sample.answer,
            judge_prompt=rewrite_judge_prompt(sample.judge_prompt),
        )


@dataclass
class SampleScore:
    """The result for one scored sample (``report.results``)."""

    id: str
    score: float
    vlm_output: str
    ground_truth: str
    is_correct: bool
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The result as the report writes it (key order of the CLI contract; no deep copy)."""
        return {
            "id": self.id,
            "score": self.score,
            "is_correct": self.is_correct,
            "vlm_output": self.vlm_output,
            "ground_truth": self.ground_truth,
            "metadata": self.metadata,
        }


@dataclass
class DatBenchReport:
    """Summary metrics plus one :class:`SampleScore` per scored sample."""

    summary: dict[str, Any]
    results: list[SampleScore]
    # What was measured: tool, reference, dataset revision, input digests (``datbench score``
    # fills it; the library leaves it ``None`` and the key out).
    provenance: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        out: dict[str, Any] = {"summary": self.summary}
        if self.provenance is not None:
            out["provenance"] = self.provenance
        out["results"] = [r.to_dict() for r in self.results]
        return out

    def to_json(self) -> str:
        """The report as indented JSON text."""
        return jsonio.dumps_pretty(self.to_dict()).decode()

    def save(self, path: str | Path) -> None:
        """Write the report as JSON, atomically (a temporary file renamed into place)."""
        target = jsonio.save_target(path)
        jsonio.write_bytes_atomic(target, jsonio.dumps_pretty(self.to_dict()) + b"\n")
