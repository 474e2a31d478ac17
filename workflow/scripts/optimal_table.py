"""Rule optimal_attention_table: the optimal-attention comparisons of every dataset with
additive runs, summarised over seeds (Parquet, Markdown) and drawn: A(alpha^opt, xi) and
A(alpha, xi) over training, per additive seed."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.runtime.io import atomic_path, read_parquets, write_parquet  # noqa: E402
from attnlearn.runtime.jobs import run  # noqa: E402
from attnlearn.agreement.optimal_attention import PERF_COLUMNS, ROW_COLUMNS, markdown, summary  # noqa: E402


def figure(rows, path):
    """Per dataset: A(alpha^opt, xi) (solid) and A(alpha, xi) (dashed) over training, one colour
    per additive seed, a star at its best checkpoint."""
    curves = rows[rows["comparison"].isin(["opt_xi", "alpha_xi"])]
    datasets = list(dict.fromkeys(curves["dataset"])) or ["(no additive runs)"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.8 * len(datasets), 3.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        mine = curves[curves["dataset"] == dataset]
        for i, (run_name, g) in enumerate(mine.groupby("run")):
            for name, style, label in (("opt_xi", "-", "alpha^opt"), ("alpha_xi", "--", "alpha")):
                c = g[g["comparison"] == name]
                ax.plot(c["step"], 100 * c["value"], style, marker="o", ms=3, color=f"C{i}",
                        label=f"{run_name}: {label}")
                best = c[c["best"]]
                ax.plot(best["step"], 100 * best["value"], "*", ms=10, color=f"C{i}")
        if len(mine):
            ax.axhline(100 * mine["baseline"].mean(), color="grey", ls=":", label="chance")
            ax.legend(fontsize=6)
        ax.set(title=dataset, xlabel="training step", ylabel="agreement with xi (%)", ylim=(0, 102))
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
