"""Metric primitives shared by the scorers (ANLS, VQA accuracy, geometry, counting, relaxed match, tree edit distance, OCR text, safe arithmetic, ...)."""
