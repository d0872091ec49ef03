"""Numeric helpers shared by scorers (safe arithmetic evaluation and friends)."""
