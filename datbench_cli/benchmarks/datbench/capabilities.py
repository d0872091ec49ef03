"""Benchmark targets: the nine DatBench capabilities, ``all``, and ``vistoolbench``."""

from __future__ import annotations

from datbench_cli.errors import InputError

CAPABILITIES = (
    "chart",
    "counting",
    "document",
    "general",
    "grounding",
    "math",
    "scene",
    "spatial",
    "table",
)
VISTOOLBENCH = "vistoolbench"
DEFAULT_DATBENCH_SOURCE = "DatologyAI/DatBench"
DEFAULT_VISTOOLBENCH_SOURCE = "ScaleAI/VisualToolBench"


def resolve_targets(targets: list[str]) -> tuple[str, list[str]]:
    """``(benchmark, capabilities)`` for the targets given on the command line.

    ``all`` expands to the nine capabilities; duplicates are dropped, order kept. Mixing
    ``vistoolbench`` with DatBench capabilities, or an unknown name, is an :class:`InputError`.
    """
    if not targets:
        raise InputError(
            f"name at least one target: {', '.join(CAPABILITIES)}, all, or vistoolbench"
        )
    lowered = [t.strip().lower() for t in targets]
    if VISTOOLBENCH in lowered:
        if len(set(lowered)) > 1:
            raise InputError("vistoolbench cannot be exported together with DatBench capabilities")
        return VISTOOLBENCH, []
    chosen: list[str] = []
    for target in lowered:
        names = CAPABILITIES if target == "all" else (target,)
        for name in names:
            if name not in CAPABILITIES:
                raise InputError(
                    f"unknown target {name!r}; valid targets: {', '.join(CAPABILITIES)}, all, "
                    "vistoolbench"
                )
            if name not in chosen:
                chosen.append(name)
    return "datbench", chosen
