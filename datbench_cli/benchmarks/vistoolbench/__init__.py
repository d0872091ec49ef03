"""VisualToolBench (ScaleAI/VisualToolBench): multi-turn tasks, rubric judge tasks, ARS/APR.

Modules: ``model`` (task/turn/rubric records), ``rows`` (dataset rows -> tasks), ``records``
(run-directory lines), ``answers`` (model responses per turn), ``judging`` (judge tasks and judge
responses), ``prompt`` (judge prompt), ``verdict`` (judge-output parser), ``ars_apr`` (ARS/APR),
``report`` (the report object), ``evaluator`` (the Python API), ``stages`` (the run-directory
stages) and ``benchmark`` (the :class:`~datbench_cli.benchmarks.base.Benchmark` the command line
calls).

The package imports none of them, so that the benchmark table (and `datbench --help`) does not
load the evaluator and its statistics (numpy): import each from its module.
"""
