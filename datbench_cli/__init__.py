"""datbench: exact, scriptable evaluation of vision-language models on DatBench."""

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
from datbench_cli.benchmarks.vistoolbench import (
    VisToolBenchEvaluator,
    VisToolBenchReport,
    parse_vtb_verdict,
)
from datbench_cli.errors import ScorerFailed, StrictJudgeError
from datbench_cli.version import __version__

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
