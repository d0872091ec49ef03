"""The OpenAI batch format, out and in: request files, response lines, the sender, shards."""
