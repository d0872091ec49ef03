"""VisualToolBench (ScaleAI/VisualToolBench): multi-turn tasks, rubric judge tasks, ARS/APR.

Modules: ``model`` (task/turn/rubric records), ``rows`` (dataset rows -> tasks), ``records``
(run-directory lines), ``answers`` (model responses per turn), ``judging`` (judge tasks and judge
responses), ``prompt`` (judge prompt), ``verdict`` (judge-output parser), ``ars_apr`` (ARS/APR),
``report`` (the report object), ``evaluator`` (the Python API), ``stages`` (the run-directory
stages) and ``benchmark`` (the :class:`~datbench_cli.benchmarks.base.Benchmark` the command line
calls).
"""

from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
from datbench_cli.benchmarks.vistoolbench.model import BENCHMARK, DEFAULT_SOURCE
from datbench_cli.benchmarks.vistoolbench.report import VisToolBenchReport
from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict

__all__ = [
    "BENCHMARK",
    "DEFAULT_SOURCE",
    "VisToolBenchEvaluator",
    "VisToolBenchReport",
    "parse_vtb_verdict",
]
