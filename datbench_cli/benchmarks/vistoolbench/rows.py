"""Dataset rows -> :class:`Task` records (spec §0): turns, rubrics, images, group fields.

Image cells are read undecoded (``{"bytes", "path"}``) so the original bytes can be written
unchanged; a Hugging Face ``Dataset`` is read through its Arrow batches, which is what casting
the image columns to ``Image(decode=False)`` gives, without copying the dataset.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from datbench_cli.benchmarks.vistoolbench.model import (
    UNKNOWN_GROUP,
    IdRegistry,
    ImageBlob,
    Rubric,
    Task,
    Turn,
)
from datbench_cli.benchmarks.vistoolbench.tally import Tally, Warn, ignore
from datbench_cli.errors import InputError, name_ids
from datbench_cli.files.images import (
    DatasetFiles,
    ImageOutsideDataset,
    encode_png,
    extension_from_bytes,
    image_cell_bytes,
)
from datbench_cli.files.loading import read_batches

USED_COLUMNS = (
    "id",
    "turncase",
    "num_turns",
    "prompt_category",
    "eval_focus",
    "turn_prompts",
    "turn_golden_answers",
    "rubrics_by_turn",
    "images",
    "images_by_turn",
)
REQUIRED_COLUMNS = ("id", "turn_prompts")
IMAGE_COLUMNS = ("images", "images_by_turn")
_RUBRIC_FIELDS = ("description", "weight", "critical")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_UNSAFE_DIR_CHARS = re.compile(r"[^A-Za-z0-9._-]")
_MAX_DIR_NAME = 120
_BATCH_ROWS = 16


def iter_dataset_rows(dataset: Any, *, with_images: bool = True) -> Iterator[dict[str, Any]]:
    """Rows of a ``datasets.Dataset`` (images undecoded) or of any iterable of dicts.

    ``with_images=False`` leaves a ``Dataset``'s image columns out (a cheap validation pass).
    """
    if hasattr(dataset, "with_format") and hasattr(dataset, "select_columns"):
        # A Dataset or a streaming IterableDataset: read its Arrow batches, never decoding.
        known = dataset.column_names
        if known is not None:
            missing = [c for c in REQUIRED_COLUMNS if c not in known]
            if missing:
                raise InputError(f"the dataset lacks the column(s) {', '.join(missing)}")
            skipped = () if with_images else IMAGE_COLUMNS
            dataset = dataset.select_columns(
                [c for c in USED_COLUMNS if c in known and c not in skipped]
            )
        for batch in read_batches(dataset, _BATCH_ROWS, "the dataset"):
            yield from batch.to_pylist()
    else:
        yield from dataset


def group_value(value: Any) -> str:
    """A group field (turncase, prompt_category, eval_focus); missing or empty -> "unknown"."""
    if value is None:
        return UNKNOWN_GROUP
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else UNKNOWN_GROUP


def parse_weight(value: Any, where: str) -> int | float:
    """A rubric weight: a JSON number or a string holding one ("5", "4.0")."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"{where}: weight must be a number, got {orjson.dumps(value).decode()}")
    number: int | float | None = None
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        match = _NUMBER_RE.fullmatch(text)
        if match:
            number = float(text) if (match.group(1) or match.group(2)) else int(text)
    if number is None or not math.isfinite(number):
        raise InputError(f"{where}: weight {value!r} is not a number")
    return number


def parse_rubric(rubric_id: str, body: Any, where: str) -> Rubric:
    """One rubric object ``{description, weight, critical, ...}``."""
    where = f"{where}, rubric {rubric_id!r}"
    if not isinstance(body, dict):
        raise InputError(f"{where}: a rubric must be a JSON object")
    if "weight" not in body:
        raise InputError(f"{where}: rubric has no weight")
    description = body.get("description")
    if not isinstance(description, str):
        raise InputError(f"{where}: rubric has no description text")
    extra = {key: value for key, value in body.items() if key not in _RUBRIC_FIELDS}
    return Rubric(
        rubric_id, description, parse_weight(body["weight"], where), body.get("critical"), extra
    )


def parse_rubrics(entry: Any, where: str) -> list[Rubric]:
    """The rubrics of one turn from its ``rubrics_by_turn`` entry, in key order."""
    if entry is None:
        return []
    if isinstance(entry, str):
        if not entry.strip():
            return []
        try:
            data = orjson.loads(entry)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{where}: rubrics_by_turn is not valid JSON ({exc})") from None
    else:
        data = entry
    if data is None:
        return []
    if not isinstance(data, dict):
        raise InputError(f"{where}: rubrics_by_turn must be a JSON object of rubrics")
    return [parse_rubric(str(key), body, where) for key, body in data.items()]


def _text(value: Any, where: str, what: str) -> str:
    if isinstance(value, str):
        return value
    raise InputError(f"{where}: {what} must be a string, got {type(value).__name__}")


def _image_blob(
    cell: Any, where: str, tally: Tally, task_id: str, files: DatasetFiles | None
) -> ImageBlob | None:
    if isinstance(cell, bytes | bytearray):
        return _original_bytes(bytes(cell), tally, task_id)
    if isinstance(cell, dict):
        try:
            found = image_cell_bytes(cell, files)
        except ImageOutsideDataset as exc:
            raise InputError(f"{where}: {exc} (a dataset defect)") from None
        if found is None:
            raise InputError(f"{where}: image cell has neither bytes nor a readable path")
        return _original_bytes(found[0], tally, task_id)
    if hasattr(cell, "save"):
        tally.add("decoded images had no original bytes and were re-encoded as PNG", task_id)
        return ImageBlob(encode_png(cell), "png")
    if cell is None:
        tally.add("empty image cells were skipped", task_id)
        return None
    raise InputError(f"{where}: not an image cell ({type(cell).__name__})")


def _original_bytes(data: bytes, tally: Tally, task_id: str) -> ImageBlob:
    """The bytes as they are, named by what they hold (not by the cell's file name, which may
    say otherwise); bytes in no known image format are named in a warning and kept as .bin."""
    extension = extension_from_bytes(data)
    if extension == "bin":
        tally.add(
            "images in no known image format (corrupt?) were copied unchanged as .bin files",
            task_id,
        )
    return ImageBlob(data, extension)


def _list_column(row: dict[str, Any], column: str, where: str) -> list[Any]:
    """A list column of a row (missing or null: empty); anything else is a dataset defect."""
    value = row.get(column)
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InputError(f"{where}: {column} must be a list, got {type(value).__name__}")
    return list(value)


def _turn_image_cells(row: dict[str, Any], count: int, task_id: str, tally: Tally) -> list[list]:
    where = f"task {name_ids([repr(task_id)])}"
    by_turn = _list_column(row, "images_by_turn", where)
    flat = _list_column(row, "images", where)
    for k, item in enumerate(by_turn[:count]):
        if item is not None and not isinstance(item, list | tuple):
            raise InputError(
                f"{where}, turn {k}: images_by_turn items must be lists of image cells, "
                f"got {type(item).__name__}"
            )
    if not any(by_turn):
        cells: list[list] = [[] for _ in range(count)]
        if flat:
            tally.add("images_by_turn is missing or empty: all images were put on turn 0", task_id)
            cells[0] = list(flat)
        return cells
    if len(by_turn) > count:
        tally.add(
            "images_by_turn has more entries than turns: the extra ones were ignored", task_id
        )
    return [list(by_turn[k] or []) if k < len(by_turn) else [] for k in range(count)]


def task_from_row(
    row: dict[str, Any],
    row_index: int,
    *,
    first_image_only: bool = False,
    tally: Tally,
    files: DatasetFiles | None = None,
) -> Task:
    """One dataset row as a :class:`Task` (images as original bytes; a cell's ``path`` is read
    only inside ``files``, see :func:`~datbench_cli.files.images.image_cell_bytes`)."""
    task_id = row.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise InputError(f"dataset row {row_index}: id must be a non-empty string")
    where_task = f"task {name_ids([repr(task_id)])}"
    prompts = row.get("turn_prompts")
    if not isinstance(prompts, list) or not prompts:
        raise InputError(f"{where_task}: turn_prompts must be a non-empty list")
    count = len(prompts)
    declared = row.get("num_turns")
    if declared is not None and declared != count:
        tally.add("num_turns disagrees with the number of turn prompts (the prompts win)", task_id)
    goldens = _list_column(row, "turn_golden_answers", where_task)
    rubric_entries = _list_column(row, "rubrics_by_turn", where_task)
    image_cells = _turn_image_cells(row, count, task_id, tally)
    turns = []
    for k, prompt in enumerate(prompts):
        where = f"{where_task}, turn {k}"
        if prompt is None:
            tally.add("turns with a null prompt got an empty one", f"{task_id}::{k}")
            prompt = ""
        golden = goldens[k] if k < len(goldens) else None
        if golden is None:
            tally.add("turns without a golden answer got an empty one", f"{task_id}::{k}")
            golden = ""
        if k >= len(rubric_entries):
            tally.add(
                "rubrics_by_turn has no entry for a turn: it has no rubrics", f"{task_id}::{k}"
            )
        cells = image_cells[k][:1] if first_image_only else image_cells[k]
        images = [
            blob
            for i, cell in enumerate(cells)
            if (blob := _image_blob(cell, f"{where}, image {i}", tally, task_id, files)) is not None
        ]
        turns.append(
            Turn(
                index=k,
                prompt=_text(prompt, where, "the prompt"),
                golden_answer=_text(golden, where, "the golden answer"),
                rubrics=parse_rubrics(
                    rubric_entries[k] if k < len(rubric_entries) else None, where
                ),
                images=images,
            )
        )
    return Task(
        id=task_id,
        turncase=group_value(row.get("turncase")),
        num_turns=count,
        prompt_category=group_value(row.get("prompt_category")),
        eval_focus=group_value(row.get("eval_focus")),
        turns=turns,
        row_index=row_index,
    )


def iter_tasks(
    rows: Iterable[dict[str, Any]],
    *,
    turncase: str | None = None,
    limit: int | None = None,
    first_image_only: bool = False,
    warn: Warn = ignore,
    files: DatasetFiles | None = None,
) -> Iterator[Task]:
    """Tasks in dataset order, after the ``turncase`` filter and ``limit``; ids checked unique.

    ``files``: the dataset's folders, the only place an image cell's ``path`` is read from.
    """
    tally = Tally()
    ids = IdRegistry()
    produced = 0
    for row_index, row in enumerate(rows):
        if limit is not None and produced >= limit:
            break
        if not isinstance(row, dict):
            raise InputError(f"dataset row {row_index} is not a mapping")
        if turncase is not None and group_value(row.get("turncase")) != turncase:
            continue
        task = task_from_row(
            row, row_index, first_image_only=first_image_only, tally=tally, files=files
        )
        ids.add(task, f"dataset row {row_index}")
        produced += 1
        yield task
    tally.flush(warn)


def image_dir_name(task_id: str) -> str:
    """The ``images/`` sub-directory of a task: unsafe characters become ``_``."""
    name = _UNSAFE_DIR_CHARS.sub("_", task_id)
    if not name.strip("."):
        # "", "." and ".." would not name a directory of their own.
        name = "_" * max(len(name), 1)
    if len(name) > _MAX_DIR_NAME:
        digest = hashlib.sha256(task_id.encode()).hexdigest()[:12]
        name = f"{name[: _MAX_DIR_NAME - 13]}_{digest}"
    return name


class ImageDirs:
    """Assigns each task its image directory; a later colliding name gets ``_<row index>``.

    Names are compared case-insensitively, so a run directory also works on file systems that
    ignore case.
    """

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def assign(self, task: Task) -> str:
        name = image_dir_name(task.id)
        while name.casefold() in self._taken:
            name = f"{name}_{task.row_index}"
        self._taken.add(name.casefold())
        return name
