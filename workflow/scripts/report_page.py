"""Rules tables_page, analyses_page, experiments_page, optimal_attention_page ({page}_page,
rules/tables.smk): a Markdown summary as an HTML page of the report."""

from pathlib import Path

from attnlearn.runtime.io import atomic_path
from attnlearn.runtime.jobs import run
from attnlearn.reporting.pages import markdown_html


def main(job):
    with atomic_path(job.output.page) as tmp:
        tmp.write_text(markdown_html(Path(job.input.markdown).read_text()))


run(main, globals().get("snakemake"))
