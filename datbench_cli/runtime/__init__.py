"""Running scorers safely: the per-sample time budget and parallel scoring."""
