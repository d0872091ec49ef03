"""DatBench export: dataset -> images/, tasks.jsonl, references.jsonl and (last) datbench.json.

One pass over each capability's rows, read as Arrow batches (images are never decoded). Ids
are checked as they stream by; image bytes go to a staging folder inside the run directory and
tasks/references to temporary files. Only when every row was good are they put in place:
the old manifest is removed, tasks/references renamed, the staging folder swapped in as
``images/``, and the new manifest written. A failed export leaves an earlier one untouched; an
interrupted one leaves no manifest, so later stages refuse the directory until it is rerun.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.batch.requests import RequestSettings
from datbench_cli.batch.shards import Shard
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.stages import write_task_requests
from datbench_cli.errors import InputError, name_ids
from datbench_cli.files import jsonio
from datbench_cli.files.images import extension_from_bytes, image_cell_bytes
from datbench_cli.files.loading import load_split
from datbench_cli.files.rundir import IMAGES, MANIFEST, REFERENCES, TASKS, RunDir, safe_file_stem

Warn = Callable[[str], None]
Advance = Callable[[int], None]

REQUIRED_COLUMNS = ("id", "question", "answer")
STAGING = ".datbench-staging"
_OLD_IMAGES = ".datbench-old-images"
_BATCH_ROWS = 32


def _ignore(_: Any) -> None:
    return None


@dataclass
class ExportPlan:
    """The loaded (lazy) splits of one export, before anything is written."""

    source: str
    split: str
    limit: int | None
    splits: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int | None:
        """The number of rows, when the loader knows it without reading them."""
        try:
            return sum(len(ds) for ds in self.splits.values())
        except TypeError:
            return None


def plan_export(capabilities: list[str], source: str, split: str, limit: int | None) -> ExportPlan:
    """Load each capability's split (lazily for a local directory) and check its columns."""
    plan = ExportPlan(source, split, limit)
    for capability in capabilities:
        ds = load_split(source, capability, split)
        columns = ds.column_names
        missing = [c for c in REQUIRED_COLUMNS if columns is not None and c not in columns]
        if missing:
            raise InputError(
                f"capability {capability!r} of {source!r} lacks the column(s) {', '.join(missing)}"
            )
        plan.splits[capability] = ds.take(limit) if limit is not None else ds
    return plan


def iter_rows(dataset: Any) -> Iterator[dict[str, Any]]:
    """Rows as plain dicts from Arrow batches: image cells stay ``{"bytes", "path"}``."""
    for batch in dataset.with_format("arrow").iter(batch_size=_BATCH_ROWS):
        yield from batch.to_pylist()


def _reference(row: dict[str, Any], capability: str) -> dict[str, Any]:
    """Everything scoring needs for one row: the sample (reference defaults applied), no image."""
    for name in REQUIRED_COLUMNS:
        if name not in row:
            raise InputError(f"capability {capability!r} has a row without {name!r}")
    sample = DatBenchSample.from_hf_row({**row, "image": None}, capability)
    return {k: v for k, v in vars(sample).items() if k != "image"}


class _IdCheck:
    """Ids must be usable file names and unique across the export."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, sample_id: Any, where: str) -> str:
        name = safe_file_stem(sample_id)
        if name is None:
            raise InputError(
                f"{where}: sample id {sample_id!r} cannot be used as a file name (allowed: "
                "letters, digits, '.', '_', '-', starting with a letter or digit)"
            )
        if name in self.seen:
            raise InputError(f"{where}: duplicate sample id {name!r} (first in {self.seen[name]})")
        self.seen[name] = where
        return name


def _swap_in_images(run: RunDir, staging: Path) -> None:
    images, old = run.path(IMAGES), run.path(_OLD_IMAGES)
    shutil.rmtree(old, ignore_errors=True)
    with jsonio.writing(images):
        if images.exists():
            os.replace(images, old)
        os.replace(staging, images)
    shutil.rmtree(old, ignore_errors=True)


def export_datbench(
    plan: ExportPlan,
    run: RunDir,
    *,
    shard: Shard | None = None,
    requests: RequestSettings | None = None,
    warn: Warn = _ignore,
    advance: Advance = _ignore,
) -> dict[str, Any]:
    """Write the run directory for ``plan`` (and the OpenAI request files, with ``requests``);
    return the manifest.

    With ``shard``, tasks.jsonl, images and requests hold only that shard's samples, while
    references.jsonl always holds every sample, so any shard's run directory scores the
    concatenated responses of all shards (and reports the gaps and duplicates).
    """
    staging = run.path(STAGING)
    with jsonio.writing(staging):
        run.root.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
    check = _IdCheck()
    counts: dict[str, int] = {}
    judge_count = task_count = 0
    no_image: list[str] = []
    unknown_format: list[str] = []
    try:
        with (
            jsonio.atomic_writer(run.path(TASKS)) as tasks,
            jsonio.atomic_writer(run.path(REFERENCES)) as references,
        ):
            for capability, ds in plan.splits.items():
                counts[capability] = 0
                for index, row in enumerate(iter_rows(ds)):
                    name = check(row.get("id"), f"{capability} row {index}")
                    record = _reference(row, capability)
                    references.write(jsonio.dumps(record) + b"\n")
                    counts[capability] += 1
                    judge_count += record["eval_mode"] == "judge"
                    advance(1)
                    if shard is not None and not shard.contains(name):
                        continue
                    image = image_cell_bytes(row.get("image"))
                    image_rel = None
                    if image is None:
                        no_image.append(name)
                    else:
                        extension = extension_from_bytes(image[0])
                        if extension == "bin":
                            unknown_format.append(name)
                        file_name = f"{name}.{extension}"
                        with jsonio.writing(run.path(IMAGES) / file_name):
                            (staging / file_name).write_bytes(image[0])
                        image_rel = f"{IMAGES}/{file_name}"
                    task = {
                        "id": name,
                        "capability": capability,
                        "question": DatBenchSample(**record, image=None).formatted_question(),
                        "eval_mode": record["eval_mode"],
                        "image": image_rel,
                    }
                    tasks.write(jsonio.dumps(task) + b"\n")
                    task_count += 1
            # Every row was good: from here on the old export is replaced.
            run.path(MANIFEST).unlink(missing_ok=True)
        _swap_in_images(run, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if no_image:
        warn(
            f"{len(no_image)} sample(s) have no image bytes; their tasks have image null: "
            f"{name_ids(no_image)}"
        )
    if unknown_format:
        warn(
            f"{len(unknown_format)} sample(s) have image bytes in no known image format "
            f"(corrupt?), copied unchanged as .bin files: {name_ids(unknown_format)}"
        )
    request_files = write_task_requests(run, requests)
    options: dict[str, Any] = {"limit": plan.limit}
    if shard is not None:
        options["shard"] = {"index": shard.index, "count": shard.count, "tasks": task_count}
    if requests is not None:
        options["openai_requests"] = {
            **requests.describe(),
            "files": [p.relative_to(run.root).as_posix() for p in request_files],
        }
    manifest = {
        "benchmark": "datbench",
        "source": plan.source,
        "split": plan.split,
        "capabilities": list(plan.splits),
        "counts": {
            "samples": sum(counts.values()),
            "by_capability": counts,
            "judge_samples": judge_count,
            "images": task_count - len(no_image),
            "tasks": task_count,
        },
        "options": options,
    }
    run.write_manifest(manifest)
    return manifest
