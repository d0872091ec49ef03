"""Which dataset an export reads, pinned: a local directory or a hub id at a resolved commit.

- A source that looks like a path (starts with ``/``, ``.`` or ``~``, has more than one ``/``,
  or ends in ``.parquet``) must be an existing directory; a hub id is exactly ``owner/name``.
- A hub id is resolved to its commit sha before anything is loaded: online through the hub API
  (the hub client's own HTTP stack, so proxy settings apply; its connection error becomes the
  one-sentence hint), offline (``HF_HUB_OFFLINE=1``) from the snapshot in the local hub cache,
  which is then read as a local directory.
- A local directory is pinned by a digest of the data files the export reads.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from queue import SimpleQueue

from datbench_cli.errors import InputError, UsageError
from datbench_cli.files.rundir import sha256_file

SOURCE_ENV = "DATBENCH_SOURCE"
HUB_TIMEOUT = 10.0
_SHA_RE = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Source:
    """A dataset source as loaded: ``load_path`` and ``load_revision`` go to ``load_dataset``."""

    given: str
    load_path: str
    local: bool
    revision: str | None = None
    resolved: str | None = None
    how: str = "local-files"
    load_revision: str | None = None

    def describe(self) -> dict[str, str | None]:
        """The manifest's ``revision`` block."""
        return {"requested": self.revision, "resolved": self.resolved, "how": self.how}


def hub_offline_mode() -> bool:
    """True when the user asked the hub client to stay offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def looks_like_path(source: str) -> bool:
    """True when ``source`` can only mean a local path (see the module docstring)."""
    return (
        source.startswith(("/", ".", "~"))
        or source.count("/") > 1
        or source.lower().endswith(".parquet")
    )


def local_copy_hint(source: str) -> str:
    """How to download a hub dataset once and point at the copy."""
    return (
        f"download it once with `hf download {source} --repo-type dataset --local-dir DIR` "
        f"and pass `--source DIR` (or set {SOURCE_ENV}=DIR)"
    )


def check_local(source: str) -> Path | None:
    """The directory ``source`` names, ``None`` for a hub id; refuses a path that is not a
    dataset directory."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.is_file() and path.suffix.lower() == ".parquet":
        raise InputError(
            "is a parquet file; pass its dataset folder (the directory holding README.md and "
            "the parquet files, as `hf download --local-dir` leaves it) with --source",
            source,
        )
    if path.exists():
        raise InputError("not a directory; --source takes a dataset folder or a hub id", source)
    if looks_like_path(source):
        raise InputError(f"no such directory: {source}")
    if "/" not in source:
        raise InputError(f"no such directory: {source} (a hub id is owner/name)")
    return None


def _hub_cache() -> Path:
    """The hub cache folder, from the environment at call time (as the hub client reads it)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface"
    )
    return Path(home).expanduser() / "hub"


def cached_snapshot(repo_id: str, revision: str | None) -> tuple[str, Path] | None:
    """``(sha, snapshot folder)`` of ``repo_id`` at ``revision`` in the local hub cache."""
    repo = _hub_cache() / f"datasets--{repo_id.replace('/', '--')}"
    snapshots = repo / "snapshots"
    wanted = revision or "main"
    sha: str | None = None
    if _SHA_RE.fullmatch(wanted):
        sha = wanted
    else:
        ref = repo / "refs" / wanted
        if ref.is_file() and ".." not in Path(wanted).parts:
            sha = ref.read_text(encoding="utf-8").strip()
        elif snapshots.is_dir() and re.fullmatch(r"[0-9a-f]{7,39}", wanted):
            found = [p.name for p in snapshots.iterdir() if p.name.startswith(wanted)]
            sha = found[0] if len(found) == 1 else None
    if sha is None or not _SHA_RE.fullmatch(sha) or not (snapshots / sha).is_dir():
        return None
    return sha, snapshots / sha


def _endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def resolve_hub_commit(repo_id: str, revision: str | None) -> str:
    """The commit sha of ``repo_id`` at ``revision`` (default branch when ``None``), asked of
    the hub; every failure is one sentence."""
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hub_errors

    what = repo_id + (f" at revision {revision!r}" if revision else "")
    try:
        info = HfApi(endpoint=_endpoint()).dataset_info(
            repo_id, revision=revision, timeout=HUB_TIMEOUT
        )
    except hub_errors.RevisionNotFoundError:
        raise InputError(f"the hub dataset {repo_id!r} has no revision {revision!r}") from None
    except hub_errors.GatedRepoError:
        raise InputError(
            f"the hub dataset {repo_id!r} is gated: accept its terms on the hub and log in "
            "(`hf auth login`), or pass a local copy with --source DIR"
        ) from None
    except hub_errors.RepositoryNotFoundError:
        raise InputError(
            f"no dataset {repo_id!r} on the Hugging Face hub (private? log in with "
            "`hf auth login`); a local folder is passed as a path, e.g. ./DIR"
        ) from None
    except hub_errors.HfHubHTTPError as exc:
        response = getattr(exc, "response", None)
        if getattr(response, "status_code", None) == 404:
            at = f" at revision {revision!r}" if revision else ""
            raise InputError(
                f"no dataset {repo_id!r}{at} on the Hugging Face hub; a local folder is passed "
                "as a path, e.g. ./DIR"
            ) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"the hub refused {what}: {first}") from None
    except Exception:  # noqa: BLE001 - the hub client's connection errors (httpx, proxies, DNS)
        raise InputError(
            f"cannot reach the Hugging Face hub to load {repo_id!r}; {local_copy_hint(repo_id)}"
        ) from None
    sha = getattr(info, "sha", None)
    if not isinstance(sha, str) or not sha:
        raise InputError(f"the hub gave no commit for {what}")
    return sha


def resolve_source(source: str, revision: str | None) -> Source:
    """Classify and pin ``source`` (see the module docstring); nothing is loaded yet."""
    local = check_local(source)
    if local is not None:
        if revision is not None:
            raise UsageError(
                "--revision applies only to hub sources; a local directory is pinned by a "
                "digest of its data files"
            )
        return Source(source, str(local), local=True)
    if hub_offline_mode():
        found = cached_snapshot(source, revision)
        if found is None:
            # No snapshot in the hub cache: the datasets cache may still hold the split (its
            # commit is then unknown, and the manifest says so with a null "resolved").
            return Source(source, source, False, revision, None, "offline", revision)
        sha, folder = found
        return Source(source, str(folder), True, revision, sha, "hub-cache")
    sha = resolve_hub_commit(source, revision)
    return Source(source, source, False, revision, sha, "hub-api", load_revision=sha)


def streamed_files(dataset: object) -> list[Path] | None:
    """The data files a streaming split of a local folder reads (what ``load_dataset`` gave its
    reader), or ``None`` when the split does not say (then :func:`data_files` asks again)."""
    kwargs = getattr(getattr(dataset, "_ex_iterable", None), "kwargs", None)
    found = kwargs.get("files") if isinstance(kwargs, dict) else None
    if not isinstance(found, list) or not found:
        return None
    files = [Path(str(f).removeprefix("file://")) for f in found]
    return files if all(f.is_absolute() and f.is_file() for f in files) else None


def data_files(
    path: str,
    configs: Iterable[str | None],
    split: str,
    known: dict[str | None, list[Path]] | None = None,
) -> list[Path]:
    """The files ``load_dataset(path, config)`` reads for ``split`` (every config given), and
    the dataset card. ``known``: configs whose files are known already (from
    :func:`streamed_files`), which are not resolved a second time."""
    files: set[Path] = set()
    for found in (known or {}).values():
        files.update(found)
    configs = [c for c in configs if known is None or c not in known]
    if configs:
        files.update(_builder_files(path, configs, split))
    readme = Path(path) / "README.md"
    if readme.is_file():
        files.add(readme)
    return sorted(files)


def _builder_files(path: str, configs: list[str | None], split: str) -> set[Path]:
    import datasets

    files: set[Path] = set()
    for config in configs:
        try:
            builder = datasets.load_dataset_builder(path, config)
        except Exception:  # noqa: BLE001 - loading itself reports the problem
            continue
        found = (builder.config.data_files or {}).get(split) or []
        files.update(Path(str(f).removeprefix("file://")) for f in found)
    return files


def local_digest(path: str, configs: Iterable[str | None], split: str) -> str:
    """``sha256:<hex>`` over the relative names and SHA-256 of the files an export reads."""
    return _files_digest(Path(path), data_files(path, configs, split))


def _files_digest(root: Path, files: list[Path]) -> str:
    # Names relative to the real folder, whatever the spelling of ``root`` (``datasets`` gives
    # its files as real absolute paths, the card as given), so the same folder always pins
    # the same and a copy elsewhere too.
    base = Path(os.path.realpath(root))
    named: dict[str, Path] = {}
    for file in files:
        real = Path(os.path.realpath(file))
        named[real.relative_to(base).as_posix() if real.is_relative_to(base) else str(real)] = file
    digest = hashlib.sha256()
    for name in sorted(named):
        digest.update(f"{name}\0{sha256_file(named[name])}\n".encode())
    return "sha256:" + digest.hexdigest()


def pin_local(source: Source, configs: Iterable[str | None], split: str) -> Source:
    """``source`` with its data digest, for a plain local directory (hub pins are kept)."""
    if source.how != "local-files":
        return source
    return Source(
        source.given, source.load_path, True, None, local_digest(source.load_path, configs, split)
    )


def pin_local_later(
    source: Source,
    configs: Iterable[str | None],
    split: str,
    known: dict[str | None, list[Path]] | None = None,
) -> Callable[[], Source]:
    """:func:`pin_local`, with the data files hashed in a background thread (hashlib releases
    the GIL) while the export reads and writes; call the result for the pinned source (it
    waits for the hashing, and raises what the hashing raised).

    Which files are read is found here, in the calling thread (``known``, or through
    ``datasets``, whose progress bars are not safe from two threads). A plain daemon thread and a
    ``SimpleQueue`` (as for the image digests), so a Ctrl-C never waits for it.
    """
    if source.how != "local-files":
        return lambda: source
    root, files = Path(source.load_path), data_files(source.load_path, configs, split, known)
    results: SimpleQueue[str | BaseException] = SimpleQueue()

    def work() -> None:
        try:
            results.put(_files_digest(root, files))
        except BaseException as error:  # handed to the caller's thread, raised there
            results.put(error)

    threading.Thread(target=work, name="datbench-pin", daemon=True).start()
    done: list[Source] = []

    def finish() -> Source:
        if not done:
            result = results.get()
            if isinstance(result, BaseException):
                raise result
            done.append(Source(source.given, source.load_path, True, None, result))
        return done[0]

    return finish
