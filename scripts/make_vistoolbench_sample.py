"""Write ``sample_data/vistoolbench/``: a tiny offline stand-in for ScaleAI/VisualToolBench.

Deterministic (fixed seeds, no timestamps). It writes

- ``test.parquet``: six tasks with the hub's features, loadable with
  ``datasets.load_dataset(DIR, split="test")``. Tasks A-E are the worked example of the
  VisualToolBench spec (§5); F is a multi-turn task the demo leaves unanswered. Together they
  cover a single-turn task with a JPEG and a PNG, a multi-turn task whose second turn has no
  image, weights given as strings, a weight-2 ``critical: "yes"`` rubric, an empty
  ``rubrics_by_turn`` entry and a task id containing ``/``;
- ``responses.jsonl``: model answers in every accepted shape (turn ids, a bare single-turn id,
  a per-task ``turns`` line, an OpenAI batch output line);
- ``judge_responses.jsonl``: judge outputs in judge-task order (JSON, fenced JSON, a
  "Judge result:" phrase, a ``verdict`` field, task/turn/rubric keys, a batch line, one
  unparsable output and one missing line).

Usage: ``python scripts/make_vistoolbench_sample.py [OUT_DIR]``.
"""

from __future__ import annotations

import io
import json
import random
import sys
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "sample_data" / "vistoolbench"

TASK_A = "vtb-a-medical-001"
TASK_B = "vtb-b-maths-002"
TASK_C = "finance/vtb-c-003"
TASK_D = "vtb-d-sports-004"
TASK_E = "vtb-e-generalist-005"
TASK_F = "vtb-f-physics-006"


def features() -> Any:
    """The hub dataset's features (spec §7)."""
    from datasets import Features, Sequence, Value
    from datasets import Image as ImageFeature

    strings = Sequence(Value("string"))
    return Features(
        {
            "id": Value("string"),
            "turncase": Value("string"),
            "num_turns": Value("int64"),
            "prompt_category": Value("string"),
            "eval_focus": Value("string"),
            "turn_prompts": strings,
            "turn_golden_answers": strings,
            "turn_tool_trajectories": strings,
            "rubrics_by_turn": strings,
            "images": Sequence(ImageFeature()),
            "images_by_turn": Sequence(Sequence(ImageFeature())),
            "num_images": Value("int64"),
        }
    )


def draw_image(seed: int, fmt: str, size: tuple[int, int] = (32, 24)) -> dict[str, Any]:
    """A small picture of random rectangles, encoded as PNG or JPEG (a hub image cell)."""
    rng = random.Random(seed)
    image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    pen = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = rng.randrange(size[0] - 4), rng.randrange(size[1] - 4)
        box = (x0, y0, x0 + rng.randrange(2, 12), y0 + rng.randrange(2, 10))
        pen.rectangle(box, fill=tuple(rng.randrange(256) for _ in range(3)))
    buffer = io.BytesIO()
    if fmt == "JPEG":
        image.save(buffer, format="JPEG", quality=85)
    else:
        image.save(buffer, format="PNG")
    return {"bytes": buffer.getvalue(), "path": None}


def rubric(description: str, weight: Any, critical: str) -> dict[str, Any]:
    """A rubric object with the hub's extra keys."""
    return {
        "description": description,
        "weight": weight,
        "objective/subjective": "objective",
        "explicit/implicit": "explicit",
        "category": ["truthfulness"],
        "critical": critical,
        "final_answer": "yes" if critical == "yes" else "no",
    }


def rubrics_json(rubrics: dict[str, dict[str, Any]]) -> str:
    return json.dumps(rubrics)


def row(
    task_id: str,
    category: str,
    focus: str,
    prompts: list[str],
    goldens: list[str],
    rubrics: list[str],
    images_by_turn: list[list[dict[str, Any]]],
) -> dict[str, Any]:
    flat = [cell for cells in images_by_turn for cell in cells]
    return {
        "id": task_id,
        "turncase": "single-turn" if len(prompts) == 1 else "multi-turn",
        "num_turns": len(prompts),
        "prompt_category": category,
        "eval_focus": focus,
        "turn_prompts": prompts,
        "turn_golden_answers": goldens,
        "turn_tool_trajectories": [json.dumps([{"tool": "python_image_processing"}])]
        * len(prompts),
        "rubrics_by_turn": rubrics,
        "images": flat,
        "images_by_turn": images_by_turn,
        "num_images": len(flat),
    }


def sample_rows() -> list[dict[str, Any]]:
    """The six sample tasks A-F."""
    return [
        row(
            TASK_A,
            "medical",
            "region_switch_qa",
            ["Which region of the scan shows the lesion, and how large is it?"],
            ["The lesion is in the upper-left region and is about 12 mm across."],
            [
                rubrics_json(
                    {
                        "r1": rubric(
                            "States that the lesion is in the upper-left region.", 5, "yes"
                        ),
                        "r2": rubric("Mentions the second image as a comparison.", 2, "yes"),
                        "r3": rubric("Gives the size in millimetres.", "3", "no"),
                    }
                )
            ],
            [[draw_image(1, "JPEG"), draw_image(2, "PNG")]],
        ),
        row(
            TASK_B,
            "maths",
            "ef_b",
            ["What is the area of the shaded triangle?", "Now double the base: what is the area?"],
            ["The area is 24 square units.", "Doubling the base gives 48 square units."],
            [
                rubrics_json(
                    {
                        "r1": rubric("Gives an area of 24 square units.", 5, "yes"),
                        "r2": rubric("Shows the formula one half base times height.", 1, "no"),
                    }
                ),
                rubrics_json(
                    {
                        "r3": rubric("Gives an area of 48 square units.", "4.0", "yes"),
                        "r4": rubric("Explains that the area scales with the base.", 2, "no"),
                        "r5": rubric("Keeps the units.", 3, "no"),
                    }
                ),
            ],
            [[draw_image(3, "PNG")], []],
        ),
        row(
            TASK_C,
            "finance",
            "visual_reasoning",
            ["What was the revenue in Q3 according to the chart?", "By what percent did it grow?"],
            ["Revenue in Q3 was 4.2 million.", "It grew by 5 percent over Q2."],
            [
                rubrics_json({"r1": rubric("Reads 4.2 million for Q3.", 4, "yes")}),
                rubrics_json({"r2": rubric("Gives a growth of 5 percent.", 3, "no")}),
            ],
            [[draw_image(4, "JPEG")], [draw_image(5, "PNG")]],
        ),
        row(
            TASK_D,
            "sports",
            "tool_use",
            ["What is the jersey number of the player holding the ball?"],
            ["The player holding the ball wears number 23."],
            [
                rubrics_json(
                    {
                        "r1": rubric("Identifies the player holding the ball.", 5, "yes"),
                        "r2": rubric("Gives the number 23.", 5, "yes"),
                    }
                )
            ],
            [[draw_image(6, "PNG")]],
        ),
        row(
            TASK_E,
            "generalist",
            "visual_reasoning",
            ["Describe the scene in one sentence."],
            ["A small boat is moored beside a wooden pier at sunset."],
            [""],
            [[draw_image(7, "JPEG")]],
        ),
        row(
            TASK_F,
            "physics",
            "tool_use",
            ["Estimate the pendulum's period from the photo.", "And if the string were 4x longer?"],
            ["About 2 seconds.", "About 4 seconds, since the period scales with the square root."],
            [
                rubrics_json({"r1": rubric("Estimates a period of about 2 seconds.", 5, "yes")}),
                rubrics_json({"r1": rubric("Says the period doubles.", 4, "yes")}),
            ],
            [[draw_image(8, "PNG")], []],
        ),
    ]


def sample_responses() -> list[dict[str, Any]]:
    """Model answers for tasks A-E (F is left unanswered)."""
    return [
        {"id": f"{TASK_A}::0", "raw_output": "The lesion is upper-left, about 12 mm wide."},
        {"id": f"{TASK_B}::0", "raw_output": "Area = 24 square units."},
        {"id": f"{TASK_B}::1", "raw_output": "The area becomes 50 square units."},
        {
            "id": TASK_C,
            "turns": [
                "Q3 revenue was 4.5 million.",
                {"raw_output": "Working... growth is 5%.", "parsed_answer": "Growth: 5 percent."},
            ],
        },
        {"id": TASK_D, "raw_output": "Number 23, the forward in the centre."},
        {
            "custom_id": f"{TASK_E}::0",
            "response": {
                "status_code": 200,
                "body": {
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": "A boat by a pier."},
                            "finish_reason": "stop",
                        }
                    ]
                },
            },
        },
    ]


def _verdict(explanation: str, result: str) -> str:
    return json.dumps({"explanation": explanation, "judge_result": result})


def sample_judge_responses() -> list[dict[str, Any]]:
    """Judge outputs giving the worked example's statuses (D::0::r1 deliberately absent)."""
    return [
        {"id": f"{TASK_A}::0::r1", "raw_judge_output": _verdict("Upper-left is stated.", "Met")},
        {
            "id": f"{TASK_A}::0::r2",
            "raw_judge_output": "```json\n"
            + _verdict("The second image is not used.", "Not Met")
            + "\n```",
        },
        {"id": f"{TASK_A}::0::r3", "raw_judge_output": "**Judge result:** Met"},
        {"id": f"{TASK_B}::0::r1", "raw_judge_output": _verdict("24 is correct.", "Met")},
        {"id": f"{TASK_B}::0::r2", "raw_judge_output": _verdict("No formula shown.", "Not Met")},
        {"id": f"{TASK_B}::1::r3", "raw_judge_output": _verdict("50 is not 48.", "NOT_MET")},
        {"id": f"{TASK_B}::1::r4", "raw_judge_output": "Scaling is explained.", "verdict": "Met"},
        {
            "task_id": TASK_B,
            "turn_index": 1,
            "rubric_id": "r5",
            "raw_judge_output": _verdict("Units kept.", "Met"),
        },
        {"id": f"{TASK_C}::0::r1", "raw_judge_output": "The answer is correct."},
        {
            "custom_id": f"{TASK_C}::1::r2",
            "response": {
                "status_code": 200,
                "body": {
                    "choices": [
                        {
                            "message": {"content": _verdict("5 percent.", "Met")},
                            "finish_reason": "stop",
                        }
                    ]
                },
            },
        },
        {"id": f"{TASK_D}::0::r2", "raw_judge_output": _verdict("23 is given.", "Met")},
    ]


def write_dataset(directory: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as ``directory/test.parquet`` with the hub's features."""
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "test.parquet"
    Dataset.from_list(rows, features=features()).to_parquet(str(path))
    return path


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def main(out_dir: Path = DEFAULT_OUT) -> None:
    write_dataset(out_dir, sample_rows())
    write_jsonl(out_dir / "responses.jsonl", sample_responses())
    write_jsonl(out_dir / "judge_responses.jsonl", sample_judge_responses())


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
