"""Answer-comparison metrics shared by several dataset scorers (ANLS, VQA accuracy)."""
