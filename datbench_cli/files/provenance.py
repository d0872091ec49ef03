"""What pins a measurement: the reference, the libraries that decide scores, content digests.

Shared by both benchmarks: the export records these in the manifest, ``score`` in the
report's ``provenance`` block together with the SHA-256 of every input file and the model names
its batch output lines carry.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.files.rundir import sha256_file
from datbench_cli.version import __version__

REFERENCE = "datologyai/DatBench@bd2ecaf"
# The libraries whose versions can move a score (distribution names).
SCORING_LIBRARIES = ("scipy", "lxml", "zss", "apted", "latex2sympy2", "rapidfuzz")


def library_versions() -> dict[str, str | None]:
    """The installed version of each scoring library (``None`` when it is not installed)."""
    versions: dict[str, str | None] = {}
    for name in SCORING_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def pins() -> dict[str, Any]:
    """The keys every manifest and report provenance block starts with."""
    return {"version": __version__, "reference": REFERENCE, "libraries": library_versions()}


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def row_digest(record: Any, image_digests: list[str]) -> str:
    """SHA-256 of one row's content: its reference record (keys sorted) and image digests."""
    body = orjson.dumps(
        {"row": record, "images": image_digests},
        default=str,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return sha256_bytes(body)


# Options that cannot change a score, left out of the report so it is byte-identical across them.
_NOT_RECORDED = frozenset({"jobs"})


def score_options(strict_judge: bool, options: Any) -> dict[str, Any]:
    """The options of a ``score`` run as its report records them."""
    recorded = {k: v for k, v in dict(options).items() if k not in _NOT_RECORDED}
    return dict(sorted({"strict_judge": strict_judge, **recorded}.items()))


def _line_model(obj: dict[str, Any]) -> str | None:
    """The model that answered a line: ``response.body.model`` of a batch output line, or a
    native line's own ``model``."""
    response = obj.get("response")
    body = response.get("body") if isinstance(response, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    if model is None and "custom_id" not in obj:
        model = obj.get("model")
    return model if isinstance(model, str) and model else None


@dataclass
class InputFile:
    """One input file as the report's provenance names it."""

    path: Path
    sha256: str
    models: Counter[str] = field(default_factory=Counter)
    manifests: Counter[str] = field(default_factory=Counter)

    def describe(self, with_models: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"path": str(self.path), "sha256": self.sha256}
        if with_models:
            out["models"] = dict(sorted(self.models.items()))
        if self.manifests:
            out["manifest_sha256"] = dict(sorted(self.manifests.items()))
        return out


class InputScan:
    """A file's provenance (see :func:`scan_file`) made from its lines as they are read: give
    :meth:`update` every byte of the file in order, line by line, then take :meth:`result`."""

    def __init__(self, path: Path, *, lines: bool) -> None:
        self._digest = hashlib.sha256()
        self._scanned = InputFile(path, "")
        self._lines = lines

    def update(self, raw: bytes) -> None:
        self._digest.update(raw)
        if not self._lines or (b'"model"' not in raw and b'"manifest_sha256"' not in raw):
            return
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return
        if not isinstance(obj, dict):
            return
        model = _line_model(obj)
        if model is not None:
            self._scanned.models[model] += 1
        recorded = obj.get("manifest_sha256")
        if isinstance(recorded, str) and recorded:
            self._scanned.manifests[recorded] += 1

    def result(self) -> InputFile:
        self._scanned.sha256 = self._digest.hexdigest()
        return self._scanned


def scan_file(path: Path, *, lines: bool) -> InputFile:
    """Hash ``path``; for a JSONL response file also count each line's model and the manifest
    digest (``manifest_sha256``) a line records it was made against. Never raises on content."""
    scan = InputScan(path, lines=lines)
    with path.open("rb") as handle:
        for raw in handle:
            scan.update(raw)
    return scan.result()


IMAGES = "images/"  # where an export's image files live, relative to its manifest


def image_sizes(root: Path, written: dict[str, str], prefix: str = IMAGES) -> dict[str, int]:
    """The size of each image file the export wrote (a manifest's ``image_sizes``): with the
    manifest's own modification time, what ``score`` checks by default instead of reading the
    bytes. (Sizes, not times, so that a re-export stays byte-identical.)"""
    return {
        rel: (root / rel).stat().st_size
        for rel, digest in written.items()
        if rel.startswith(prefix) and digest
    }


def check_images(
    root: Path,
    written: dict[str, str],
    prefix: str,
    sizes: dict[str, Any] | None = None,
    manifest_time: int | None = None,
) -> tuple[int, list[str]]:
    """Compare the image files present under ``root`` with what the manifest recorded for the
    files under ``prefix``: ``(missing count, changed paths)``. Scoring never needs the images.

    A file counts as changed when its SHA-256 differs from the recorded one. By default a file
    is read only when its size differs from the manifest's ``sizes`` or it was modified after
    the manifest was written (``manifest_time``, ns; a file with neither is taken as
    unchanged); without ``manifest_time`` (``score --verify-images``), and for a file the
    manifest has no size for (an export made before they were recorded), every file is read."""
    missing, changed = 0, []
    recorded_sizes = sizes if isinstance(sizes, dict) else {}
    for rel, recorded in written.items():
        if not rel.startswith(prefix):
            continue
        path = root / rel
        if not path.is_file():
            missing += 1
            continue
        size = recorded_sizes.get(rel)
        if manifest_time is not None and isinstance(size, int):
            info = path.stat()
            if info.st_size == size and info.st_mtime_ns <= manifest_time:
                continue
        if sha256_file(path) != recorded:
            changed.append(rel)
    return missing, changed


def model_warning(label: str, scanned: InputFile) -> str | None:
    """The warning for a response file whose lines come from more than one model."""
    if len(scanned.models) < 2:
        return None
    names = ", ".join(f"{name} ({count})" for name, count in sorted(scanned.models.items()))
    return f"{scanned.path} mixes {label} of {len(scanned.models)} models: {names}"


def other_export_warning(label: str, scanned: InputFile, manifest_sha: str) -> str | None:
    """The warning for a file whose lines say they were made against another export."""
    others = {d: n for d, n in scanned.manifests.items() if d != manifest_sha}
    if not others:
        return None
    count = sum(others.values())
    return (
        f"{count} {label} line(s) in {scanned.path} were made against another export "
        f"(manifest_sha256 {', '.join(sorted(d[:12] for d in others))}; this run directory's "
        f"is {manifest_sha[:12]}): their scores may not describe this export"
    )


def replaced_export_warning(
    label: str, path: Path, manifest: dict[str, Any], manifest_path: Path
) -> str | None:
    """The warning for a response file last changed before an export that replaced another
    and changed some of its samples (the manifest's ``replaced``): its lines may answer the
    earlier tasks. (Change time: a file moved or copied into place with its old modification
    time is still caught.)"""
    replaced = manifest.get("replaced")
    changed = replaced.get("changed_samples") if isinstance(replaced, dict) else None
    if not isinstance(changed, int) or changed <= 0:
        return None
    try:
        if path.stat().st_ctime_ns >= manifest_path.stat().st_mtime_ns:
            return None
    except OSError:
        return None
    return (
        f"{path} was last written before this run directory's export, which replaced an "
        f"earlier one and changed {changed} of its samples: {label} made for the earlier one "
        "answer other tasks"
    )


def manifest_sha256(path: Path) -> str:
    """Hex SHA-256 of the manifest file."""
    return sha256_bytes(path.read_bytes())


def report_block(
    *,
    manifest: dict[str, Any],
    manifest_path: Path,
    inputs: dict[str, tuple[Path | None, bool]],
    options: dict[str, Any],
    ids: Container[str],
    warn: Any,
    response_ids: dict[str, set[str] | int] | None = None,
    scanned: dict[str, InputFile] | None = None,
) -> dict[str, Any]:
    """The report's ``provenance`` block; warnings go to ``warn`` and into the block (the count
    of ``response_ids`` not in the export only into the block: the scorer says it).

    ``inputs``: label -> (path or None, is a response file). ``ids``: the export's sample (or
    turn) ids; ``response_ids``: label -> the ids its lines answered (or already how many of
    those ``ids`` lacks), to name lines that belong to another export; ``scanned``: label ->
    the input as scanned while it was read (a pipe, or a file read once), not read again.
    """
    warnings: list[str] = []

    def note(message: str | None, *, say: bool = True) -> None:
        if message:
            warnings.append(message)
            if say:
                warn(message)

    manifest_digest = manifest_sha256(manifest_path)
    files: dict[str, Any] = {"manifest": {"path": str(manifest_path), "sha256": manifest_digest}}
    for label, (path, is_responses) in inputs.items():
        found = (scanned or {}).get(label)
        if found is None and (path is None or not path.is_file()):
            files[label] = None
            continue
        if found is None:
            assert path is not None
            found = scan_file(path, lines=is_responses)
        files[label] = found.describe(with_models=is_responses)
        if is_responses:
            what = label.replace("_", " ")
            note(model_warning(what, found))
            note(other_export_warning(what, found, manifest_digest))
            if path is not None:
                note(replaced_export_warning(what, path, manifest, manifest_path))
    for label, answered in (response_ids or {}).items():
        foreign = (
            answered if isinstance(answered, int) else sum(1 for i in answered if i not in ids)
        )
        if foreign:
            # Recorded here; said once, by the scorer's count of ids that match no sample.
            note(
                f"{foreign} id(s) in the {label.replace('_', ' ')} are not in this export "
                "(made against another export or revision?)",
                say=False,
            )
    written = manifest.get("written")
    images: dict[str, Any] | None = None
    if isinstance(written, dict):
        verify = bool(options.get("verify_images"))
        missing, changed = check_images(
            manifest_path.parent,
            written,
            IMAGES,
            manifest.get("image_sizes"),
            None if verify else manifest_path.stat().st_mtime_ns,
        )
        images = {
            "missing": missing,
            "changed": changed,
            "checked": "sha256" if verify else "size_time",
        }
        if changed:
            shown = ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else "")
            note(
                f"{len(changed)} image file(s) changed since the export (the responses may "
                f"describe other images): {shown}"
            )
    found = manifest.get("revision")
    revision: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "tool": "datbench",
        **pins(),
        "dataset": {
            "benchmark": manifest.get("benchmark"),
            "source": manifest.get("source"),
            "split": manifest.get("split"),
            "revision": revision.get("requested"),
            "resolved_revision": revision.get("resolved"),
            "exported_with": {
                "version": manifest.get("version"),
                "libraries": manifest.get("libraries"),
            },
            "manifest_sha256": manifest_digest,
        },
        "inputs": files,
        "images": images,
        "options": options,
        "warnings": warnings,
    }
