"""DatBench (DatologyAI/DatBench): nine capabilities, direct scorers and judge-mode samples."""
