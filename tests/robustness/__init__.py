"""Hostile inputs, faults, interruptions and concurrency."""
