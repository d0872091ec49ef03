"""Loading a benchmark through the real ``datasets.load_dataset``: a hub id or a local copy.

Sources are classified and pinned first (:mod:`datbench_cli.files.sources`): a mistyped path
is "no such directory", a hub id is resolved to a commit (online through the hub API, whose
connection error fails fast with one sentence on how to point at a local copy instead of the
hub client's retries; offline, ``HF_HUB_OFFLINE=1``, from the local hub cache only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.files.sources import (
    SOURCE_ENV,
    Source,
    hub_offline_mode,
    local_copy_hint,
    resolve_source,
)

__all__ = ["SOURCE_ENV", "is_local_source", "load_split", "load_source_split"]


def is_local_source(source: str) -> bool:
    """True when ``source`` names an existing local directory."""
    return Path(source).expanduser().is_dir()


_STREAM_BATCH_ROWS = 32


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
    import datasets  # heavy: imported only when a dataset is loaded

    datasets.disable_progress_bars()
    local, path = source.local, source.load_path
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
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot load {what}, split {split!r}: {first}") from None
    except Exception as exc:  # noqa: BLE001 - every loader failure becomes one sentence
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not local and hub_offline_mode():
            raise InputError(
                f"{source.given!r} is not in the local cache and HF_HUB_OFFLINE is set; "
                f"{local_copy_hint(source.given)}"
            ) from None
        raise InputError(f"cannot load {what}, split {split!r}: {text}") from None
