"""Tests of datbench_cli/scorers."""
