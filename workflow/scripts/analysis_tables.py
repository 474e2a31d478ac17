"""Rule analysis_tables: the analyses' per-dataset and per-run tables collected, the
summaries across seeds, their figures and a Markdown summary (docs/analyses.md)."""

import pandas as pd

from attnlearn.reporting.analysis_figures import alignment_figure, head_roles_figure
from attnlearn.analyses.seeds import aer_seed_summary, role_seed_summary
from attnlearn.runtime.io import atomic_path, write_parquet
from attnlearn.runtime.jobs import run

NAMES = ("norms", "alignment_error", "effective_attention", "tanhmax", "head_roles")


def _concat(paths):
    frames = [f for f in (pd.read_parquet(p) for p in paths) if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _markdown(df: pd.DataFrame) -> str:
    if df.empty:
        return "(no rows)\n"
    shown = df.copy()
    for col in shown.columns:
        if shown[col].dtype.kind == "f":
            shown[col] = shown[col].round(3)
    lines = ["| " + " | ".join(map(str, shown.columns)) + " |", "|" + "---|" * len(shown.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in shown.itertuples(index=False)]) + "\n"


def headline_aer(aer: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The rows of the AER mode the summary and figure show (analyses.aer)."""
    return aer[aer["aer_mode"] == mode] if not aer.empty else aer


def run_a(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of each dataset's run A (the tables also hold the other standard runs')."""
    return df[df["run_role"] == "A"] if not df.empty else df


def summary(tables: dict, aer_mode: str) -> str:
    out = ["# Attention analyses (docs/analyses.md)\n",
           "Run A unless said otherwise; the tables in results/tables/ hold every analysed seed.\n"]
    aer = run_a(headline_aer(tables["alignment_error"], aer_mode))
    if not aer.empty:
        best = aer[aer["best"] & (aer["head"] == -1)]
        out += [f"## Alignment error rate at run A's best checkpoint (layer level, AER mode {aer_mode})\n",
                _markdown(best.pivot_table(index=["dataset", "arch", "layer"], columns="measure", values="aer")
                          .reset_index())]
    aer_seeds = tables["alignment_error_seeds"]
    if not aer_seeds.empty:
        out += [f"## Alignment error across seeds: AER(norms) - AER(weights), 95% t interval, paired t-test "
                f"(AER mode {aer_mode})\n", _markdown(aer_seeds[aer_seeds["aer_mode"] == aer_mode])]
    norms = run_a(tables["norms"])
    if not norms.empty:
        sel = norms[norms["token_class"] != "word"]
        out += ["## Share of weight vs share of norm-based weight on special tokens\n",
                _markdown(sel[["dataset", "arch", "kind", "layer", "head", "token_class", "weight_share",
                               "norm_share", "mean_f_norm"]])]
    eff = run_a(tables["effective_attention"])
    if not eff.empty:
        props = eff[eff["test"] == "property"].groupby(["dataset", "arch", "kind", "metric"])["value"].mean()
        out += ["## Effective attention: properties (mean over heads)\n", _markdown(props.unstack().reset_index())]
        ers = eff[(eff["metric"] == "logp_drop")].groupby(["dataset", "arch", "test", "k", "ranker"])["value"].mean()
        out += ["## Erasure: drop in mean log p(gold) (mean over sites and heads)\n",
                _markdown(ers.unstack().reset_index())]
    tm = tables["tanhmax"]
    if not tm.empty:
        out += ["## Softmax vs TanhMax\n",
                _markdown(tm.pivot_table(index=["dataset", "metric"], columns="activation", values="value")
                          .reset_index())]
    roles = run_a(tables["head_roles"])
    if not roles.empty:
        out += ["## Head roles: significant heads per role (corrected / uncorrected / tested)\n",
                _markdown(roles.groupby(["dataset", "arch", "kind", "role"]).agg(
                    significant=("significant", "sum"), uncorrected=("significant_uncorrected", "sum"),
                    heads=("significant", "size"), max_mean_score=("mean_score", "max")).reset_index())]
    role_seeds = tables["head_roles_seeds"]
    if not role_seeds.empty and role_seeds["n_seeds"].max() > 1:
        out += ["## Head roles across seeds: each seed's heads ranked by score (rank 1 = highest), "
                "95% t interval across seeds\n", _markdown(role_seeds)]
    return "\n".join(out)


def main(job):
    tables = {name: _concat(job.input[name]) for name in NAMES}
    tables["alignment_error_seeds"] = aer_seed_summary(tables["alignment_error"])
    tables["head_roles_seeds"] = role_seed_summary(tables["head_roles"])
    for name, df in tables.items():
        write_parquet(df, job.output[name])
    aer_mode = job.params.aer
    alignment_figure(headline_aer(tables["alignment_error"], aer_mode), job.output.alignment_figure)
    head_roles_figure(run_a(tables["head_roles"]), job.output.roles_figure)
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(summary(tables, aer_mode))


run(main, globals().get("snakemake"))
