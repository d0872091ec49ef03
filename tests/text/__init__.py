"""Tests of datbench_cli/text."""
