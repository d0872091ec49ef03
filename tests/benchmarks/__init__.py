"""Tests of the benchmarks (datbench_cli/benchmarks): evaluators, export, judging, ARS/APR."""
