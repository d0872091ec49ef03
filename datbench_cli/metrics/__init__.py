"""Metric primitives shared by the scorers."""
