"""datbench: exact, scriptable evaluation of vision-language models on DatBench.

The public names are imported when first used (PEP 562), so that starting the ``datbench``
program loads nothing before its entry point (``datbench_cli.__main__``) is ready for a Ctrl-C.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from datbench_cli.version import __version__

if TYPE_CHECKING:
    from datbench_cli.benchmarks.datbench.evaluator import DatBenchEvaluator
    from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict
    from datbench_cli.benchmarks.datbench.judge_prompt import fill_judge_prompt
    from datbench_cli.benchmarks.datbench.schema import (
        DatBenchReport,
        DatBenchSample,
        InferenceTask,
        JudgeRequest,
        JudgeResponse,
        SampleScore,
        VLMResponse,
    )
    from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
    from datbench_cli.benchmarks.vistoolbench.report import VisToolBenchReport
    from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict
    from datbench_cli.errors import ScorerFailed, StrictJudgeError

_SCHEMA = "datbench_cli.benchmarks.datbench.schema"
_HOMES = {
    "DatBenchEvaluator": "datbench_cli.benchmarks.datbench.evaluator",
    "parse_judge_verdict": "datbench_cli.benchmarks.datbench.judge",
    "fill_judge_prompt": "datbench_cli.benchmarks.datbench.judge_prompt",
    "DatBenchReport": _SCHEMA,
    "DatBenchSample": _SCHEMA,
    "InferenceTask": _SCHEMA,
    "JudgeRequest": _SCHEMA,
    "JudgeResponse": _SCHEMA,
    "SampleScore": _SCHEMA,
    "VLMResponse": _SCHEMA,
    "VisToolBenchEvaluator": "datbench_cli.benchmarks.vistoolbench.evaluator",
    "VisToolBenchReport": "datbench_cli.benchmarks.vistoolbench.report",
    "parse_vtb_verdict": "datbench_cli.benchmarks.vistoolbench.verdict",
    "ScorerFailed": "datbench_cli.errors",
    "StrictJudgeError": "datbench_cli.errors",
}

__all__ = [
    "DatBenchEvaluator",
    "DatBenchReport",
    "DatBenchSample",
    "InferenceTask",
    "JudgeRequest",
    "JudgeResponse",
    "SampleScore",
    "ScorerFailed",
    "StrictJudgeError",
    "VLMResponse",
    "VisToolBenchEvaluator",
    "VisToolBenchReport",
    "fill_judge_prompt",
    "parse_judge_verdict",
    "parse_vtb_verdict",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """A public name, from the module that defines it (then kept here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'datbench_cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
