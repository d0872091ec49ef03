"""Writing a DatBench-shaped dataset directory, as ``hf download --local-dir`` leaves the hub's.

Used by the sample-data generator, the tests and the benchmark script, so every local copy we
make has exactly the hub's layout: a README.md with a ``configs:`` block and one
``<capability>/test-00000-of-00001.parquet`` per capability, images as a datasets ``Image``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any


def datbench_features() -> Any:
    """The column types of the hub dataset (the seed's sample fields)."""
    from datasets import Features, Image, Sequence, Value

    return Features(
        {
            "id": Value("string"),
            "image": Image(),
            "question": Value("string"),
            "prompt_format": {"prefix": Value("string"), "suffix": Value("string")},
            "answer": Value("string"),
            "all_answers": Sequence(Value("string")),
            "eval_mode": Value("string"),
            "judge_prompt": Value("string"),
            "is_circular": Value("bool"),
            "metadata": Value("string"),
            "source_info": {"dataset": Value("string"), "original_idx": Value("string")},
            "eval_metrics": {"discrimination": Value("float64")},
        }
    )


def hub_readme(capabilities: Iterable[str], title: str = "DatBench sample") -> str:
    """A dataset card whose ``configs:`` block maps each capability to its parquet file."""
    configs = "".join(
        f"- config_name: {c}\n  data_files:\n  - split: test\n"
        f"    path: {c}/test-00000-of-00001.parquet\n"
        for c in capabilities
    )
    return f"---\nconfigs:\n{configs}---\n\n# {title}\n"


def write_hub_dataset(
    out: Path, rows_by_capability: dict[str, list[dict[str, Any]]], title: str = "DatBench sample"
) -> None:
    """Write ``rows_by_capability`` (rows with the hub's columns) as a hub-layout directory.

    An ``image`` cell is ``{"bytes": ..., "path": ...}`` or ``None``.
    """
    import datasets
    from datasets import Dataset

    datasets.disable_progress_bars()
    out.mkdir(parents=True, exist_ok=True)
    for capability, rows in rows_by_capability.items():
        folder = out / capability
        folder.mkdir(parents=True, exist_ok=True)
        dataset = Dataset.from_list(rows, features=datbench_features())
        # Row groups of 100 rows, as the hub's parquet files of image datasets have.
        dataset.to_parquet(str(folder / "test-00000-of-00001.parquet"), batch_size=100)
    (out / "README.md").write_text(hub_readme(rows_by_capability, title), encoding="utf-8")
