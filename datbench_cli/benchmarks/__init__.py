"""The benchmarks, as peers: ``datbench/`` and ``vistoolbench/``."""
