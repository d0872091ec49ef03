"""Tests of the OpenAI batch format (datbench_cli/batch): requests, responses, send, shards."""
