"""Loading a benchmark through the real ``datasets.load_dataset``: a hub id or a local copy.

Offline, a hub id fails fast with one sentence on how to point at a local copy, instead of the
hub client's retries; ``HF_HUB_OFFLINE=1`` is respected (only the local cache is used).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from datbench_cli.errors import InputError

SOURCE_ENV = "DATBENCH_SOURCE"
_PROBE_TIMEOUT = 3.0


def is_local_source(source: str) -> bool:
    """True when ``source`` names an existing local directory."""
    return Path(source).expanduser().is_dir()


def hub_offline_mode() -> bool:
    """True when the user asked the hub client to stay offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _hub_reachable() -> bool:
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=_PROBE_TIMEOUT):
            return True
    except OSError:
        return False


def _local_copy_hint(source: str) -> str:
    return (
        f"download it once with `hf download {source} --repo-type dataset --local-dir DIR` "
        f"and pass `--source DIR` (or set {SOURCE_ENV}=DIR)"
    )


_STREAM_BATCH_ROWS = 32


_parquet_streamed = False


def parquet_streamed() -> bool:
    """Whether this process opened a streaming parquet scan (an Arrow reader that may keep an
    I/O thread alive when the scan is stopped early; see ``datbench_cli.cli.app.console_main``)."""
    return _parquet_streamed


def load_split(
    source: str, config: str | None, split: str, columns: list[str] | None = None
) -> Any:
    """``datasets.load_dataset(source, config, split=split)`` with clear, one-sentence failures.

    A local directory is read in streaming mode: its parquet files are read directly, with no
    Arrow cache copy (which would double the disk traffic, and which ``datasets`` may reuse for a
    different directory whose files have the same names and sizes). A hub id goes through the
    regular download cache, so ``HF_HUB_OFFLINE=1`` finds earlier downloads. ``columns`` limits
    what is read (for a local directory, the other columns are never read from disk).
    """
    local = is_local_source(source)
    if local:
        source = str(Path(source).expanduser())
    elif not hub_offline_mode() and not _hub_reachable():
        raise InputError(
            f"cannot reach the Hugging Face hub to load {source!r}; {_local_copy_hint(source)}"
        )
    import datasets  # heavy: imported only when a dataset is loaded

    datasets.disable_progress_bars()
    what = f"{source!r}" + (f" (config {config!r})" if config else "")
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
            return datasets.load_dataset(source, config, split=split, streaming=True, **options)
        loaded = datasets.load_dataset(source, config, split=split)
        return loaded.select_columns(columns) if columns is not None else loaded
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot load {what}, split {split!r}: {first}") from None
    except Exception as exc:  # noqa: BLE001 - every loader failure becomes one sentence
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not local and hub_offline_mode():
            raise InputError(
                f"{source!r} is not in the local cache and HF_HUB_OFFLINE is set; "
                f"{_local_copy_hint(source)}"
            ) from None
        raise InputError(f"cannot load {what}, split {split!r}: {text}") from None
