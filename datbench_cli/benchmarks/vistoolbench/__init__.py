"""VisualToolBench (ScaleAI/VisualToolBench): multi-turn tasks, rubric judge tasks, ARS/APR.

Modules: ``model`` (task/turn/rubric records), ``rows`` (dataset rows -> tasks), ``references``
(run-directory lines), ``answers`` (model responses per turn), ``judging`` (judge tasks and judge
responses), ``prompt`` (judge prompt), ``verdict`` (judge-output parser), ``metrics`` (ARS/APR),
``evaluator`` (the Python API) and ``pipeline`` (what the command line calls).
"""

from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
from datbench_cli.benchmarks.vistoolbench.model import BENCHMARK, DEFAULT_SOURCE
from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict

__all__ = ["BENCHMARK", "DEFAULT_SOURCE", "VisToolBenchEvaluator", "parse_vtb_verdict"]
