"""Tests of datbench_cli/metrics."""
