"""What a page is built from: the report, the run directory's task files, the images.

Image paths come from task files (untrusted): each must name, component by component, a
regular file inside the run directory (no ``..``, no absolute path, no symlink anywhere on the
way); anything else is dropped and counted. Each folder is listed once, so 45,000 images cost
no more than one scan of ``images/``.
"""

from __future__ import annotations

import base64
import io
import os
import posixpath
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.compare.inputs import REPORT_FIELDS, SCORE_AGAIN
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.fields import check_document
from datbench_cli.files.rundir import MANIFEST, REFERENCES, REPORT, TASKS, sha256_file

# --embed-images: each image becomes a thumbnail of at most this many pixels a side, and the
# page holds at most EMBED_BUDGET bytes of them (the rest stay relative links, counted).
THUMB_SIDE = 384
EMBED_BUDGET = 64 * 1024 * 1024
_MAX_DECODE_PIXELS = 64_000_000


@dataclass(frozen=True)
class RunFiles:
    """A report and the run directory beside it (``None`` for a lone report file)."""

    report_path: Path
    run_dir: Path | None
    report: dict[str, Any]
    manifest: dict[str, Any] | None


def locate(path: Path) -> RunFiles:
    """``path`` is a run directory (its ``report.json``) or a report file (its folder is the run
    directory when it holds a manifest)."""
    report_path = path / REPORT if path.is_dir() else path
    if not report_path.is_file():
        raise InputError("no report here (run `datbench score` first)", report_path)
    report = jsonio.read_json(report_path)
    if not isinstance(report, dict) or not isinstance(report.get("summary"), dict):
        raise InputError("not a datbench report (no summary object)", report_path)
    if not isinstance(report.get("results"), list):
        raise InputError("not a datbench report (no results list)", report_path)
    check_document(report, REPORT_FIELDS, report_path, SCORE_AGAIN)
    for index, entry in enumerate(report["results"]):
        if not isinstance(entry, dict):  # the page would leave it out without a word
            raise InputError(f"results[{index}] is not an object", report_path)
    folder = report_path.parent
    manifest = None
    run_dir: Path | None = None
    if (folder / MANIFEST).is_file():
        loaded = jsonio.read_json(folder / MANIFEST)
        manifest = loaded if isinstance(loaded, dict) else None
        _check_scored_export(report, folder, manifest, report_path)
        run_dir = folder
    return RunFiles(report_path, run_dir, report, manifest)


def _check_scored_export(
    report: dict[str, Any], folder: Path, manifest: dict[str, Any] | None, report_path: Path
) -> None:
    """The page puts the run directory's prompts, images and references beside the report's
    results: they must be the export the report was scored against, as it was written."""
    provenance = report.get("provenance")
    dataset = provenance.get("dataset") if isinstance(provenance, dict) else None
    scored = dataset.get("manifest_sha256") if isinstance(dataset, dict) else None
    if isinstance(scored, str) and sha256_file(folder / MANIFEST) != scored:
        raise InputError(
            f"the report was scored against another export than this directory's {MANIFEST} "
            "(exported again since?); run `datbench score` again, or view a copy of the report "
            "kept outside the run directory",
            report_path,
        )
    files = manifest.get("files") if manifest is not None else None
    for name in (TASKS, REFERENCES):
        recorded = files.get(name) if isinstance(files, dict) else None
        path = folder / name
        if (
            isinstance(recorded, dict)
            and path.is_file()
            and sha256_file(path) != recorded.get("sha256")
        ):
            raise InputError(
                f"{name} does not match the manifest (changed after export?); "
                "run `datbench export-tasks` again",
                path,
            )


def read_lines(run_dir: Path | None, name: str) -> Iterator[dict[str, Any]]:
    """The objects of a run directory's JSONL file (nothing when it is absent)."""
    if run_dir is None or not (run_dir / name).is_file():
        return
    for _, obj in jsonio.iter_jsonl(run_dir / name):
        yield obj


def by_id(run_dir: Path | None, name: str, key: str = "id") -> dict[str, dict[str, Any]]:
    """A run directory's JSONL file indexed by ``key`` (the last line of an id wins)."""
    return {str(obj[key]): obj for obj in read_lines(run_dir, name) if key in obj}


def _parts(relative: str) -> tuple[str, ...] | None:
    """The components of a relative path inside the run directory, or ``None`` (absolute,
    ``..``, empty components, NUL or backslash: refused, never interpreted)."""
    if not relative or "\x00" in relative or "\\" in relative or relative.startswith("/"):
        return None
    parts = tuple(p for p in relative.split("/") if p not in ("", "."))
    if not parts or any(p == ".." for p in parts):
        return None
    return parts


@dataclass
class Images:
    """Turns a task file's image path into a ``src`` for the page: a relative link from the
    page's folder (default) or an embedded thumbnail (``embed``)."""

    run_dir: Path | None
    page_dir: Path
    embed: bool = False
    budget: int = EMBED_BUDGET
    embedded_bytes: int = 0
    not_embedded: int = 0
    refused: int = 0
    _cache: dict[str, str | None] = field(default_factory=dict)
    _listings: dict[tuple[str, ...], tuple[frozenset[str], frozenset[str]]] = field(
        default_factory=dict
    )
    _root_path: str | None = None
    _link_prefix: str | None = None

    def src(self, relative: Any) -> str | None:
        """The ``src`` of one image, or ``None`` (refused: outside the run directory, absent)."""
        if not isinstance(relative, str) or self.run_dir is None:
            return None
        if relative not in self._cache:
            self._cache[relative] = self._resolve(relative)
        return self._cache[relative]

    def _resolve(self, relative: str) -> str | None:
        parts = _parts(relative)
        if parts is None or not self._is_file(parts):
            self.refused += 1
            return None
        target = "/".join(parts)
        if self.embed:
            data = self._thumbnail(Path(self._root(), *parts))
            if data is not None and self.embedded_bytes + len(data) <= self.budget:
                self.embedded_bytes += len(data)
                return data
            self.not_embedded += 1
        # The link names the path's own bytes (a folder named in Latin-1: %E9, not an error).
        return urllib.parse.quote(os.fsencode(posixpath.join(self._prefix(), target)), safe="/")

    def _root(self) -> str:
        assert self.run_dir is not None
        if self._root_path is None:
            self._root_path = os.path.realpath(self.run_dir)
        return self._root_path

    def _prefix(self) -> str:
        if self._link_prefix is None:
            relative = os.path.relpath(self._root(), os.path.realpath(self.page_dir))
            self._link_prefix = "" if relative == "." else Path(relative).as_posix()
        return self._link_prefix

    def _listing(self, folder: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
        """The regular files and the directories of one folder of the run directory, symlinks
        left out (each folder scanned once)."""
        if folder not in self._listings:
            files: set[str] = set()
            dirs: set[str] = set()
            try:
                with os.scandir(os.path.join(self._root(), *folder)) as entries:
                    for entry in entries:
                        if entry.is_symlink():
                            continue
                        if entry.is_file(follow_symlinks=False):
                            files.add(entry.name)
                        elif entry.is_dir(follow_symlinks=False):
                            dirs.add(entry.name)
            except OSError:
                pass
            self._listings[folder] = (frozenset(files), frozenset(dirs))
        return self._listings[folder]

    def _is_file(self, parts: tuple[str, ...]) -> bool:
        for depth, name in enumerate(parts[:-1]):
            if name not in self._listing(parts[:depth])[1]:
                return False
        return parts[-1] in self._listing(parts[:-1])[0]

    @staticmethod
    def _thumbnail(path: Path) -> str | None:
        from PIL import Image

        try:
            with Image.open(path) as image:
                if image.width * image.height > _MAX_DECODE_PIXELS:
                    return None
                image.thumbnail((THUMB_SIDE, THUMB_SIDE))
                alpha = image.mode in ("RGBA", "LA", "P")
                converted = image.convert("RGBA" if alpha else "RGB")
                buffer = io.BytesIO()
                converted.save(buffer, "PNG" if alpha else "JPEG", quality=80)
        except (OSError, ValueError, Image.DecompressionBombError):
            return None
        mime = "image/png" if alpha else "image/jpeg"
        return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode()}"

    def note(self) -> str | None:
        """One sentence about images not shown or not embedded, or ``None``."""
        parts = []
        if self.refused:
            parts.append(f"{self.refused} image path(s) outside the run directory or missing")
        if self.not_embedded:
            parts.append(f"{self.not_embedded} image(s) linked, not embedded (size bound)")
        return "; ".join(parts) or None
