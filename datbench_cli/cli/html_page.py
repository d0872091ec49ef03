"""Shared by the commands that write an HTML page: the options and where the page goes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HTML_DEFAULT = "report.html"

EmbedImagesOpt = Annotated[
    bool,
    typer.Option(
        "--embed-images",
        help="Embed each image as a thumbnail (at most 384 px a side, 64 MB in all) for a "
        "portable page; default: relative links to the run directory's images.",
    ),
]


def page_path(given: str | Path | None, run_dir: Path) -> Path:
    """The page file: ``given``, else ``report.html`` in the run directory."""
    if given is None or str(given) == "":
        return run_dir / HTML_DEFAULT
    return Path(given)


def optional_value(argv: list[str], option: str = "--html") -> list[str]:
    """``--html`` may stand without its FILE (typer has no optional-value options): when it
    is last or followed by another option, an empty value (the default file) is put after it."""
    out: list[str] = []
    for index, token in enumerate(argv):
        out.append(token)
        if token == option:
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or (following.startswith("-") and following != "-"):
                out.append("")
    return out
