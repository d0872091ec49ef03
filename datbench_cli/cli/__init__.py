"""The ``datbench`` command line: a thin layer over the library."""
