"""What a reader sees: figures, the examples pages and the Markdown pages of the Snakemake report."""
