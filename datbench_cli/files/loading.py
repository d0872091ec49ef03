"""Loading a benchmark through the real ``datasets.load_dataset``: a hub id or a local copy.

Sources are classified and pinned first (:mod:`datbench_cli.files.sources`): a mistyped path
is "no such directory", a hub id is resolved to a commit (online through the hub API, whose
connection error fails fast with one sentence on how to point at a local copy instead of the
hub client's retries; offline, ``HF_HUB_OFFLINE=1``, from the local hub cache only).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError, UsageError
from datbench_cli.files.sources import (
    SOURCE_ENV,
    Source,
    hub_offline_mode,
    local_copy_hint,
    resolve_source,
    streamed_files,
)

__all__ = ["SOURCE_ENV", "is_local_source", "load_split", "load_source_split"]


def check_rows(dataset: Any, rows: str) -> None:
    """A ``ValueError`` for a ``DatasetDict`` (``load_dataset`` without ``split=``): it holds
    splits, not rows, and read as rows it fails far from the cause; a ``TypeError`` for what
    is no iterable of rows at all (``None``, a number, a string, one row), naming ``rows``,
    what ``hf_dataset`` must be."""
    if isinstance(getattr(dataset, "column_names", None), dict) and hasattr(dataset, "keys"):
        splits = ", ".join(map(str, dataset.keys()))
        raise ValueError(
            f"hf_dataset is a DatasetDict of splits ({splits}), not rows: pass one split, "
            'e.g. load_dataset(..., split="test")'
        )
    if not_a_collection(dataset):
        raise TypeError(
            f"hf_dataset must be {rows} (a datasets split), got {type(dataset).__name__}"
        )


def check_flag(value: Any, argument: str) -> None:
    """A ``TypeError`` naming ``argument`` unless ``value`` is ``True`` or ``False``: a truthy
    string such as ``"false"`` or ``"no"`` would otherwise switch the option on."""
    if not isinstance(value, bool):
        raise TypeError(f"{argument} must be True or False, got {type(value).__name__}")


def not_a_collection(values: Any) -> bool:
    """Whether a caller's argument is no iterable of records: ``None``, a number, a string,
    bytes or a single mapping."""
    return isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable)


def parquet_rows(files: list[Path], required: Sequence[str] = ()) -> int:
    """The rows of parquet ``files`` as their footers count them. A file whose footer cannot
    be read, or whose schema lacks a ``required`` column, is an :class:`InputError` naming it
    (read row by row later, it would be named by no one, and a column missing from one file of
    several is read as nulls)."""
    import pyarrow.parquet as pq
    from pyarrow import ArrowException

    rows = 0
    for path in files:
        try:
            metadata = pq.read_metadata(path)
            names = set(metadata.schema.to_arrow_schema().names)
        except (OSError, ArrowException) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise InputError(
                f"a data file is corrupt or truncated: not a readable parquet file ({first})", path
            ) from None
        missing = [column for column in required if column not in names]
        if missing:
            # What it has tells another benchmark's (or another split's) file at a glance.
            has = ", ".join(sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise InputError(
                f"a data file lacks the column(s) {', '.join(missing)} (its columns: {has})", path
            )
        rows += metadata.num_rows
    return rows


def _name_unreadable_file(folder: Path) -> None:
    """After ``load_dataset`` failed on a local folder: name its first parquet file whose
    footer cannot be read (datasets' own error does not say which file), if there is one."""
    parquet_rows(sorted(p for p in folder.rglob("*.parquet") if p.is_file()))


def is_local_source(source: str) -> bool:
    """True when ``source`` names an existing local directory."""
    return Path(source).expanduser().is_dir()


_STREAM_BATCH_ROWS = 32
_CARD = "README.md"


def check_limit(limit: int | None) -> None:
    """Refuse a ``--limit`` that would export nothing."""
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1 (omit it to export everything), got {limit}")


def dataset_folders(source: str) -> list[Path]:
    """The folders an image cell's ``path`` may name: a local copy's folder (and, for a hub
    cache snapshot, its repository folder, where the snapshot's links point), or a hub id's
    folder in the hub cache and the ``datasets`` download cache."""
    if is_local_source(source):
        folder = Path(os.path.realpath(Path(source).expanduser()))
        folders = [folder]
        if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("datasets--"):
            folders.append(folder.parent.parent)
        return folders
    from datasets import config
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return [
        Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=source, repo_type="dataset"),
        Path(config.DOWNLOADED_DATASETS_PATH),
    ]


def _card_data_files(folder: Path) -> Iterator[tuple[str, str]]:
    """``(config name, data_files path)`` for every path the dataset card's ``configs`` name."""
    card = folder / _CARD
    try:
        text = card.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if not text.startswith("---"):
        return
    import yaml  # a dependency of datasets

    try:
        meta = yaml.safe_load(text[3:].split("\n---", 1)[0])
    except yaml.YAMLError as exc:
        # datasets fails on it too, with the first line of a multi-line message and no file.
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise InputError(
            f"the dataset card's YAML header is not valid YAML ({problem})",
            card,
            mark.line + 1 if mark is not None else None,
        ) from None
    configs = meta.get("configs") if isinstance(meta, dict) else None
    for entry in configs if isinstance(configs, list) else []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("config_name", "default"))
        files = entry.get("data_files")
        items = files if isinstance(files, list) else [files]
        for item in items:
            paths = item.get("path") if isinstance(item, dict) else item
            for path in paths if isinstance(paths, list) else [paths]:
                if isinstance(path, str):
                    yield name, path


def check_card_paths(folder: Path) -> None:
    """Refuse a local dataset whose card points ``data_files`` outside its folder (an absolute
    path, ``..``, a URL): loading it would read files that are not the dataset's."""
    root = Path(os.path.realpath(folder))
    for config, path in _card_data_files(folder):
        inside = "://" not in path and not Path(path).is_absolute()
        if inside:
            resolved = Path(os.path.realpath(root / path.split("*", 1)[0]))
            inside = resolved == root or resolved.is_relative_to(root)
        if not inside:
            raise InputError(
                f"config {config[:60]!r} names data_files {path[:120]!r} outside the dataset's "
                "folder; a local dataset is read only from its own folder",
                folder / _CARD,
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


def read_batches(dataset: Any, batch_size: int, what: str) -> Iterator[Any]:
    """Arrow batches of a (streaming) dataset; a data file that turns out to be corrupt or
    truncated while it is read becomes one :class:`InputError` naming ``what``."""
    from pyarrow import ArrowException

    batches = dataset.with_format("arrow").iter(batch_size=batch_size)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, ValueError, RuntimeError, ArrowException) as exc:
            raise InputError(
                f"cannot read {what}: a data file is corrupt or truncated ({_first_line(exc)})",
                _unreadable_file(dataset),
            ) from None
        yield batch


def _unreadable_file(dataset: Any) -> Path | None:
    """The first data file of a streaming split that cannot be read whole, a row group at a
    time (asked only once reading failed, to name it); ``None`` when none is found."""
    import pyarrow.parquet as pq
    from pyarrow import ArrowException

    for path in streamed_files(dataset) or ():
        try:
            parquet = pq.ParquetFile(path)
            for group in range(parquet.num_row_groups):
                parquet.read_row_group(group)
        except (OSError, ValueError, ArrowException):
            return path
    return None


_parquet_streamed = False


def parquet_streamed() -> bool:
    """Whether this process opened a streaming parquet scan (an Arrow reader that may keep an
    I/O thread alive when the scan is stopped early; see ``datbench_cli.cli.app.console_main``)."""
    return _parquet_streamed


def load_split(
    source: str | Source,
    config: str | None,
    split: str,
    columns: list[str] | None = None,
) -> Any:
    """``datasets.load_dataset(source, config, split=split)`` with clear, one-sentence failures.

    ``source`` is a :class:`Source` (pinned by :func:`resolve_source`) or a string, which is
    resolved here. A local directory is read in streaming mode: its parquet files are read
    directly, with no Arrow cache copy (which would double the disk traffic, and which
    ``datasets`` may reuse for a different directory whose files have the same names and
    sizes). A hub id goes through the regular download cache at the resolved commit.
    ``columns`` limits what is read (for a local directory, the other columns are never read
    from disk).
    """
    pinned = source if isinstance(source, Source) else resolve_source(source, None)
    return load_source_split(pinned, config, split, columns)


def load_source_split(
    source: Source, config: str | None, split: str, columns: list[str] | None = None
) -> Any:
    """:func:`load_split` for a pinned source."""
    local, path = source.local, source.load_path
    if local:
        check_card_paths(Path(path))
    import datasets  # heavy: imported only when a dataset is loaded

    datasets.disable_progress_bars()
    # A failure is our one sentence, not a log line too (datasets logs read errors at ERROR).
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)
    what = f"{source.given!r}" + (f" (config {config!r})" if config else "")
    try:
        if local:
            import pyarrow.dataset as pads

            # Small read batches (a parquet row group of images can be hundreds of MB), and no
            # pre-buffering: Arrow's pre-buffer keeps every byte range it read until the whole
            # file is done, so memory would grow with the dataset instead of staying flat.
            options: dict[str, Any] = {
                "batch_size": _STREAM_BATCH_ROWS,
                "fragment_scan_options": pads.ParquetFragmentScanOptions(
                    pre_buffer=False, use_buffered_stream=True
                ),
            }
            if columns is not None:
                options["columns"] = columns
            global _parquet_streamed
            _parquet_streamed = True
            return datasets.load_dataset(path, config, split=split, streaming=True, **options)
        loaded = datasets.load_dataset(path, config, split=split, revision=source.load_revision)
        return loaded.select_columns(columns) if columns is not None else loaded
    except ValueError as exc:
        if local:
            _name_unreadable_file(Path(path))
        raise InputError(
            f"cannot load {what}, split {split!r}: {_first_line(exc)}",
            hint=_folder_above_hint(Path(path)) if local else None,
        ) from None
    except Exception as exc:  # noqa: BLE001 - every loader failure becomes one sentence
        if local:
            _name_unreadable_file(Path(path))
        text = _first_line(exc)
        if not local and hub_offline_mode():
            raise InputError(
                f"{source.given!r} is not in the local cache and HF_HUB_OFFLINE is set; "
                f"{local_copy_hint(source.given)}"
            ) from None
        raise InputError(
            f"cannot load {what}, split {split!r}: {text}",
            hint=_folder_above_hint(Path(path)) if local else None,
        ) from None


def _folder_above_hint(folder: Path) -> str | None:
    """For a folder that holds neither a dataset card nor data files (``--source
    sample_data``), whose failure datasets words as "BuilderConfig 'math' not found.
    Available: ['default']": the folders inside it that do."""
    try:
        if (folder / "README.md").is_file() or any(folder.glob("*.parquet")):
            return None
        inner = sorted(
            str(sub)
            for sub in folder.iterdir()
            if sub.is_dir() and ((sub / "README.md").is_file() or any(sub.glob("*.parquet")))
        )
    except OSError:
        return None
    if not inner:
        return None
    return (
        "pass the dataset's own folder (the one holding its README.md or parquet files): "
        + ", ".join(inner)
    )
