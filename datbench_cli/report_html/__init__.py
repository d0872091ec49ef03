"""One self-contained HTML page per run (``datbench score --html``, ``datbench view``) and per
comparison (``datbench compare A B --html``).

The page shows numbers taken from ``report.json`` (and the comparison JSON) and never computes
statistics of its own; the run directory's task files add each sample's prompt, images and
judge prompt. :mod:`.inputs` finds and reads the files (images confined to the run directory),
each benchmark's ``page_view`` module (``Benchmark.page_data``) turns its report into page data,
:mod:`.blocks` is their shared vocabulary, :mod:`.compare_view` joins two runs, and
:mod:`.page` fills the template (``template.html``) with the data embedded once as JSON.
"""

from datbench_cli.report_html.build import check_target, compare_page, run_page, write_page

__all__ = ["check_target", "compare_page", "run_page", "write_page"]
