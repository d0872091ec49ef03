"""Degenerate model outputs, by family (issue 36): what a small model writes at its token limit.

Each family has a few variants of 8-32 KB; ``scripts/degenerate_survey.py`` scores every variant
on every scorer and ``make bench`` reports the worst per family. The differential tests
(tests/scorers/test_degenerate_outputs.py) compare each with the slow path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KB = 1024


def loop(period: str, size: int = 8 * KB) -> str:
    """``period`` repeated to ``size`` characters (cut mid-period, as a token limit cuts)."""
    return (period * (size // len(period) + 1))[:size]


FAMILIES: dict[str, dict[str, str]] = {
    "prose loop": {
        "shaded part": "so the shaded part is the same as before and we count again " * 140,
        "count squares": loop("Let me count the squares again. There are 4 in the top row and 3 "),
        "16 KB, no punctuation": loop("we need to check the figure once more and ", 16 * KB),
        "commas and periods": loop(
            "Hmm, so the shaded part is the same as before, and we count again. "
        ),
    },
    "answer sentence loop": {
        "the answer is 12.": loop("The answer is 12. "),
        "final answer B": loop("Therefore, the final answer is B.\n"),
        "answer: yes": loop("Answer: Yes\n", 12 * KB),
    },
    "number loop": {
        "12 12 12": loop("12 "),
        "1, 2, 3": loop("1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "),
        "digits only": loop("1234567890", 16 * KB),
        "0.5+0.5": loop("0.5+0.5+", 8 * KB),
        "arithmetic with parentheses": loop("The area is (3 + 4) times 2 minus (1 + 1), which "),
        "\\boxed{} sum of 5,000 terms": "\\boxed{" + "1+" * 4999 + "1}",
    },
    "LaTeX fragment loop": {
        "frac sqrt cdot": loop("\\frac{1}{2} + \\sqrt{3} \\cdot "),
        "frac no spaces": loop("\\frac{x}{2}\\times\\sqrt{3}-"),
        "left right": loop("\\left( \\frac{a}{b} \\right)^{2} = "),
        "math mode": loop("$x^2 + y^2 = r^2$ "),
    },
    "bracket loop": {
        "4096 { then }": "{" * 4096 + "}" * 4096,
        "{x}": loop("{x} "),
        "((((": "(" * 8192,
        "[[]]": loop("[[]]", 16 * KB),
        "({[": loop("({["),
    },
    "unclosed boxed": {
        "\\boxed{ run": loop("\\boxed{"),
        "\\boxed{12 run": loop("\\boxed{12 "),
        "one unclosed then prose": "\\boxed{" + loop("the answer is twelve "),
        "\\boxed{\\frac{1}{2} run": loop("\\boxed{\\frac{1}{2}"),
    },
    "answer tag around blank space": {
        "Answer: <answer> spaces": "Answer: <answer>" + " " * (8 * KB) + "12",
        "\\boxed{<final> blank lines}": "\\boxed{<final>" + " \n" * (4 * KB) + "12}",
        "pipe box <answer> tabs": "<|begin_of_box|>< ANSWER >"
        + loop("\t \n", 16 * KB)
        + "B</ answer\n><|end_of_box|>",
    },
    "think-only": {
        "unclosed think loop": "<think>" + loop("Hmm, wait, let me reconsider the figure. "),
        "think loop closed, nothing after": "<think>" + loop("Wait, maybe not. ") + "</think>",
        "think numbers": "<think>" + loop("3 + 4 = 7, 7 + 5 = 12, ", 16 * KB),
    },
    "CJK": {
        "Chinese loop": loop("所以阴影部分与之前相同，我们再数一次。", 4 * KB),
        "Chinese answer loop": loop("答案是12。", 4 * KB),
        "Japanese": loop("したがって、答えはもう一度数えます。", 4 * KB),
        "mixed CJK digits": loop("面积为3×4=12平方厘米，", 4 * KB),
    },
    "long chain of thought, no answer": {
        "reasoning": "".join(
            f"Step {i}: the side of square {i} is {i + 2} cm, so its area is {(i + 2) ** 2} "
            f"square cm, and together with the previous ones the total becomes "
            f"{sum((k + 2) ** 2 for k in range(i + 1))}. "
            for i in range(120)
        ),
        "latex reasoning": "".join(
            f"We have $a_{{{i}}} = \\frac{{{i}}}{{{i + 1}}}$, hence "
            f"$S_{{{i}}} = S_{{{i - 1}}} + a_{{{i}}}$. "
            for i in range(200)
        ),
    },
}

# Every family stays within the 8-32 KB (UTF-8 bytes).
for _family, _variants in FAMILIES.items():
    for _name, _text in _variants.items():
        _size = len(_text.encode("utf-8"))
        assert 8 * KB <= _size <= 32 * KB + 64, (_family, _name, _size)

VECTORS = Path(__file__).resolve().parent / "data"


def metadata_shapes(raw: Any) -> dict[str, Any]:
    """The vector row's metadata in each shape the hub stores it: JSON text (as stored), the
    parsed object, the parsed object re-dumped with non-ASCII kept, and empty."""
    parsed = json.loads(raw) if isinstance(raw, str) else raw
    return {
        "JSON string": raw if isinstance(raw, str) else json.dumps(raw),
        "dict": parsed,
        "JSON string, unicode": json.dumps(parsed, ensure_ascii=False, indent=1),
        "empty": "{}",
    }


def scorer_rows() -> dict[str, tuple[str, dict[str, Any]]]:
    """(capability, vector row without image) per registered dataset name, from the vectors."""
    from datbench_cli.scorers import SCORERS

    rows: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in sorted(VECTORS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            vector = json.loads(line)
            row = vector.get("row")
            if not isinstance(row, dict):
                continue
            name = (row.get("source_info") or {}).get("dataset")
            if name in SCORERS and name not in rows:
                rows[name] = (vector["capability"], dict(row, image=None))
    return rows
