"""Running scorers safely: worker processes with a per-sample budget and memory cap."""
