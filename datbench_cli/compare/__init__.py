"""``datbench compare``: two runs of one benchmark joined by sample id, with paired statistics
per row (:mod:`.comparison`), the benchmark sides (``benchmarks/*/pairing.py``), the paired
statistics of a row (:mod:`.paired`) and the inputs (:mod:`.inputs`)."""
