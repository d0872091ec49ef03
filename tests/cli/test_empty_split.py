"""An export of a split without a row is bad input (exit 2, nothing written), both benchmarks:
it exported 0 samples or tasks with exit 0 (VisualToolBench without a word)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from tests.cli_helpers import SAMPLE, run_cli
from tests.vtb_support import SAMPLE_DIR

_CONFIG = "---\nconfigs:\n- config_name: math\n  data_files:\n  - split: test\n    path: math/test-*.parquet\n---\n"


def test_an_empty_split_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    dat = tmp_path / "dat"
    (dat / "math").mkdir(parents=True)
    (dat / "README.md").write_text(_CONFIG)
    rows = pq.read_table(next((SAMPLE / "math").glob("*.parquet")))
    pq.write_table(rows.slice(0, 0), dat / "math" / "test-00000-of-00001.parquet")
    vtb = tmp_path / "vtb"
    vtb.mkdir()
    pq.write_table(pq.read_table(SAMPLE_DIR / "test.parquet").slice(0, 0), vtb / "test.parquet")
    for target, source, said in (
        ("math", dat, "the 'test' split of math holds no rows: nothing to export"),
        ("vistoolbench", vtb, "the 'test' split holds no task: nothing to export"),
    ):
        run = tmp_path / f"run-{target}"
        result = run_cli("export-tasks", target, "--source", str(source), "-d", str(run), "-q")
        assert result.exit_code == 2, result.stderr
        assert result.stderr == f"error: {source}: {said}\n"
        assert not run.exists()
