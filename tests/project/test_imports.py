"""The package's import graph, read from the source (function-level imports included): no
module imports itself back through others, and the lower layers (``files/``, ``batch/``,
``runtime/``, the scorers and their metrics) import nothing above them."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.cli_helpers import ROOT

PACKAGE = ROOT / "datbench_cli"
LOWER = (
    "files",
    "batch",
    "runtime",
    "scorers",
    "metrics",
    "text",
    "stats",
    "stats_defaults",
    "errors",
    "version",
    "shown_text",
)
# The top package re-exports the API (the evaluators), so it sits above everything too.
ABOVE = ("benchmarks", "cli", "leaderboard", "compare", "report_html", "")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from a import b`` counts as importing
    ``a.b`` when that is a module, else ``a``)."""
    modules = {_name(path): path for path in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                while target and target not in modules:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        edges[name] = found
    return edges


def _layer(module: str) -> str:
    """``benchmarks`` for ``datbench_cli.benchmarks.x``; ``""`` for the top package."""
    return module.removeprefix("datbench_cli").lstrip(".").partition(".")[0]


def _circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules in order, the first repeated at the end), if any."""
    done: set[str] = set()
    for start in sorted(edges):
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, list[str]]] = [(start, sorted(edges[start]))]
        if start in done:
            continue
        path.append(start)
        on_path.add(start)
        while stack:
            module, pending = stack[-1]
            if not pending:
                stack.pop()
                path.pop()
                on_path.discard(module)
                done.add(module)
                continue
            target = pending.pop()
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done:
                stack.append((target, sorted(edges[target])))
                path.append(target)
                on_path.add(target)
    return None


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "datbench_cli.files.run_store" in edges["datbench_cli.batch.response_store"]
    assert "datbench_cli.stats" in edges["datbench_cli.benchmarks.datbench.uncertainty"]


def test_the_circle_finder_finds_one() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circle(edges) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


def test_no_import_circles() -> None:
    assert _circle(graph()) is None


def test_the_lower_layers_import_nothing_above_them() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        if _layer(module) in LOWER
        for target in targets
        if _layer(target) in ABOVE
    )
    assert wrong == []


def test_only_the_command_line_imports_the_command_line_and_rich() -> None:
    # The leaderboard's page imported cli.output (and rich with it) for one helper: library
    # code must work without the terminal layer (rich is for the terminal only).
    entry = "datbench_cli.__main__"
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        if _layer(module) != "cli" and module != entry
        for target in targets
        if _layer(target) == "cli"
    )
    assert wrong == []
    rich_users = sorted(
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if "cli" not in path.relative_to(PACKAGE).parts[:1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            name.split(".")[0] == "rich"
            for name in (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
        )
    )
    assert rich_users == []
