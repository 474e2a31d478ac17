"""Rule figures: per-dataset contextualized-agreement curve and alpha/xi heatmaps."""

import base64
import json

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement.compare import best_step
from attnlearn.runtime.jobs import run
from attnlearn.reporting.plots import agreement_curves_figure, contextualized_figure, heatmap_figure
from attnlearn.data.tokenize import load_sentencepiece


def token_labels(tokenizer: dict, valid: pd.DataFrame, task: str):
    if tokenizer["kind"] == "sentencepiece":
        piece = load_sentencepiece(base64.b64decode(tokenizer["model_b64"])).id_to_piece
    else:
        piece = tokenizer["vocab"].__getitem__

    def labels(ex):
        row = valid.iloc[ex]
        if task == "translation":
            return [piece(i) for i in row["src_ids"]], [piece(i) for i in row["tgt_ids"][1:]]
        return [piece(i) for i in row["ids"]], ["label"]

    return labels


def main(job):
    p, d = job.params, job.wildcards.dataset
    agr, perf = pd.read_parquet(job.input.agreement), pd.read_parquet(job.input.perf)
    contextualized_figure(d, p.task, agr, perf, job.output.contextualized, p.xi_b_run)
    agreement_curves_figure(d, agr, perf, job.output.curves, pd.read_parquet(job.input.replicates))
    star = best_step(perf[perf["role"] == "A"])
    vs_u = agr[(agr.metric == "agreement") & (agr.a_role == "A") & (agr.a_step == star)
               & (agr.a_measure == "alpha") & (agr.b_measure == "xi") & (agr.b_role == "U")]
    u_step = int(vs_u.loc[vs_u["value"].idxmax(), "b_step"])
    labels = token_labels(json.load(open(job.input.tokenizer)), pd.read_parquet(job.input.valid), p.task)
    heatmap_figure(d, {"alpha*": pq.read_table(job.input.standard), "xi^uf": pq.read_table(job.input.uniform)},
                   {"alpha*": star, "xi^uf": u_step}, labels, p.n_examples, job.output.heatmap)


run(main, globals().get("snakemake"))
