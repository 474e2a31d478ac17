"""The reproduction's rows: running paper-size rows on top of the workflow (parts, blocks,
grids; their invocations, provenance, plans and local data copies) and reading what they keep
(Table 2 and the appendix against the paper, the plans' tests, the findings, the sweeps and the
ledger) for docs/. The reading, pooling and tests are here; the Markdown they print is written by
attnlearn.reporting (row_markdown, contrast_markdown, appendix_markdown, findings_markdown,
sweep_markdown, experiments_markdown), which is given the numbers and reads no file. The top
stage: it may import every other.

Each module with a command line is run as ``python paper_rows/<module>.py`` (a thin entry point
that runs this checkout's code) or ``python -m attnlearn.rows.<module>``.
"""

from pathlib import Path

# The checkout this package lives in: the kept rows, plans and pages it reads and writes
REPO = Path(__file__).resolve().parents[3]
