"""datbench: exact, scriptable evaluation of vision-language models on DatBench."""

from datbench_cli.benchmarks.datbench.evaluator import DatBenchEvaluator
from datbench_cli.benchmarks.datbench.judge import parse_judge_verdict
from datbench_cli.benchmarks.datbench.schema import (
    DatBenchReport,
    DatBenchSample,
    InferenceTask,
    JudgeRequest,
    JudgeResponse,
    SampleScore,
    VLMResponse,
)
from datbench_cli.benchmarks.datbench.scoring import ScorerFailed
from datbench_cli.benchmarks.vistoolbench import VisToolBenchEvaluator, parse_vtb_verdict

__version__ = "0.1.0"

__all__ = [
    "DatBenchEvaluator",
    "DatBenchReport",
    "DatBenchSample",
    "InferenceTask",
    "JudgeRequest",
    "JudgeResponse",
    "SampleScore",
    "ScorerFailed",
    "VLMResponse",
    "VisToolBenchEvaluator",
    "parse_judge_verdict",
    "parse_vtb_verdict",
    "__version__",
]
