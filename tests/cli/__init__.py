"""Tests through the command line."""
