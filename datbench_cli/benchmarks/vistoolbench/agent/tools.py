"""The tools of one turn: a private working directory holding the turn's images, and the
dispatch of each tool call to the sandbox, the calculator or the web tools.

A tool call never raises: bad arguments, an unavailable tool, a limit hit by the code all become
a result the model reads (the official ``{"error": ...}`` shape when no tool ran). The content of
a tool message is the Python ``repr`` of the result object, as the official runner sends.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.benchmarks.vistoolbench.agent import protocol, web
from datbench_cli.benchmarks.vistoolbench.agent.calculator import calculate
from datbench_cli.benchmarks.vistoolbench.agent.sandbox import Isolation, Limits, run_code

_TRANSFORMED = re.compile(protocol.TRANSFORMED_NAME, re.IGNORECASE)
_PARAMETERS = {
    protocol.IMAGE_TOOL: (("code",), ()),
    protocol.INTERPRETER_TOOL: (("code",), ()),
    protocol.CALCULATOR_TOOL: (("expression",), ()),
    protocol.SEARCH_TOOL: (("query",), ("num_results",)),
    protocol.PAGE_TOOL: (("url",), ()),
    protocol.WEATHER_TOOL: (("location", "date"), ()),
}


@dataclass(frozen=True)
class ToolSettings:
    """Which tools a run offers and how they run."""

    available: tuple[str, ...]
    limits: Limits = field(default_factory=Limits)
    isolation: Isolation | None = None
    keys: web.WebKeys = field(default_factory=web.WebKeys)
    packages: tuple[str, ...] = ()
    # Where each turn's folder is made (None: the system's temporary folder); an agent run
    # makes one folder for all its turns and removes it whatever stops the run.
    scratch: Path | None = None


@dataclass
class ToolOutcome:
    """One executed call: the tool message content, saved images, and the trajectory record."""

    content: str
    images: list[tuple[str, bytes]] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


def parse_arguments(name: str, raw: Any) -> dict[str, Any]:
    """The call's arguments as an object with the tool's parameters (``ValueError`` if not)."""
    if isinstance(raw, dict):
        arguments = raw
    elif isinstance(raw, str):
        try:
            arguments = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not valid JSON ({exc})") from None
    else:
        raise ValueError("the arguments must be a JSON object")
    if not isinstance(arguments, dict):
        raise ValueError("the arguments must be a JSON object")
    required, optional = _PARAMETERS[name]
    missing = [key for key in required if key not in arguments]
    if missing:
        raise ValueError(f"{name}() missing required argument(s): {', '.join(missing)}")
    unexpected = [key for key in arguments if key not in required + optional]
    if unexpected:
        raise ValueError(f"{name}() got unexpected argument(s): {', '.join(unexpected)}")
    if name in protocol.CODE_TOOLS and not isinstance(arguments["code"], str):
        raise ValueError(f"{name}(): code must be a string")
    return arguments


class TurnTools:
    """The tools of one turn; a context manager that removes the working directory."""

    def __init__(self, settings: ToolSettings, images: list[tuple[str, bytes]]) -> None:
        self.settings = settings
        self.workdir = Path(tempfile.mkdtemp(prefix="datbench-turn-", dir=settings.scratch))
        self.image_files: list[str] = []
        for name, data in images:
            (self.workdir / name).write_bytes(data)
            self.image_files.append(name)

    def __enter__(self) -> TurnTools:
        return self

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    def schemas(self) -> list[dict[str, Any]]:
        """The tool list of the next request (the image list grows with saved images)."""
        return protocol.tool_schemas(
            self.settings.available, list(self.image_files), list(self.settings.packages)
        )

    def call(self, name: Any, raw_arguments: Any) -> ToolOutcome:
        """Run one tool call; every failure becomes a result the model sees."""
        started = time.monotonic()
        record: dict[str, Any] = {"name": name, "arguments": raw_arguments}
        try:
            if not isinstance(name, str) or name not in self.settings.available:
                listed = ", ".join(self.settings.available) or "none"
                raise ValueError(
                    f"tool {name!r} is not available in this run (available: {listed})"
                )
            arguments = parse_arguments(name, raw_arguments)
            observation, images, extra = self._run(name, arguments)
            record.update(extra)
        except ValueError as exc:
            observation, images = {"error": str(exc)}, []
            record["error"] = str(exc)
        record["elapsed_s"] = round(time.monotonic() - started, 3)
        record["result"] = observation
        return ToolOutcome(repr(observation), images, record)

    def refuse(self, name: Any, raw_arguments: Any, reason: str) -> ToolOutcome:
        """A call that is not run: an error the model reads, as for bad arguments."""
        record = {"name": name, "arguments": raw_arguments, "error": reason, "elapsed_s": 0.0}
        return ToolOutcome(repr({"error": reason}), [], {**record, "result": {"error": reason}})

    def _run(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], list[tuple[str, bytes]], dict[str, Any]]:
        keys = self.settings.keys
        if name == protocol.CALCULATOR_TOOL:
            return calculate(arguments["expression"]), [], {}
        if name == protocol.SEARCH_TOOL:
            return web.google_search(keys, **arguments), [], {}
        if name == protocol.PAGE_TOOL:
            return web.page_text(arguments["url"]), [], {}
        if name == protocol.WEATHER_TOOL:
            return web.historical_weather(keys, **arguments), [], {}
        return self._code(name, arguments["code"])

    def _code(
        self, name: str, code: str
    ) -> tuple[dict[str, Any], list[tuple[str, bytes]], dict[str, Any]]:
        isolation = self.settings.isolation
        if isolation is None:  # the run refuses code tools without isolation; never reached
            raise ValueError(f"tool {name!r} is not available in this run")
        limits = self.settings.limits
        before = {entry.name for entry in self.workdir.iterdir()}
        preload = (
            protocol.IMAGE_PRELOAD if name == protocol.IMAGE_TOOL else protocol.INTERPRETER_PRELOAD
        )
        result = run_code(code, name, self.workdir, limits, isolation, list(preload))
        # At most max_files, saved images first: the sandbox chose them and said so in stderr.
        for file_name, data in result.files:
            try:
                self._save(file_name, data)
            except OSError as exc:
                result.stderr += f"\nsandbox: {file_name} was not kept ({exc.strerror})"
        created = sorted(
            (entry for entry in self.workdir.iterdir() if entry.name not in before),
            key=lambda entry: entry.name,
        )
        extra: dict[str, Any] = {
            "sandbox": {"ok": result.ok, "limit": result.limit, "elapsed_s": result.elapsed_s}
        }
        stderr = result.stderr
        outputs: list[tuple[str, bytes]] = []
        if name == protocol.IMAGE_TOOL:
            outputs, notes = self._outputs(created)
            stderr += "".join(f"\n{note}" for note in notes)
        self._enforce_quota(created, {output for output, _ in outputs})
        if name == protocol.INTERPRETER_TOOL:
            return {"stdout": result.stdout, "stderr": stderr}, [], extra
        names = [output for output, _ in outputs]
        self.image_files.extend(names)
        observation = {
            "ok": "true" if result.ok else "false",
            "stdout": result.stdout,
            "stderr": stderr,
            "output_path": names[0] if names else "",
            "output_paths": names,
        }
        return observation, outputs, extra

    def _save(self, name: str, data: bytes) -> None:
        """Write a file the sandbox sent back (never through a link)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        with os.fdopen(os.open(self.workdir / name, flags, 0o600), "wb") as handle:
            handle.write(data)

    def _outputs(self, created: list[Path]) -> tuple[list[tuple[str, bytes]], list[str]]:
        """The new ``transformed_image_<i>.png`` files (by number), read safely."""
        limit = self.settings.limits.file_mb * 1024 * 1024
        matches = [entry for entry in created if _TRANSFORMED.match(entry.name)]
        matches.sort(key=lambda entry: int(_TRANSFORMED.match(entry.name).group(1)))  # type: ignore[union-attr]
        outputs, notes = [], []
        for entry in matches:
            try:
                if entry.is_symlink() or not entry.is_file():
                    raise OSError("not a regular file")
                if entry.stat().st_size > limit:
                    raise OSError("too large")
                outputs.append((entry.name, entry.read_bytes()))
            except OSError as exc:
                notes.append(f"sandbox: {entry.name} was not returned ({exc})")
        return outputs, notes

    def _enforce_quota(self, created: list[Path], keep: set[str]) -> None:
        """Remove this call's other new files when the working directory grows too large."""
        total = 0
        for entry in self.workdir.iterdir():
            with contextlib.suppress(OSError):
                total += entry.lstat().st_size
        if total <= self.settings.limits.max_dir_mb * 1024 * 1024:
            return
        for entry in created:
            if entry.name not in keep:
                with contextlib.suppress(OSError):
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        entry.unlink()
