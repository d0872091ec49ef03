"""Shared file plumbing: JSON/JSONL, the run directory, image files, dataset loading."""
