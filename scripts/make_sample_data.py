"""Generate ``sample_data/datbench/``: a tiny DatBench laid out exactly like the hub dataset.

Rows come from the reference test vectors in ``tests/data`` (real rows of every registered source
dataset, with answers and metadata shaped as each scorer needs), plus hand-written judge-mode rows
for chart, general, math and table, and rows as the hub has them since the reference commit
(judge-mode vqa-v2 rows whose prompt asks for ``{"answer": true|false}`` JSON, MMMU-Pro
questions starting with ``<image>``). Each row gets a tiny real PNG or JPEG drawn with Pillow. Also
writes ``responses.jsonl`` and ``judge_responses.jsonl`` for ``make demo``.

Deterministic: rerunning it on the same vectors and library versions gives identical files.

    python scripts/make_sample_data.py [--out sample_data/datbench] [--per-dataset 4]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from datbench_cli.benchmarks.datbench.capabilities import CAPABILITIES  # noqa: E402
from datbench_cli.files.hub_layout import write_hub_dataset  # noqa: E402
from datbench_cli.scorers import SCORERS  # noqa: E402

VECTORS = ROOT / "tests" / "data"
_GLUE = {"evaluator", "evaluator_summary", "erma_utils", "erma_utils_direct"}

TWO_LINE_RUBRIC = (
    "You are grading a model's answer to a visual question.\n"
    "Question: {question}\nReference answer: {correct_answer}\nModel answer: {model_answer}\n"
    "Decide whether the model answer means the same as the reference.\n"
    "Respond with exactly two lines:\nReason: <one sentence>\nanswer: true or false"
)
PLACEHOLDER_RUBRIC = (
    "Judge whether the model answer is correct.\n"
    "Question: {question}\nReference answer(s): {correct_answer}\nModel answer: {model_answer}\n"
    'Reply with JSON: {"answer": true} or {"answer": false}.'
)
PLAIN_RUBRIC = (
    "Compare the model's final answer with the reference answer. Minor formatting differences "
    "are fine; a different value is wrong. Answer true or false."
)

# (capability, dataset, question, answer, judge prompt, model output, judge output or None)
JUDGE_ROWS: list[tuple[str, str, str, str, str, str, dict[str, Any] | None]] = [
    (
        "chart",
        "chartqapro",
        "Which year had the highest revenue?",
        "2019",
        TWO_LINE_RUBRIC,
        "Revenue peaks in 2019.\nAnswer: 2019",
        {"raw_judge_output": "true"},
    ),
    (
        "chart",
        "chartqapro",
        "Describe the trend between 2015 and 2020.",
        "It rises steadily",
        PLAIN_RUBRIC,
        "The values fall sharply.",
        {"raw_judge_output": "answer: false"},
    ),
    (
        "chart",
        "charxiv_reasoning",
        "Which line crosses the other first?",
        "the blue line",
        PLACEHOLDER_RUBRIC,
        "The blue line.",
        {"raw_judge_output": '```json\n{"answer": true}\n```'},
    ),
    (
        "general",
        "mmmu",
        "What is the main function of the organ shown?",
        "pumping blood",
        PLACEHOLDER_RUBRIC,
        "It pumps blood around the body.",
        {"raw_judge_output": '{"answer": "yes"}'},
    ),
    (
        "general",
        "mmbench",
        "What is the person in the image most likely doing?",
        "cooking",
        TWO_LINE_RUBRIC,
        "They are reading a book.",
        {"raw_judge_output": "Reason: reading is not cooking.\nanswer: false"},
    ),
    (
        "general",
        "vqa-v2",
        "Why is the street wet?",
        "it rained",
        PLAIN_RUBRIC,
        "Because it has been raining.",
        {"raw_judge_output": "", "verdict": "correct"},
    ),
    (
        "math",
        "mathverse_reasoning",
        "Find the area of the shaded region.",
        "12\\pi",
        TWO_LINE_RUBRIC,
        "The shaded area is $12\\pi$.\nAnswer: 12\\pi",
        {"raw_judge_output": "true"},
    ),
    (
        "math",
        "mathverse_wo",
        "What is the length of side AB?",
        "5",
        PLACEHOLDER_RUBRIC,
        "AB = 4",
        {"raw_judge_output": '{"answer": false}'},
    ),
    (
        "math",
        "mathverse_reasoning",
        "What is angle x in degrees?",
        "40",
        PLAIN_RUBRIC,
        "x = 40 degrees",
        {"raw_judge_output": "The model is probably right."},
    ),  # unparsed
    (
        "math",
        "mathvision",
        "How many triangles are in the figure?",
        "8",
        TWO_LINE_RUBRIC,
        "I count 8 triangles.",
        None,
    ),  # no judge response: missing
    (
        "table",
        "ai2d",
        "Which stage comes after the larva?",
        "pupa",
        PLACEHOLDER_RUBRIC,
        "The pupa stage.",
        {"raw_judge_output": "answer: yes"},
    ),
    (
        "table",
        "ai2d",
        "What does the arrow from the sun represent?",
        "energy transfer",
        TWO_LINE_RUBRIC,
        "Light energy reaching the plant.",
        {"raw_judge_output": "True"},
    ),
]


# Rows as the hub has them since it was rewritten after the reference commit: vqa-v2 rows in
# `general` switched to judge mode, with a semantic judge policy appended to their prompt that
# asks for JSON; MMMU-Pro questions starting with one literal `<image>` marker.
VQA_V2_POLICY = (
    "\n\nVQA-V2 semantic judge policy: the model answer is correct when it means the same as "
    "the reference answer or as most of the human answers; ignore case, articles, punctuation, "
    "number words versus digits and extra explanation around the answer. Reply with JSON only: "
    '{"answer": true} or {"answer": false}.'
)
VQA_V2_BASE = (
    "Question: {question}\nReference answer: {correct_answer}\nHuman answers: {all_answers}\n"
    "Model answer: {model_answer}"
)
# (question, answer, the ten human answers, model output, judge output)
VQA_V2_JUDGE_ROWS: list[tuple[str, str, list[str], str, str]] = [
    (
        "What color is the bus?",
        "red",
        ["red"] * 8 + ["dark red", "maroon"],
        "The bus is red.",
        '{"answer": true}',
    ),
    (
        "How many dogs are there?",
        "2",
        ["2"] * 9 + ["two"],
        "three dogs",
        '{"answer": false}',
    ),
    (
        "Is the man wearing a hat?",
        "yes",
        ["yes"] * 10,
        "Yes, a baseball cap.",
        '```json\n{"answer": true}\n```',
    ),
]
# MMMU-Pro vector ids whose rows are repeated with the current `<image>` question marker.
MMMU_PRO_IMAGE_MARKER_IDS = ("db_general_000040", "db_general_000044")


def current_revision_rows() -> list[tuple[str, dict[str, Any], str, dict[str, Any] | None]]:
    """(capability, row, raw_output, judge response or None) of the current-revision rows."""
    out: list[tuple[str, dict[str, Any], str, dict[str, Any] | None]] = []
    for number, (question, answer, humans, output, verdict) in enumerate(VQA_V2_JUDGE_ROWS):
        sample_id = f"db_general_vqav2_judge_{number:03d}"
        row = {
            "id": sample_id,
            "question": question,
            "prompt_format": {"prefix": "", "suffix": "\nAnswer the question using a single word."},
            "answer": answer,
            "all_answers": humans,
            "eval_mode": "judge",
            "judge_prompt": VQA_V2_BASE + VQA_V2_POLICY,
            "metadata": "{}",
            "source_info": {"dataset": "vqa-v2", "original_idx": str(2000 + number)},
            "eval_metrics": {"discrimination": 0.5},
        }
        out.append(("general", row, output, {"id": sample_id, "raw_judge_output": verdict}))
    vectors = {
        json.loads(line)["row"]["id"]: json.loads(line)
        for line in (VECTORS / "mmmupro.jsonl").read_text(encoding="utf-8").splitlines()
    }
    for number, vector_id in enumerate(MMMU_PRO_IMAGE_MARKER_IDS):
        vector = vectors[vector_id]
        row = dict(vector["row"])
        question = row["question"]
        for marker in ("<image 1>\n", "<image 1>"):
            question = question.replace(marker, "")
        row["id"] = f"db_general_mmmupro_image_marker_{number:03d}"
        row["question"] = "<image>\n" + question
        out.append((vector["capability"], row, vector["raw_output"], None))
    return out


def vector_rows(per_dataset: int) -> list[tuple[str, dict[str, Any], str]]:
    """(capability, row, raw_output) for up to ``per_dataset`` vectors per registered name."""
    taken: dict[str, int] = defaultdict(int)
    seen_ids: set[str] = set()
    out = []
    for path in sorted(VECTORS.glob("*.jsonl")):
        stem = path.stem
        if "." in stem or stem.endswith("_direct") or stem in _GLUE:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            vector = json.loads(line)
            row = vector["row"]
            dataset = (row.get("source_info") or {}).get("dataset")
            if dataset not in SCORERS or row.get("eval_mode", "direct") != "direct":
                continue
            if "expected_error" in vector or row["id"] in seen_ids:
                continue
            if taken[dataset] >= per_dataset:
                continue
            taken[dataset] += 1
            seen_ids.add(row["id"])
            out.append((vector["capability"], row, vector["raw_output"]))
    return out


def tiny_image(seed: int, fmt: str) -> bytes:
    """A small deterministic picture (a few shapes) encoded as PNG or JPEG."""
    from PIL import Image, ImageDraw

    width, height = 96, 64
    base = ((seed * 37) % 200 + 30, (seed * 91) % 200 + 30, (seed * 53) % 200 + 30)
    image = Image.new("RGB", (width, height), base)
    draw = ImageDraw.Draw(image)
    for k in range(3):
        x0 = (seed * (k + 3) * 13) % (width - 20)
        y0 = (seed * (k + 5) * 7) % (height - 16)
        colour = ((seed + k * 80) % 256, (seed * 3 + k * 40) % 256, (seed * 7 + k * 20) % 256)
        draw.rectangle([x0, y0, x0 + 18, y0 + 14], fill=colour, outline=(0, 0, 0))
    draw.line([0, height - 1, width - 1, 0], fill=(255, 255, 255), width=2)
    buffer = io.BytesIO()
    if fmt == "PNG":
        image.save(buffer, format="PNG", optimize=False)
    else:
        image.save(buffer, format="JPEG", quality=80)
    return buffer.getvalue()


def hub_row(row: dict[str, Any], image: bytes, name: str) -> dict[str, Any]:
    """A row with the hub's column types (strings where the hub has strings)."""
    answer = row["answer"]
    all_answers = row.get("all_answers")
    if all_answers is None:
        all_answers = [answer]
    info = row.get("source_info") or {}
    metrics = row.get("eval_metrics") or {}
    return {
        "id": row["id"],
        "image": {"bytes": image, "path": name},
        "question": row["question"],
        "prompt_format": {
            "prefix": (row.get("prompt_format") or {}).get("prefix", ""),
            "suffix": (row.get("prompt_format") or {}).get("suffix", ""),
        },
        "answer": str(answer),
        "all_answers": [str(a) for a in all_answers],
        "eval_mode": row.get("eval_mode", "direct"),
        "judge_prompt": row.get("judge_prompt") or "",
        "is_circular": bool(row.get("is_circular", False)),
        "metadata": row.get("metadata") if isinstance(row.get("metadata"), str) else "{}",
        "source_info": {
            "dataset": str(info.get("dataset", "")),
            "original_idx": str(info.get("original_idx", "")),
        },
        "eval_metrics": {"discrimination": float(metrics.get("discrimination", 0.0))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "sample_data" / "datbench")
    parser.add_argument("--per-dataset", type=int, default=4)
    args = parser.parse_args()

    by_capability: dict[str, list[dict[str, Any]]] = defaultdict(list)
    responses: list[dict[str, Any]] = []
    judge_responses: list[dict[str, Any]] = []
    serial = 0

    def add(capability: str, row: dict[str, Any]) -> None:
        nonlocal serial
        serial += 1
        fmt = "PNG" if serial % 2 else "JPEG"
        seed = zlib.crc32(row["id"].encode()) % 997
        name = f"{row['id']}.{'png' if fmt == 'PNG' else 'jpg'}"
        by_capability[capability].append(hub_row(row, tiny_image(seed, fmt), name))

    for capability, row, raw_output in vector_rows(args.per_dataset):
        add(capability, row)
        responses.append({"id": row["id"], "raw_output": raw_output})

    for number, (cap, dataset, question, answer, prompt, output, judge) in enumerate(JUDGE_ROWS):
        sample_id = f"db_{cap}_judge_{number:03d}"
        row = {
            "id": sample_id,
            "question": question,
            "prompt_format": {"prefix": "", "suffix": "\nAnswer briefly."},
            "answer": answer,
            "all_answers": [answer],
            "eval_mode": "judge",
            "judge_prompt": prompt,
            "metadata": "{}",
            "source_info": {"dataset": dataset, "original_idx": str(1000 + number)},
            "eval_metrics": {"discrimination": 0.5},
        }
        add(cap, row)
        responses.append({"id": sample_id, "raw_output": output})
        if judge is not None:
            judge_responses.append({"id": sample_id, **judge})

    for capability, row, output, judge in current_revision_rows():
        add(capability, row)
        responses.append({"id": row["id"], "raw_output": output})
        if judge is not None:
            judge_responses.append(judge)

    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    ordered = {c: by_capability[c] for c in CAPABILITIES if by_capability[c]}
    write_hub_dataset(out, ordered)
    for name, rows in (("responses.jsonl", responses), ("judge_responses.jsonl", judge_responses)):
        with (out / name).open("w", encoding="utf-8") as handle:
            for item in rows:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    total = sum(len(v) for v in ordered.values())
    print(f"wrote {total} samples in {len(ordered)} capabilities to {out}")


if __name__ == "__main__":
    main()
