"""The appendix's tables of docs/reproduction.md as Markdown (appendix_rows.py): A.4's Table 2 with
Kendall's tau, its Multi30k row with BLEU, A.6's Table 10, A.10's Table 11 and Table 2 on the
training split, each a heading, what it reads, and a row of ours beside a row of the paper's per
dataset. The intervals come from attnlearn.rows.appendix_rows (appendix_intervals); here they are
only written."""

from __future__ import annotations

import pandas as pd

from attnlearn.agreement.paper import (TABLE2_BLEU, TABLE2_KENDALL_COLUMNS, TABLE2_TRAIN_COLUMNS,
                                       TABLE2_VALUE_COLUMNS, TABLE11_VALUE_COLUMNS)
from attnlearn.agreement.readable import interval, percent, points
from attnlearn.reporting.row_markdown import dataset_name, paper_cell

# The appendix's columns as its tables head them
HEADERS = {"agr_alpha_xi_uniform": "A(α\\*, ξ^uf)", "agr_xi_proxy_xi_uniform": "A(ξ^px, ξ^uf)",
           "agr_grad_xi_uniform": "A(g\\*, ξ^uf)", "agr_alpha_xi_standard": "A(α\\*, ξ^B)", "random_baseline": "baseline",
           "ctx_perf_xi_uniform": "ctx ξ^uf", "ctx_perf_xi_proxy_xi_uniform": "ctx ξ^px",
           "ctx_perf_grad_xi_uniform": "ctx g\\*", "ctx_perf_xi_standard": "ctx ξ^B", "best_perf": "best",
           "agr_alpha_frozen_alpha_star": "A(α^frozen, α\\*)", "agr_xi_uniform_alpha_star": "A(ξ^uf, α\\*)",
           "agr_xi_logreg_xi_uniform": "A(ξ^lr, ξ^uf)"}


def ours_cell(iv) -> str:
    """mean [95% PI] (n), to the decimals that read the paper's value (readable.interval);
    one replicate: its value and n, no interval."""
    if iv["n"] == 0:
        return "undefined"
    if iv["n"] < 2:
        return f"{percent(iv['mean'])} (n = 1, no interval)"
    return f"{interval(iv['mean'], iv['pi_low'], iv['pi_high'], mark_past=False, against=iv['paper'])} (n = {iv['n']})"


def table_lines(intervals: pd.DataFrame, columns: list[str], extra: dict[str, str] | None = None,
                extra_header: str | None = None) -> list[str]:
    """A row of ours and, where the paper has the dataset, a row of the paper's values, per
    dataset; ``extra``: one more column's cell per dataset (ours), under ``extra_header``."""
    headers = [HEADERS[c] for c in columns] + ([extra_header] if extra_header else [])
    lines = ["| dataset | " + " | ".join(headers) + " |", "|---" * (len(headers) + 1) + "|"]
    for dataset, g in intervals.groupby("dataset", sort=False):
        by_col = g.set_index("column")
        more = [extra[dataset]] if extra_header else []
        name = dataset_name(dataset)
        lines.append(f"| {name}, ours | " + " | ".join([ours_cell(by_col.loc[c]) for c in columns] + more) + " |")
        papers = [paper_cell(by_col.loc[c]) for c in columns]
        if any(p != "-" for p in papers):
            lines.append(f"| {name}, paper | " + " | ".join(papers + ["-"] * len(more)) + " |")
    return lines


def paired_cell(iv: dict, below: int, per_replicate: bool = False) -> str:
    """A within-replicate difference (statistics.t_intervals of it): mean [95% CI of the mean] in
    points, or the one value; ``per_replicate``: also one more replicate's 95% prediction interval
    and how many of the differences (``below``) lie below 0."""
    if iv["n"] == 0:
        return "-"
    if iv["n"] < 2:
        return f"{100 * iv['mean']:+.1f} (n = 1, no interval)"
    cell = f"{points(iv['mean'], iv['ci_low'], iv['ci_high'])} (n = {iv['n']})"
    if per_replicate:
        cell += (f"; one more replicate: {points(iv['mean'], iv['pi_low'], iv['pi_high'])}; "
                 f"{below} of {iv['n']} below 0")
    return cell


def section(heading: str, intervals: pd.DataFrame | None, missing: list[str], reads: str, table) -> list[str]:
    """An appendix table's section: its ``heading``, then ``missing`` where no kept folder holds
    the table (``intervals`` None), else what it reads (``reads``) and ``table(intervals)``, its lines."""
    if intervals is None:
        return [heading, "", *missing]
    return [heading, "", reads, "", *table(intervals)]


KENDALL_READS = ("Kendall's tau-b between the two measures per probe row (an example; for translation, an example's "
                 "target word), averaged over the rows (a random ranking's is 0); the contextualized columns by the "
                 "same tau. The paper's table has no A(α\\*, ξ^B); its "
                 "starred values (SST's ctx ξ^px) are its convention where no checkpoint reaches the agreement (the "
                 "best performance). Ours: mean [95% prediction interval] (n) over the replicates: every replicate "
                 "of a folder whose tables hold table2_kendall_replicates.parquet, else the folder's first (a block's "
                 "without the columns that read B); the interval holds the seeds' spread and a bound on the examples' "
                 "error (a tau per row lies in [-1, 1]: docs/methods.md 5.1); the paper: its value at two decimals, "
                 "inside or outside our interval.")


def kendall_markdown(intervals: pd.DataFrame | None) -> list[str]:
    """A.4's Table 2 with Kendall's tau; ``intervals`` None where no kept folder holds it."""
    return section("### Table 2 with Kendall's tau (appendix A.4)", intervals,
                   ["No kept folder holds table2_kendall.parquet.", ""], KENDALL_READS,
                   lambda iv: table_lines(iv, TABLE2_KENDALL_COLUMNS) + [""])


BLEU_HEADING = ["### Translation with BLEU as the performance (appendix A.4)", ""]


def bleu_markdown(intervals: pd.DataFrame) -> list[str]:
    """A.4's translation row with BLEU as the performance."""
    return BLEU_HEADING + table_lines(intervals, TABLE2_VALUE_COLUMNS) + [""]


def bleu_missing_markdown(translation: list[str], bleu: dict[str, set]) -> list[str]:
    """Why no translation row has BLEU: per translation dataset, the ``probe.bleu`` settings its
    kept parts ran with (``bleu``), and what it would take."""
    if not translation:
        return BLEU_HEADING + ["No kept row is a translation task.", ""]
    said = []
    for d in translation:
        why = ("every kept part ran with `probe: {bleu: false}` (config/paper_cpu.yaml: beam search of every "
               "checkpoint cut)") if bleu.get(d) == {False} else "no kept part computed BLEU"
        said.append(f"{dataset_name(d)}: no row, {why}. It needs the parts rerun with `probe.bleu: true` (BLEU of "
                    "every checkpoint, alpha* at the best-BLEU checkpoint); the paper's row is "
                    + " / ".join(f"{v:.2f}" for v in TABLE2_BLEU.get(d, [])) + " in Table 2's column order.")
    return BLEU_HEADING + said + [""]


# said where some replicate other than a part's first has a frozen run (a block run with --variants frozen)
PER_REPLICATE = ("Each replicate compares its own frozen run with its own α\\*: every replicate of a block run with "
                 "`paper_row.py --variants frozen`, a part's first replicate (the part's frozen run, where it has "
                 "one). ")


TABLE10_MEASURES = ("A(α^frozen, α\\*): a run with every weight but the attention's frozen at its "
                    "initialization, at its checkpoint that agrees most with α\\*; A(ξ^uf, α\\*): the uniform run's "
                    "probe against α\\*, at its checkpoint that agrees most. ")
TABLE10_READS = ("A row with one frozen run has n = 1 and no interval. "
                 "The paper's Table 10 values (classification tasks) are not in the text of the paper we hold; its "
                 "reading: \"the left column is consistently lower than the right column\". The two columns: mean "
                 "[95% prediction interval of one more replicate, with the bound on the examples' error] (n). The "
                 "last column: A(α^frozen, α\\*) - A(ξ^uf, α\\*) within the replicate, in points: the mean's 95% "
                 "confidence interval (is the difference below 0 on average?), then one more replicate's 95% "
                 "prediction interval and how many replicates lie below 0 (is it below 0 in each?).")


def table10_markdown(intervals: pd.DataFrame | None, columns: list[str], paired: dict[str, str],
                     several: bool) -> list[str]:
    """A.6's Table 10 over ``columns`` (frozen, uniform), with the paired difference per dataset;
    ``several``: some row pools more than one frozen run; ``intervals`` None where none is kept."""
    return section("### Table 10: the frozen run's attention against α\\* (appendix A.6)", intervals,
                   ["No kept folder holds table10.parquet.", ""],
                   TABLE10_MEASURES + (PER_REPLICATE if several else "") + TABLE10_READS,
                   lambda iv: table_lines(iv, columns, paired, "frozen - ξ^uf, paired: mean [95% CI]; one more "
                                          "replicate [95% PI]; below 0") + [""])


TABLE11_READS = ("A(ξ^px, ξ^uf) and A(ξ^lr, ξ^uf): the proxy's and a logistic regression's word weights (L2, its "
                 "strength picked by validation accuracy) against the uniform run's probe, each at U's checkpoint "
                 "where it agrees most, over the same replicates. The paper prints fractions (0.40 is 40.00 here) "
                 "from a retrain of its models. The last column: A(ξ^lr, ξ^uf) - A(ξ^px, ξ^uf) within the "
                 "replicate, mean [95% CI] in points.")


def table11_markdown(intervals: pd.DataFrame | None, paired: dict[str, str]) -> list[str]:
    """A.10's Table 11 with the paired difference per dataset; ``intervals`` None where none is kept."""
    return section("### Table 11: the proxy's probe against an L2 logistic regression's (appendix A.10)", intervals,
                   ["No kept folder holds a classification row's table11.parquet.", ""], TABLE11_READS,
                   lambda iv: table_lines(iv, TABLE11_VALUE_COLUMNS, paired, "ξ^lr - ξ^px, paired") + [""])


TRAIN_MISSING = ("No kept row holds table2_train.parquet: it is made only with `tables: {train_split: true}` "
                 "(every checkpoint probed on training examples too), which no kept row ran. A finished "
                 "row whose runs are still on disk gets it with `paper_row.py ... --keep-runs --train-split`; "
                 "the runs themselves are not kept in reproduction/rows.")
TRAIN_READS = ("Table 2's columns with every checkpoint probed on the first `probe.max_examples` training examples "
               "instead of validation ones (α\\* and the performance columns by accuracy on those examples, as the "
               "appendix defines them), over the replicates whose folders hold table2_train_replicates.parquet "
               "(`paper_row.py --keep-runs --train-split` on a finished row whose runs are still on disk). As in "
               "Table 2, a block's columns that read B (A(α\\*, ξ^B) and the contextualized ones) are left out: "
               "its B runs are its other replicates' A runs. The intervals hold the seeds' spread and a bound on "
               "the examples' error (the same training examples in every replicate, the paper's others: "
               "docs/methods.md 5.1).")


def train_markdown(intervals: pd.DataFrame | None) -> list[str]:
    """A.4's Table 2 on the training split; ``intervals`` None where no kept row holds it."""
    return section("### Table 2 on the training split (appendix A.4)", intervals, [TRAIN_MISSING], TRAIN_READS,
                   lambda iv: table_lines(iv, TABLE2_TRAIN_COLUMNS))
