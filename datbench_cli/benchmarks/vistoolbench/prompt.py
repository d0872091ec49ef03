"""The rubric judge prompt (spec §2.3), in this project's own wording.

The four inputs are inserted verbatim by concatenation (never ``str.format``), so braces or
template-like text inside them cannot change the prompt. The rubric's weight and critical flag
are bookkeeping and never reach the judge.
"""

from __future__ import annotations

_ROLE = "You are grading one answer from an AI model against a single rubric criterion."

_TASK = (
    "Below you will find a question, a reference answer written by an expert, one grading "
    "criterion, and the model's answer. Decide whether the model's answer satisfies the "
    "criterion. Use the reference answer only when the criterion depends on it."
)

_GUIDELINES = (
    "Guidelines:\n"
    "1. If the criterion does not call for a correct final result (for example, it only asks "
    "for the reasoning to be shown), an answer whose result is wrong can still satisfy it.\n"
    "2. Be lenient with criteria about style or presentation: an answer that is somewhat "
    "longer than the reference answer can still count as concise.\n"
    "3. A criterion can be satisfied implicitly: the answer does not need to use the "
    "criterion's exact words when the meaning is clearly there."
)

_OUTPUT = (
    'Reply with a JSON object and nothing else. It has two keys: "explanation", a brief '
    'justification, and "judge_result", which is exactly "Met" or "Not Met".'
)

LABELS = ("QUESTION", "REFERENCE ANSWER", "CRITERION", "MODEL ANSWER")


def _section(label: str, text: str) -> str:
    return f"### {label}\n{text}"


def render_judge_prompt(question: str, golden_answer: str, criterion: str, answer: str) -> str:
    """The single user message asking a judge whether ``answer`` meets ``criterion``."""
    inputs = "\n\n".join(
        _section(label, text)
        for label, text in zip(LABELS, (question, golden_answer, criterion, answer), strict=True)
    )
    return "\n\n".join((_ROLE, _TASK, inputs, _GUIDELINES, _OUTPUT))
