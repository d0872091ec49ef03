"""DatBench export: dataset -> images/, tasks.jsonl, references.jsonl and (last) datbench.json.

One pass over each capability's rows, read as Arrow batches (images are never decoded). Ids
are checked as they stream by; every file (images, tasks, references, request files, the
manifest last) is written into a private folder of the run directory and switched in whole
only when every row was good (:mod:`datbench_cli.files.staging`): a failed or killed export
leaves the earlier one, a kill during the switch is finished by the next command.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import SimpleQueue
from typing import Any

from datbench_cli.batch.requests import REQUESTS_DIR, RequestSettings
from datbench_cli.batch.shards import Shard
from datbench_cli.benchmarks.datbench import schema
from datbench_cli.benchmarks.datbench.schema import REFERENCE_FIELDS, DatBenchSample
from datbench_cli.benchmarks.datbench.stages import write_task_requests
from datbench_cli.errors import InputError, name_ids
from datbench_cli.files import jsonio
from datbench_cli.files.export_guard import ExportGuard
from datbench_cli.files.fields import wrong_type
from datbench_cli.files.images import (
    DatasetFiles,
    ImageOutsideDataset,
    extension_from_bytes,
    image_cell_bytes,
)
from datbench_cli.files.loading import (
    check_limit,
    dataset_folders,
    load_source_split,
    parquet_rows,
    read_batches,
)
from datbench_cli.files.provenance import image_sizes, pins, row_digest, sha256_bytes
from datbench_cli.files.rundir import (
    IMAGES,
    REFERENCES,
    TASKS,
    RunDir,
    safe_file_stem,
    sha256_file,
)
from datbench_cli.files.sources import Source, pin_local_later, resolve_source, streamed_files
from datbench_cli.files.staging import Stage, check_replaceable

Warn = Callable[[str], None]
Advance = Callable[[int], None]

# The schema's required columns but the image, which is exported apart (a row may have none).
REQUIRED_COLUMNS = tuple(c for c in schema.REQUIRED_COLUMNS if c != "image")
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
    pinned: Source | None = None
    # The source with its data digest (being computed while the export runs; see
    # :func:`~datbench_cli.files.sources.pin_local_later`).
    pin: Callable[[], Source] | None = None
    # Rows per capability read from the parquet footers of streamed local files (a progress
    # total without reading the rows).
    rows: dict[str, int] = field(default_factory=dict)

    def pinned_source(self) -> Source | None:
        """The source as the manifest pins it (waits for a local data digest)."""
        if self.pin is not None:
            self.pinned = self.pin()
            self.pin = None
        return self.pinned

    @property
    def total(self) -> int | None:
        """The number of rows, when the loader knows it without reading them."""
        try:
            return sum(len(ds) for ds in self.splits.values())
        except TypeError:
            if set(self.rows) != set(self.splits):
                return None
            cap = self.limit if self.limit is not None else float("inf")
            return int(sum(min(rows, cap) for rows in self.rows.values()))


def plan_export(
    capabilities: list[str],
    source: str,
    split: str,
    limit: int | None,
    revision: str | None = None,
) -> ExportPlan:
    """Pin the source (hub commit or local data digest), load each capability's split (lazily
    for a local directory) and check its columns."""
    check_limit(limit)
    pinned = resolve_source(source, revision)
    plan = ExportPlan(source, split, limit, pinned=pinned)
    known = _load_splits(plan, pinned, capabilities, source, split, limit)
    # The data files are those the loaded splits read (asked of datasets again only where a
    # split does not say), found after the loading, not in a thread beside it: datasets'
    # progress bars (tqdm's class-level lock) are not safe from two threads. Only their
    # hashing runs in the background, while the rows stream.
    plan.pin = pin_local_later(pinned, capabilities, split, known)
    return plan


def _load_splits(
    plan: ExportPlan,
    pinned: Source,
    capabilities: list[str],
    source: str,
    split: str,
    limit: int | None,
) -> dict[str | None, list[Path]]:
    """Load each capability's split into ``plan``; return the data files of those that name
    them (:func:`~datbench_cli.files.sources.streamed_files`)."""
    known: dict[str | None, list[Path]] = {}
    for capability in capabilities:
        ds = load_source_split(pinned, capability, split)
        columns = ds.column_names
        missing = [c for c in REQUIRED_COLUMNS if columns is not None and c not in columns]
        if missing:
            raise InputError(
                f"capability {capability!r} of {source!r} lacks the column(s) {', '.join(missing)}"
            )
        if pinned.how == "local-files" and (files := streamed_files(ds)) is not None:
            known[capability] = files
            plan.rows[capability] = parquet_rows(files, REQUIRED_COLUMNS)
        plan.splits[capability] = ds.take(limit) if limit is not None else ds
    return known


def iter_rows(dataset: Any, what: str = "the dataset") -> Iterator[dict[str, Any]]:
    """Rows as plain dicts from Arrow batches: image cells stay ``{"bytes", "path"}``."""
    for batch in read_batches(dataset, _BATCH_ROWS, what):
        yield from batch.to_pylist()


def _reference(row: dict[str, Any], capability: str) -> dict[str, Any]:
    """Everything scoring needs for one row: the sample (reference defaults applied), no image."""
    for name in REQUIRED_COLUMNS:
        if name not in row:
            raise InputError(f"capability {capability!r} has a row without {name!r}")
    sample = DatBenchSample.from_hf_row({**row, "image": None}, capability)
    _check_prompt_text(sample, capability)
    return {k: v for k, v in vars(sample).items() if k != "image"}


def _check_prompt_text(sample: DatBenchSample, capability: str) -> None:
    """The prompt parts must be text: a null one would reach the model as the word "None"
    (the judge prompt: text or null); the fields scoring reads, of their types
    (:data:`REFERENCE_FIELDS`)."""
    defect = (
        wrong_type(vars(sample), REFERENCE_FIELDS)
        or sample.prompt_defect()
        or sample.judge_prompt_defect()
    )
    if defect is not None:
        raise InputError(f"capability {capability!r}, sample {sample.id!r}: {defect}")


class _IdCheck:
    """Ids must be usable file names and unique across the export.

    Ids that differ only in case (``Sample_A``, ``sample_a``) are kept, but their image files
    would be one file on a case-insensitive file system (macOS, Windows shares): every id after
    the first of such a group gets an image file stem with a ``~<n>`` suffix (see
    :meth:`image_stem`), and the export names them in a warning.
    """

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self._stems: dict[str, str] = {}
        self._taken: set[str] = set()
        self.case_clashes: list[str] = []

    def __call__(self, sample_id: Any, where: str) -> str:
        name = safe_file_stem(sample_id)
        if name is None:
            raise InputError(
                f"{where}: sample id {name_ids([repr(sample_id)])} cannot be used as a file name "
                "(allowed: letters, digits, '.', '_', '-', starting with a letter or digit)"
            )
        if name in self.seen:
            raise InputError(f"{where}: duplicate sample id {name!r} (first in {self.seen[name]})")
        self.seen[name] = where
        stem, number = name, 1
        while stem.casefold() in self._taken:
            number += 1
            stem = f"{name}~{number}"
        if stem != name:
            self.case_clashes.append(name)
        self._taken.add(stem.casefold())
        self._stems[name] = stem
        return name

    def image_stem(self, name: str) -> str:
        """The image file stem of a checked id (the id itself unless its case clashed)."""
        return self._stems[name]


class ImageDigests:
    """Each image's SHA-256 and its row's digest, computed in a background thread (hashlib
    releases the GIL) while the export goes on reading and writing; at most ``window`` images
    wait, so memory stays bounded. :meth:`fill` puts every digest into its slot.

    A plain daemon thread fed through ``queue.SimpleQueue`` (C-level, lock-free on the caller's
    side), not a ``ThreadPoolExecutor``: a Ctrl-C landing inside ``submit`` can leave the
    executor's shutdown lock taken, and the exit handler ``concurrent.futures`` registers then
    waits on it for ever."""

    def __init__(self, window: int = 64) -> None:
        self._jobs: SimpleQueue[tuple[str, bytes, dict[str, Any]] | None] = SimpleQueue()
        self._results: SimpleQueue[tuple[str, tuple[str, str] | BaseException]] = SimpleQueue()
        self._outstanding = 0
        self._done: dict[str, tuple[str, str]] = {}
        self._files: dict[str, str] = {}
        self._window = window
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="datbench-sha256", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            name, data, record = job
            if self._stop.is_set():
                continue
            try:
                self._results.put((name, _digests(data, record)))
            except BaseException as error:  # handed to the export's thread, raised there
                self._results.put((name, error))

    def _collect_one(self) -> None:
        name, result = self._results.get()
        self._outstanding -= 1
        if isinstance(result, BaseException):
            raise result
        self._done[name] = result

    def add(self, name: str, data: bytes, record: dict[str, Any]) -> None:
        self._jobs.put((name, data, record))
        self._outstanding += 1
        while self._outstanding > self._window:
            self._collect_one()

    def name_file(self, name: str, relative: str) -> None:
        """The image of row ``name`` was written as ``relative``."""
        self._files[name] = relative

    def fill(self, rows: dict[str, str], written: dict[str, str]) -> None:
        while self._outstanding:
            self._collect_one()
        for name, (image_sha, row_sha) in self._done.items():
            rows[name] = row_sha
            relative = self._files.get(name)
            if relative is not None:
                written[relative] = image_sha

    def close(self) -> None:
        """Drop what is still queued and let the thread end (it is a daemon: never waited for
        at exit)."""
        self._stop.set()
        self._jobs.put(None)


def _digests(data: bytes, record: dict[str, Any]) -> tuple[str, str]:
    image_sha = sha256_bytes(data)
    return image_sha, row_digest(record, [image_sha])


def export_datbench(
    plan: ExportPlan,
    run: RunDir,
    *,
    shard: Shard | None = None,
    requests: RequestSettings | None = None,
    force: bool = False,
    no_image: bool = False,
    warn: Warn = _ignore,
    advance: Advance = _ignore,
) -> dict[str, Any]:
    """Write the run directory for ``plan`` (and the OpenAI request files, with ``requests``);
    return the manifest.

    ``no_image``: a blind run: the same tasks and references with ``image`` null and no image
    written (text-only requests), so ``datbench compare blind-run run`` is the vision delta.

    With ``shard``, tasks.jsonl, images and requests hold only that shard's samples, while
    references.jsonl always holds every sample, so any shard's run directory scores the
    concatenated responses of all shards (and reports the gaps and duplicates). Only files an
    earlier export wrote are replaced or removed (:mod:`datbench_cli.files.export_guard`);
    ``force`` allows a non-empty directory that holds no export.
    """
    with run.lock("export-tasks", create=True):
        return ExportGuard.around(
            run.root,
            lambda guard, staged, stage: _export(
                plan, run, guard, staged, stage, shard, requests, warn, advance, no_image
            ),
            force=force,
        )


def _export(
    plan: ExportPlan,
    run: RunDir,
    guard: ExportGuard,
    staged: RunDir,
    stage: Stage,
    shard: Shard | None,
    requests: RequestSettings | None,
    warn: Warn,
    advance: Advance,
    no_image: bool = False,
) -> dict[str, Any]:
    check_replaceable(run.path(REQUESTS_DIR))
    check_replaceable(run.path(IMAGES))
    files = DatasetFiles.of(dataset_folders(plan.pinned.load_path if plan.pinned else plan.source))
    check = _IdCheck()
    counts: dict[str, int] = {}
    judge_count = task_count = image_count = 0
    imageless: list[str] = []
    unknown_format: list[str] = []
    no_answer: list[str] = []
    written: dict[str, str] = {}
    rows: dict[str, str] = {}
    outside: list[str] = []
    digests = ImageDigests()
    with (
        contextlib.closing(digests),
        jsonio.atomic_writer(staged.path(TASKS)) as tasks,
        jsonio.atomic_writer(staged.path(REFERENCES)) as references,
    ):
        for capability, ds in plan.splits.items():
            counts[capability] = 0
            what = f"{plan.source!r} (config {capability!r})"
            for index, row in enumerate(iter_rows(ds, what)):
                name = check(row.get("id"), f"{capability} row {index}")
                record = _reference(row, capability)
                if record["answer"] is None:
                    no_answer.append(name)
                references.write(jsonio.dumps(record) + b"\n")
                counts[capability] += 1
                judge_count += record["eval_mode"] == "judge"
                advance(1)
                try:
                    image = image_cell_bytes(row.get("image"), files)
                except ImageOutsideDataset:
                    outside.append(name)
                    image = None
                if image is None:
                    rows[name] = row_digest(record, [])
                else:
                    # Hashed on another core while this one writes (the slot keeps the order).
                    rows[name] = ""
                    digests.add(name, image[0], record)
                if shard is not None and not shard.contains(name):
                    continue
                if no_image:
                    image = None
                image_rel = None
                if image is None:
                    if not no_image and (not outside or outside[-1] != name):
                        imageless.append(name)
                else:
                    extension = extension_from_bytes(image[0])
                    if extension == "bin":
                        unknown_format.append(name)
                    file_name = f"{check.image_stem(name)}.{extension}"
                    image_rel = f"{IMAGES}/{file_name}"
                    guard.check(image_rel)
                    stage.write(image_rel, image[0])
                    image_count += 1
                    written[image_rel] = ""
                    digests.name_file(name, image_rel)
                task = {
                    "id": name,
                    "capability": capability,
                    "question": DatBenchSample(**record, image=None).formatted_question(),
                    "eval_mode": record["eval_mode"],
                    "image": image_rel,
                }
                tasks.write(jsonio.dumps(task) + b"\n")
                task_count += 1
        digests.fill(rows, written)
        pinned = plan.pinned_source()
    empty = [capability for capability, count in counts.items() if count == 0]
    if empty:
        warn(
            f"{len(empty)} capability(ies) have no rows in split {plan.split!r}, so no sample "
            f"of them is exported: {', '.join(empty)}"
        )
    if no_answer:
        warn(
            f"{len(no_answer)} sample(s) have a null answer, a dataset defect (nothing to score "
            f"them against): {name_ids(no_answer)}"
        )
    if outside:
        warn(
            f"{len(outside)} sample(s) have an image path outside the dataset's folder, which "
            f"is never read; they are exported without an image: {name_ids(outside)}"
        )
    if imageless:
        warn(
            f"{len(imageless)} sample(s) have no image bytes; their tasks have image null: "
            f"{name_ids(imageless)}"
        )
    if unknown_format:
        warn(
            f"{len(unknown_format)} sample(s) have image bytes in no known image format "
            f"(corrupt?), copied unchanged as .bin files: {name_ids(unknown_format)}"
        )
    if check.case_clashes:
        warn(
            f"{len(check.case_clashes)} sample id(s) differ from an earlier id only in case; "
            "their image files got a '~N' suffix so that they stay apart on case-insensitive "
            f"file systems: {name_ids(check.case_clashes)}"
        )
    request_files = write_task_requests(staged, requests, named=run)
    options: dict[str, Any] = {"limit": plan.limit}
    if no_image:
        options["no_image"] = True
    if shard is not None:
        options["shard"] = {"index": shard.index, "count": shard.count, "tasks": task_count}
    if requests is not None:
        options["openai_requests"] = {
            **requests.describe(),
            "files": [p.relative_to(staged.root).as_posix() for p in request_files],
        }
    for name in (TASKS, REFERENCES):
        written[name] = sha256_file(staged.path(name))
    for path in request_files:
        written[path.relative_to(staged.root).as_posix()] = sha256_file(path)
    manifest = {
        "benchmark": "datbench",
        "source": plan.source,
        "revision": pinned.describe() if pinned is not None else None,
        "split": plan.split,
        "capabilities": list(plan.splits),
        "counts": {
            "samples": sum(counts.values()),
            "by_capability": counts,
            "judge_samples": judge_count,
            "images": image_count,
            "tasks": task_count,
        },
        "options": options,
        **pins(),
        "rows": rows,
        "written": dict(sorted(written.items())),
        "image_sizes": image_sizes(staged.root, written),
    }
    return manifest
