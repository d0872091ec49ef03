"""datbench: exact, scriptable evaluation of vision-language models on DatBench."""

from datbench_cli.evaluator import DatBenchEvaluator
from datbench_cli.judge import parse_judge_verdict
from datbench_cli.schema import (
    DatBenchReport,
    DatBenchSample,
    InferenceTask,
    JudgeRequest,
    JudgeResponse,
    SampleScore,
    VLMResponse,
)
from datbench_cli.scoring import ScorerFailed
from datbench_cli.vistoolbench import VisToolBenchEvaluator, parse_vtb_verdict

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
