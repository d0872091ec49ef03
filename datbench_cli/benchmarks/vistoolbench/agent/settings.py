"""``agent.json``: what an agent run used, and whether it is comparable with the official runs.

Comparable with the official protocol means: all six tools offered, golden-history context,
every image of each turn, the ``high`` system prompt, 20 tool rounds, JPEG q85 images and the
official temperature rule. Each departure is listed in ``not_comparable_because``; differences
this tool always has (reworded prompts, missing analysis packages, tool errors returned to the
model rather than ending the task) are listed in ``known_differences``. A rerun must use the
settings that decide answers (model, tools, prompt, rounds, images, temperature, max tokens).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.vistoolbench.agent import images, protocol
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import TRAJECTORIES

AGENT_FILE = "agent.json"
# Said by score and the page of a run whose code tools ran with --unsafe-sandbox.
NOT_ISOLATED = "agent run not isolated: its model code ran without a sandbox (--unsafe-sandbox)"
# The settings a continued run must share with the run it continues.
_DECIDING = (
    "model",
    "system_prompt",
    "max_tool_rounds",
    "temperature",
    "max_tokens",
    "image_transport",
    "tools",
)
_KNOWN_DIFFERENCES = [
    "system prompts, tool descriptions and the saved-images message are reworded (same content)",
    "a malformed or unknown tool call gets an error result instead of ending the task",
    "images saved in one round follow all of that round's tool messages",
    "the image tool's Image is PIL.Image (officially a wrapper whose open() fails)",
]


def available_packages() -> list[str]:
    """The officially pre-installed interpreter packages that this machine has."""
    names = {
        "numpy": "numpy",
        "pandas": "pandas",
        "requests": "requests",
        "scipy": "scipy",
        "scikit-learn": "sklearn",
        "simpy": "simpy",
        "tabulate": "tabulate",
        "beautifulsoup4": "bs4",
        "yfinance": "yfinance",
        "opencv (image tool)": "cv2",
    }
    return [label for label, module in names.items() if importlib.util.find_spec(module)]


def comparability(config: Any, manifest: dict[str, Any]) -> dict[str, Any]:
    """``comparable``, the reasons it is not, and the differences every run has."""
    loop, tools = config.loop, config.tools
    options = manifest.get("options") or {}
    reasons = []
    missing = [name for name in protocol.OFFICIAL_TOOLS if name not in tools.available]
    if missing:
        reasons.append(f"tools not available: {', '.join(missing)}")
    if manifest.get("context_policy") != "golden_history":
        reasons.append(f"context {manifest.get('context_policy')} (official: golden_history)")
    if options.get("first_image_only"):
        reasons.append("exported with --first-image-only")
    if loop.system_prompt != protocol.DEFAULT_SYSTEM_PROMPT:
        reasons.append(f"system prompt {loop.system_prompt!r} (official: 'high')")
    if loop.max_tool_rounds != protocol.DEFAULT_MAX_TOOL_ROUNDS:
        reasons.append(f"{loop.max_tool_rounds} tool rounds (official: 20)")
    if loop.image_transport != images.JPEG_Q85:
        reasons.append(f"images sent as {loop.image_transport} (official: jpeg-q85)")
    if loop.temperature != protocol.temperature_for(loop.model):
        reasons.append(
            f"temperature {loop.temperature:g} (official rule for this model name: "
            f"{protocol.temperature_for(loop.model):g})"
        )
    if loop.max_tokens is not None:
        reasons.append(f"max_tokens {loop.max_tokens} (official: not set)")
    known = list(_KNOWN_DIFFERENCES)
    packages = set(tools.packages)
    absent = [name for name in ("pandas", "scikit-learn", "simpy", "tabulate",
                                "beautifulsoup4", "yfinance", "requests",
                                "opencv (image tool)") if name not in packages]  # fmt: skip
    if absent:
        known.append(f"packages not installed for the code tools: {', '.join(absent)}")
    return {
        "comparable": not reasons,
        "not_comparable_because": reasons,
        "known_differences": known,
    }


def settings_record(config: Any, manifest: dict[str, Any]) -> dict[str, Any]:
    """The ``agent.json`` body of a run."""
    loop, tools = config.loop, config.tools
    return {
        "model": loop.model,
        "system_prompt": loop.system_prompt,
        "max_tool_rounds": loop.max_tool_rounds,
        "temperature": loop.temperature,
        "max_tokens": loop.max_tokens,
        "image_transport": loop.image_transport,
        "tools": list(tools.available),
        "context_policy": manifest.get("context_policy"),
        "sandbox": {
            "limits": tools.limits.as_dict(),
            "isolation": tools.isolation.describe(tools.limits) if tools.isolation else None,
            "packages": list(tools.packages),
        },
        **config.record,
        "protocol": comparability(config, manifest),
    }


def _recorded(path: Path) -> dict[str, Any] | None:
    """The run's ``agent.json`` (``None``: no agent ran here); a folder or device of that name,
    or a file that holds no JSON object, is an :class:`InputError` (never read as no run)."""
    if not os.path.lexists(path):
        return None
    if not path.is_file():
        raise InputError("is not a regular file; the run's agent.json must be a file", path)
    record = jsonio.read_json(path)
    if not isinstance(record, dict):
        raise InputError(
            "is not the JSON object `datbench agent` writes",
            path,
            1,
            hint="restore it, or start the agent in a new run directory",
        )
    return record


def check_same_settings(path: Path, record: dict[str, Any]) -> None:
    """Refuse to continue a run made with settings that change answers."""
    previous = _recorded(path)
    if previous is None:
        return
    changed = [key for key in _DECIDING if previous.get(key) != record.get(key)]
    if changed:
        raise UsageError(
            f"{path} records a run with other settings ({', '.join(changed)} differ): its "
            "answers would be mixed with these; use a new run directory (export again) or "
            "the same options"
        )


def protocol_summary(run_dir: Path) -> dict[str, Any] | None:
    """The protocol record of an agent run in ``run_dir`` (for ``score``), or ``None``."""
    record = _recorded(run_dir / AGENT_FILE)
    if record is None or not isinstance(record.get("protocol"), dict):
        return None
    sandbox = record.get("sandbox")
    isolation = sandbox.get("isolation") if isinstance(sandbox, dict) else None
    if not isinstance(isolation, dict):
        isolation = None
    return {
        "model": record.get("model"),
        "tools": record.get("tools"),
        # None: no code tools (or a run recorded before bubblewrap); False: --unsafe-sandbox.
        "code_isolated": isolation.get("isolated") if isolation else None,
        **record["protocol"],
    }


def holds_agent_answers(run_dir: Path, by_turn: Mapping[tuple[str, int], str]) -> bool:
    """Whether any answer of ``by_turn`` (by task id and turn index) is one the agent of
    ``run_dir`` committed: after ``import-responses --overwrite`` none is, and ``agent.json``
    no longer describes the answers scored."""
    path = run_dir / TRAJECTORIES
    if not path.is_file():
        return False
    for _, line in jsonio.iter_jsonl(path, on_torn_tail=lambda _: None):
        key: tuple[Any, Any] = (line.get("task_id"), line.get("turn_index"))
        if line.get("status") == "answered" and by_turn.get(key) == line.get("answer"):
            return True
    return False
