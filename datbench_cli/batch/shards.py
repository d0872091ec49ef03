"""Deterministic shards of an export: which machine answers which sample.

A sample belongs to shard ``int.from_bytes(sha256(id)[:8], "big") % count``: stable across
machines, Python versions and dataset order, and independent of every other id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from datbench_cli.errors import UsageError


def shard_of(sample_id: str, count: int) -> int:
    """The shard (``0 .. count-1``) of one id."""
    digest = hashlib.sha256(sample_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise UsageError("--num-shards must be at least 1")
        if not 0 <= self.index < self.count:
            raise UsageError(
                f"--shard-index must be between 0 and {self.count - 1} for --num-shards "
                f"{self.count}, got {self.index}"
            )

    @classmethod
    def from_options(cls, num_shards: int | None, shard_index: int | None) -> Shard | None:
        """The shard the two options describe (``None``: no sharding); both or neither."""
        if num_shards is None and shard_index is None:
            return None
        if num_shards is None or shard_index is None:
            raise UsageError("--num-shards and --shard-index go together")
        return cls(shard_index, num_shards)

    def contains(self, sample_id: str) -> bool:
        """Whether the sample is in this shard."""
        return shard_of(sample_id, self.count) == self.index
