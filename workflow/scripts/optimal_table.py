"""Rule optimal_attention_table: the optimal-attention comparisons of every dataset with
additive runs, summarised over seeds (Parquet, Markdown) and drawn: A(alpha^opt, xi) over
training, one line per additive seed."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.io import atomic_path, read_parquets, write_parquet  # noqa: E402
from attnlearn.jobs import run  # noqa: E402
from attnlearn.optimal_agreement import PERF_COLUMNS, ROW_COLUMNS, markdown, summary  # noqa: E402


def figure(rows, path):
    curves = rows[rows["comparison"] == "opt_xi"]
    datasets = list(dict.fromkeys(curves["dataset"])) or ["(no additive runs)"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.4), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for run_name, g in curves[curves["dataset"] == dataset].groupby("run"):
            line, = ax.plot(g["step"], 100 * g["value"], marker="o", ms=3, label=run_name)
            best = g[g["best"]]
            ax.plot(best["step"], 100 * best["value"], "*", ms=10, color=line.get_color())
        base = curves.loc[curves["dataset"] == dataset, "baseline"]
        if len(base):
            ax.axhline(100 * base.mean(), color="grey", ls=":", label="chance")
            ax.legend(fontsize=7)
        ax.set(title=dataset, xlabel="training step", ylabel="A(alpha^opt, xi) %")
    fig.tight_layout()
    with atomic_path(path, ".png") as tmp:
        fig.savefig(tmp)
    plt.close(fig)


def main(job):
    # no dataset with additive runs: empty tables (the outputs exist under every config)
    rows = read_parquets(job.input.rows) if job.input.rows else pd.DataFrame(columns=ROW_COLUMNS)
    perf = read_parquets(job.input.performance) if job.input.performance else pd.DataFrame(columns=PERF_COLUMNS)
    table = summary(rows, perf)
    write_parquet(table, job.output.table)
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(markdown(table))
    figure(rows, job.output.figure)


run(main, globals().get("snakemake"))
