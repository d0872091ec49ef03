"""The paired bootstrap's defaults and bound (re-exported by :mod:`datbench_cli.stats`), in a
module without numpy: ``datbench compare``'s options show them, and the command line's help
should not import numpy to do so."""

from __future__ import annotations

DEFAULT_RESAMPLES = 10_000
MAX_RESAMPLES = 1_000_000  # bounds the time and memory of one comparison row
DEFAULT_SEED = 0
