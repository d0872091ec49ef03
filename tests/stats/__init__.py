"""Tests of the statistics (datbench_cli/stats.py) and of run comparison (datbench_cli/compare.py)."""
