"""What a DatBench judge sees: the judge prompt with its placeholders filled in."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeRequest

JUDGE_FIELDS = ("question", "correct_answer", "model_answer")
_PLACEHOLDER_RE = re.compile(r"\{(question|correct_answer|model_answer)\}")
DEFAULT_JUDGE_INSTRUCTION = (
    "Decide whether the model answer below is correct, given the question and the reference "
    "answer. Output exactly one boolean token: true or false."
)
_LABELS = {
    "question": "Question:",
    "correct_answer": "Reference answer:",
    "model_answer": "Model answer:",
}


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def judge_text(task: dict[str, Any]) -> str:
    """What the judge sees for one DatBench judge_tasks.jsonl line (one user message, text
    only).

    ``{question}``, ``{correct_answer}`` and ``{model_answer}`` in ``judge_prompt`` are
    replaced literally (never ``str.format``: prompts hold LaTeX and JSON braces) by ``question``,
    ``ground_truth`` and ``vlm_response``; a value containing a placeholder is not expanded again.
    Each of the three that has no placeholder is appended after the prompt under its label
    ("Question:", "Reference answer:" (with "Other accepted answers:" listing the other
    ``all_answers``), "Model answer:"); an empty prompt becomes
    :data:`DEFAULT_JUDGE_INSTRUCTION`.
    """
    prompt = _text(task.get("judge_prompt"))
    values = {
        "question": _text(task.get("question")),
        "correct_answer": _text(task.get("ground_truth")),
        "model_answer": _text(task.get("vlm_response")),
    }
    present = set(_PLACEHOLDER_RE.findall(prompt))
    text = _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], prompt)
    if not text.strip():
        text = DEFAULT_JUDGE_INSTRUCTION
    sections = [text.rstrip()]
    for name in JUDGE_FIELDS:
        if name in present:
            continue
        sections.append(f"{_LABELS[name]}\n{values[name]}")
        if name == "correct_answer":
            others = _other_answers(task.get("all_answers"), values["correct_answer"])
            if others:
                sections.append("Other accepted answers:\n" + "\n".join(others))
    return "\n\n".join(sections) if len(sections) > 1 else text


def _other_answers(all_answers: Any, answer: str) -> list[str]:
    if not isinstance(all_answers, list):
        return []
    seen = {answer}
    others = []
    for item in all_answers:
        text = _text(item)
        if text not in seen:
            seen.add(text)
            others.append(text)
    return others


def fill_judge_prompt(request: JudgeRequest, sample: DatBenchSample | None = None) -> str:
    """What a judge sees for ``request`` (from ``create_judge_tasks``): its judge prompt with
    ``{question}``, ``{correct_answer}`` and ``{model_answer}`` filled in, by the rules of
    :func:`judge_text` (the text ``make-judge-tasks --format openai`` sends). ``sample`` gives
    the question and the other accepted answers; without it they are empty. Anything else
    (a ``judge_tasks.jsonl`` line, a dataset row) is a ``TypeError`` naming the argument."""
    from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeRequest

    if not isinstance(request, JudgeRequest):
        raise TypeError(
            "request must be a JudgeRequest (from create_judge_tasks), "
            f"got {type(request).__name__}"
        )
    if sample is not None and not isinstance(sample, DatBenchSample):
        raise TypeError(
            "sample must be a DatBenchSample (evaluator.samples_by_id[request.id]) or None, "
            f"got {type(sample).__name__}"
        )
    return judge_text(
        {
            "judge_prompt": request.judge_prompt,
            "question": sample.question if sample is not None else "",
            "ground_truth": request.ground_truth,
            "vlm_response": request.vlm_response,
            "all_answers": sample.all_answers if sample is not None else None,
        }
    )
