"""The seeded rows of docs/reproduction.md as Markdown: Table 2's columns as mean [95%
prediction interval] beside the paper's value, then the claims table, from the replicate
tables of one or more finished runs.

    python paper_rows/reproduction_rows.py reproduction/rows/*
    python paper_rows/reproduction_rows.py reproduction/rows/* --figure docs/figures/table2_replicates.png
    python paper_rows/reproduction_rows.py saved/sst/tables rows/results/tables
    python paper_rows/reproduction_rows.py --variance reproduction/rows/sms_spam/factorial
    python paper_rows/reproduction_rows.py --contrast reproduction/rows/newsgroups reproduction/rows/sms_spam

Each argument is a folder holding a run's `table2_replicates.parquet` (its `results/tables`,
or a copy kept before another `only=[...]` command rewrote it), or a row kept by
paper_rows/paper_row.py (`reproduction/rows/<dataset>`: its `tables`, or its parts' `part*/tables`).
The parts of a row (paper_row.py --part) share no run: their replicates are pooled, and so
are the additive runs of appendix A.1 (a kept row's `analyses/optimal_attention.parquet`),
whose summary over seeds follows the claims where a row has them, and so are its TanhMax runs
(`analyses/tanhmax.parquet`): each TanhMax run's best performance against the prediction interval
of the row's standard runs, and its agreement with xi^uf against the replicates' A(alpha*, xi^uf)
(docs/analyses.md). The rows of config/paper_cpu.yaml
are run one dataset at a time, and may come from different commits; the intervals and claims are
recomputed here with this commit's code (replicates.interval_table, claims.claims_table), so
every row is read the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from attnlearn.agreement.claims import claims_table
from attnlearn.agreement.compare import best_step, primary
from attnlearn.agreement.optimal_attention import markdown as optimal_markdown
from attnlearn.agreement.optimal_attention import summary as optimal_summary
from attnlearn.agreement.paper import PAPER_EXAMPLES, TABLE2_VALUE_COLUMNS
from attnlearn.agreement.readable import interval, modes_frame, paper_mark, percent, points, readings_tests_frame
from attnlearn.agreement.readings import CENTRAL, READING_COLUMNS, boundary_split, modes_table, readings_tests
from attnlearn.agreement.replicates import B_COLUMNS, interval_table, shared_b, variance_table
from attnlearn.agreement.tables import select_rows
from attnlearn.rows import REPO
from attnlearn.statistics import holm, t_intervals

NAMES = {"sst": "SST", "sms_spam": "SMS spam", "newsgroups": "20 Newsgroups", "multi30k": "Multi30k",
         "newsgroups_no_headers": "20 Newsgroups, headers stripped"}
HEADERS = ["A(α\\*, ξ^uf)", "A(ξ^px, ξ^uf)", "A(g\\*, ξ^uf)", "A(α\\*, ξ^B)", "baseline", "ctx ξ^uf", "ctx ξ^B",
           "best"]
HEADERS_OF = dict(zip(TABLE2_VALUE_COLUMNS, HEADERS))
CTX_CONV = {"ctx_perf_xi_uniform": "ctx_perf_xi_uniform_conv", "ctx_perf_xi_standard": "ctx_perf_xi_standard_conv"}


def interval_cell(iv: pd.Series) -> str:
    """mean [PI], with n where a contextualized value is undefined in some replicates; to as many
    decimals as it takes to read the paper's value inside or outside (readable.decimals_against)."""
    if iv["n"] == 0:
        return "undefined"
    cell = interval(iv["mean"], iv["pi_low"], iv["pi_high"], mark_past=False, against=iv["paper"])
    return cell if iv["n"] == iv["n_replicates"] else f"{cell} (n = {iv['n']} of {iv['n_replicates']})"


def paper_cell(iv: pd.Series) -> str:
    if np.isnan(iv["paper"]):
        return "-"
    if paper_mark(iv["paper_in_pi"]):
        return f"{100 * iv['paper']:.2f} ({paper_mark(iv['paper_in_pi'])})"
    # an interval without the examples' error reads no paper value (replicates.column_interval)
    return f"{100 * iv['paper']:.2f} ({'no interval' if pd.isna(iv['pi_low']) else 'no verdict: examples unknown'})"


def rows_markdown(intervals: pd.DataFrame) -> list[str]:
    lines = ["| dataset | " + " | ".join(HEADERS) + " |", "|---" * (len(HEADERS) + 1) + "|"]
    for dataset, g in intervals.groupby("dataset", sort=False):
        by_col = g.set_index("column")
        n = int(by_col.loc["agr_alpha_xi_uniform", "n"])
        ours = [interval_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        lines.append(f"| {NAMES.get(dataset, dataset)}, ours (n = {n}) | " + " | ".join(ours) + " |")
        papers = [paper_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        if any(p != "-" for p in papers):
            lines.append(f"| {NAMES.get(dataset, dataset)}, paper | " + " | ".join(papers) + " |")
    return lines


# The paper's claims' one Holm family (which kept rows it holds): every page reads its verdicts
FAMILY = REPO / "docs/plans/families/paper_claims.yaml"


def family_claims(family: Path = FAMILY) -> tuple[pd.DataFrame, dict[str, set[Path]]]:
    """The claims over the family's rows, Holm over all of them, and each row's table folders
    (a dataset whose folders are these is in the family; any other reading of it is not)."""
    spec = yaml.safe_load(family.read_text())
    root = family.resolve().parents[3]
    folders = {r: table_folders(root / r) for r in spec["rows"]}
    flat = [f for fs in folders.values() for f in fs]
    reps = pool([pd.read_parquet(f / "table2_replicates.parquet") for f in flat])
    blind, _ = kept_settings(flat)
    members = {}
    for fs in folders.values():
        for d in pool([pd.read_parquet(f / "table2_replicates.parquet") for f in fs])["dataset"].unique():
            members[d] = {f.resolve() for f in fs}
    return claims_table(reps, blind=blind), members


def in_family(claims: pd.DataFrame, folders: list[Path], family: Path = FAMILY) -> pd.DataFrame:
    """``claims`` with each (row, claim)'s Holm p and verdict the family's, where the row's
    folders are the family's for its dataset; any other row gets none (``p_holm`` NaN, verdict
    "- (not in the family)"): one verdict per claim on every page."""
    fam, members = family_claims(family)
    mine = {f.resolve() for f in folders}
    keyed = fam.set_index(["dataset", "claim"])
    out = claims.copy()
    for i, r in out.iterrows():
        member = members.get(r["dataset"])
        if member is not None and member <= mine and (r["dataset"], r["claim"]) in keyed.index:
            out.loc[i, ["p_holm", "verdict_holm"]] = keyed.loc[(r["dataset"], r["claim"]), ["p_holm", "verdict_holm"]]
        else:
            out.loc[i, ["p_holm", "verdict_holm"]] = [float("nan"), "- (not in the family)"]
    return out


def family_sentence(family: Path = FAMILY) -> str:
    spec = yaml.safe_load(family.read_text())
    fam, _ = family_claims(family)
    rows = ", ".join(NAMES.get(d, d) for d in dict.fromkeys(fam["dataset"]))
    return (f"Holm's family: the paper's claims over {rows}, {int(fam['p_value'].notna().sum())} with a p value, fixed "
            f"in `{family.resolve().relative_to(family.resolve().parents[3])}` (alpha {spec['alpha']}); every page "
            "prints these verdicts, and a row outside the family its p alone.")


def claims_markdown(claims: pd.DataFrame) -> list[str]:
    """The claims table, led by the one Holm family its verdicts are read in (in_family)."""
    lines = [family_sentence(), "",
             "| dataset | claim | estimate [95% CI] | threshold | p | p, Holm in the family | verdict, in the family | "
             "the paper's sentence |", "|---" * 8 + "|"]
    quoted = set()
    for r in claims.itertuples():
        sentence = r.paper_sentence if r.claim not in quoted else f"(as above, {r.paper_sentence.rsplit('(', 1)[1]}"
        quoted.add(r.claim)
        scale = 1 if r.claim == "uniform_probe_comparable_to_standard" else 100
        fmt = lambda v: "-" if np.isnan(v) else f"{scale * v:+.1f}" if scale == 100 else f"{v:.2f}"  # noqa: E731
        p = "-" if np.isnan(r.p_value) else f"{r.p_value:.2g}"
        p_holm = "-" if np.isnan(r.p_holm) else f"{r.p_holm:.2g}"
        estimate = "undefined in every replicate" if r.n == 0 else f"{fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}]"
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.statistic} | {estimate} | {fmt(r.threshold)} | {p} | "
                     f"{p_holm} | {r.verdict_holm} | {sentence} |")
    return lines


ROLES = {"a": "A seed", "u": "U seed", "p": "proxy seed"}


def variance_markdown(reps: pd.DataFrame) -> list[str]:
    """A crossed or factorial grid's split (replicates.variance_table, recomputed here): per
    agreement column the roles it reads, each role's sd and the residual's in points, and each
    role's F test, alone and under Holm's correction over the table's tests (one family)."""
    table = variance_table(reps)
    if table.empty:
        return []
    tests = [(i, f) for i, r in table.iterrows() for f in "aup" if not np.isnan(r[f"p_{f}"])]
    adjusted = dict(zip(tests, holm([table.loc[i, f"p_{f}"] for i, f in tests])))
    lines = ["| dataset | column | reads | sd: A seed | sd: U seed | sd: proxy seed | sd: residual | "
             "F test p (Holm) |", "|---" * 8 + "|"]
    for i, r in table.iterrows():
        alone = len(r["reads"]) < 2  # one role read: no residual to estimate, nothing to test against
        sd = lambda f: "-" if np.isnan(r[f"var_{f}"]) or (f == "residual" and alone) else \
            f"{100 * np.sqrt(r[f'var_{f}']):.1f}"  # noqa: E731
        p = "; ".join(f"{ROLES[f]} {r[f'p_{f}']:.2g} ({adjusted[(i, f)]:.2g})" for f in "aup" if (i, f) in adjusted)
        header = HEADERS[TABLE2_VALUE_COLUMNS.index(r["column"])]
        reads = ", ".join(ROLES[f] for f in r["reads"]) or "none (constant)"
        lines.append(f"| {NAMES.get(r['dataset'], r['dataset'])} | {header} | {reads} | {sd('a')} | {sd('u')} | "
                     f"{sd('p')} | {sd('residual')} | {p or '-'} |")
    return lines


def kept(folder: Path, sub: str, name: str) -> list[Path]:
    """A kept row's ``sub`` folder holding ``name``, or its parts' (part*/``sub``)."""
    if (folder / sub / name).is_file():
        return [folder / sub]
    return sorted(p.parent for p in folder.glob(f"part*/{sub}/{name}"))


def table_folders(folder: Path) -> list[Path]:
    """The replicate-table folders of one argument: itself, a kept row's tables, or its parts'."""
    if (folder / "table2_replicates.parquet").is_file():
        return [folder]
    return kept(folder, "tables", "table2_replicates.parquet") or [folder]


def optimal_folders(folder: Path) -> list[Path]:
    """The kept analyses folders (the row's or its parts') holding appendix A.1's comparisons."""
    return kept(folder, "analyses", "optimal_attention.parquet")


def read_kept(folders: list[Path], name: str, what: str) -> pd.DataFrame:
    """The table ``name`` of every kept folder, concatenated; a run in more than one folder (a
    part kept twice, or parts that share a run) is refused, naming ``what`` run it is."""
    rows = pd.concat([pd.read_parquet(f / name).assign(folder=i) for i, f in enumerate(folders)], ignore_index=True)
    if (rows.groupby(["dataset", "run"])["folder"].nunique() > 1).any():
        raise ValueError(f"the same {what} run is in more than one of {', '.join(map(str, folders))}")
    return rows.drop(columns="folder")


def optimal_lines(folders: list[Path]) -> list[str]:
    """Appendix A.1's summary over every additive run of the folders (each run in one folder)."""
    rows = read_kept(folders, "optimal_attention.parquet", "additive")
    perf = pd.concat([pd.read_parquet(f / "optimal_performance.parquet") for f in folders], ignore_index=True)
    # under the page's own Table 2 heading: the summary's headings one level down (#### and below)
    lines = optimal_markdown(optimal_summary(rows, perf)).splitlines()
    return ["", *(f"###{line}" if line.startswith("#") else line for line in lines)]


def tanhmax_folders(folder: Path) -> list[Path]:
    """The kept analyses folders (the row's or its parts') holding a TanhMax comparison."""
    return kept(folder, "analyses", "tanhmax.parquet")


def standard_best(perf: pd.DataFrame) -> pd.DataFrame:
    """Each standard run's best performance by the task's own metric (dataset, run, value)."""
    own = primary(perf)
    return own[own["run"].str.startswith("standard-")].groupby(["dataset", "run"], as_index=False)["value"].max()


def tanhmax_table(tanhmax: pd.DataFrame, perf: pd.DataFrame, reps: pd.DataFrame) -> pd.DataFrame:
    """Each TanhMax run beside the softmax draws it is one more of: its best performance
    against the standard runs' (every standard run of the row, pooled over its parts), its
    agreement with xi^uf (positions ranked by |w|) against the replicates' A(alpha*, xi^uf).
    Rows: dataset, measure, run, value, the softmax draws' n, mean, 95% prediction interval
    and whether the TanhMax value lies inside it."""
    best = standard_best(perf)
    rows = []
    for (dataset, run), t in tanhmax[tanhmax["activation"] == "tanhmax"].groupby(["dataset", "run"], sort=False):
        metric = reps.loc[reps["dataset"] == dataset, "perf_metric"].iloc[0]
        softmax = {f"best {metric}": best.loc[best["dataset"] == dataset, "value"],
                   "A(|w|, xi^uf)": reps.loc[reps["dataset"] == dataset, "agr_alpha_xi_uniform"]}
        ours = {f"best {metric}": t.loc[t["metric"] == metric, "value"],
                "A(|w|, xi^uf)": t.loc[t["metric"] == "agreement_alpha_xi_uniform", "value"]}
        for measure, values in softmax.items():
            (value,) = ours[measure]
            iv = t_intervals(values)
            inside = bool(iv["pi_low"] <= value <= iv["pi_high"]) if iv["n"] > 1 else None
            rows.append({"dataset": dataset, "measure": measure, "run": run, "value": float(value),
                         **{k: iv[k] for k in ("n", "mean", "pi_low", "pi_high")}, "inside": inside})
    return pd.DataFrame(rows, columns=["dataset", "measure", "run", "value", "n", "mean", "pi_low", "pi_high",
                                       "inside"])


def tanhmax_lines(folders: list[Path], perf_folders: list[Path], reps: pd.DataFrame) -> list[str]:
    """The TanhMax table as Markdown, from every kept TanhMax comparison (each run in one folder)
    and the performance of every standard run in ``perf_folders``."""
    tanhmax = read_kept(folders, "tanhmax.parquet", "TanhMax")
    perf = pd.concat([pd.read_parquet(f / "performance.parquet") for f in perf_folders], ignore_index=True)
    table = tanhmax_table(tanhmax, perf, reps)
    lines = ["", "| dataset | TanhMax run | measure | TanhMax | softmax: mean [95% PI] (n) | inside |", "|---" * 6 + "|"]
    for r in table.itertuples():
        where = "-" if r.inside is None else ("inside" if r.inside else "**outside**")
        measure = r.measure.replace("|", "\\|")  # |w| inside a Markdown cell
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.run} | {measure} | {percent(r.value)} | "
                     f"{interval(r.mean, r.pi_low, r.pi_high, mark_past=False)} ({r.n}) | {where} |")
    return lines


def readings_folders(folder: Path) -> list[Path]:
    """Every kept folder under a row holding per-replicate readings (its parts', its blocks',
    a factorial grid's: the grid's diagonal trains the parts' own A and U runs)."""
    for tables in (folder, folder / "tables"):
        if (tables / "replicate_readings.parquet").is_file():
            return [tables]
    return sorted(p.parent for p in folder.glob("*/tables/replicate_readings.parquet"))


def attach_readings(reps: pd.DataFrame, readings: pd.DataFrame) -> pd.DataFrame:
    """The pooled replicates with the readings of their own A and U runs, wherever a kept folder
    read that pair, and only where it read the same A(alpha*, xi^uf) (the same runs, not a
    rerun of the same seeds that came out otherwise). ``has_readings`` marks them."""
    # best_perf is Table 2's own (A's best performance): the replicate's row keeps it
    cols = ["dataset", "a_run", "u_run", *[c for c in READING_COLUMNS if c not in
                                           ("dataset", "replicate", "a_run", "u_run", "independent", "best_perf")]]
    # a folder kept before a reading existed lacks its column: a later folder's reading of the
    # same runs is taken first
    readings = readings.reindex(columns=cols)
    readings = readings.iloc[np.argsort(readings["agr_without_boundary"].isna().to_numpy(), kind="stable")]
    readings = readings.drop_duplicates(["dataset", "a_run", "u_run"])
    out = reps.merge(readings, on=["dataset", "a_run", "u_run"], how="left", suffixes=("", "_read"))
    same = np.isclose(out[f"{CENTRAL}_read"], out[CENTRAL], rtol=0, atol=1e-9)
    out["has_readings"] = same
    out["independent"] = out["independent"].astype(bool) & same
    return out


def readings_markdown(reps: pd.DataFrame, readings: pd.DataFrame | None, figure: Path | None = None) -> list[str]:
    """Whether A(alpha*, xi^uf) is one mode or two over the pooled replicates; each replicate's
    readings (where a kept folder has them), and whether the column follows any of them (r
    with its interval, p alone and under Holm)."""
    lines = []
    modes = modes_frame(modes_table(reps)).assign(dataset=lambda f: f["dataset"].map(lambda d: NAMES.get(d, d)),
                                                   column=lambda f: f["column"].map(HEADERS_OF))
    if len(modes):
        lines += ["", "| dataset | column | n | likelihood ratio | p | normal samples |", "|---" * 6 + "|"]
        lines += ["| " + " | ".join(map(str, row)) + " |" for row in modes.itertuples(index=False)]
    if readings is None:
        return lines
    total = int(reps["independent"].astype(bool).sum())
    reps = attach_readings(reps, readings)
    read = reps[reps["independent"]]  # independent, with readings of their own runs
    if figure is not None:
        from attnlearn.reporting.readings_figure import readings_figure

        readings_figure(read, figure)
    lines += ["", f"Readings of {len(read)} of {total} independent replicates:", "",
             "| dataset | A run | U run | A(α\\*, ξ^uf) | A's best step | best | α\\* entropy | `<s>`/`</s>` first: α\\*, ξ^uf | "
             "A(α\\*, ξ^uf) where α\\* puts `<s>`/`</s>` first, a word first | A(α\\*, ξ^uf) without `<s>`/`</s>` | "
             "α\\* puts first | ξ^uf puts first |",
             "|---" * 12 + "|"]
    for r in read.itertuples():
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.a_run} | {r.u_run} | {percent(getattr(r, CENTRAL))} | "
                     f"{int(r.a_step)} | {percent(r.best_perf)} | {r.alpha_entropy:.3f} | "
                     f"{percent(r.alpha_boundary_share)}, {percent(r.xi_boundary_share)} | "
                     f"{percent(r.agr_boundary_rows)}, {percent(r.agr_word_rows)} | {percent(r.agr_without_boundary)} | "
                     f"`{r.alpha_words}` | `{r.xi_words}` |")
    for dataset, g in read.groupby("dataset", sort=False):
        lines += ["", boundary_sentence(NAMES.get(dataset, dataset), boundary_split(g))]
    tests = readings_tests(reps)
    lines += ["", "| dataset | reading | n | r [95% CI] | p | p, Holm |", "|---" * 6 + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in readings_tests_frame(tests)
              .assign(dataset=lambda f: f["dataset"].map(lambda d: NAMES.get(d, d))).itertuples(index=False)]
    return lines


def boundary_sentence(name: str, b: dict) -> str:
    """boundary_split in words: how often alpha* puts a boundary token first; the column on those
    rows against word rows (where both kinds occur); the column without the boundary tokens."""
    text = (f"Exploratory (a split chosen after these replicates were seen; no verdict): {name}, over the "
            f"{b['share_n']} replicates: α\\* puts a boundary token (`<s>`, `</s>`) first in "
            f"{interval(b['share'], b['share_low'], b['share_high'])} percent of rows (mean [95% CI])")
    if b["n"] >= 2:
        text += ("; A(α\\*, ξ^uf) on those rows minus on the rows where it puts a word first: "
                 f"{points(b['gap'], b['gap_low'], b['gap_high'])} points (paired t, p = {b['gap_p']:.2g}).")
    elif b["n"] == 1:  # one difference has no spread, so no interval and no test
        text += (", and only one replicate has both kinds of row, too few for an interval (there A(α\\*, ξ^uf) "
                 f"on those rows minus on the word rows is {100 * b['gap']:+.1f} points).")
    else:
        text += ", so no replicate has both kinds of row to set against each other."
    if b["without_n"]:
        text += (f" With `<s>` and `</s>` left out of both measures ({b['without_n']} replicates), A(α\\*, ξ^uf) is "
                 f"{interval(b['without'], b['without_low'], b['without_high'])}; the column minus it: "
                 f"{points(b['loss'], b['loss_low'], b['loss_high'])} points (paired t, p = {b['loss_p']:.2g}).")
    return text


def seed_pairs(folder: Path) -> pd.DataFrame:
    """Appendix A.9's "two seeds' attentions" per replicate that owns its B run (a part): A's
    attention at its best checkpoint against B's at B's best checkpoint (``at_best``), and its
    largest agreement over B's checkpoints (``max_over_b``); each with the random baseline."""
    rows = []
    for tables in table_folders(folder):
        reps = pd.read_parquet(tables / "table2_replicates.parquet")
        agr, perf = pd.read_parquet(tables / "agreement.parquet"), pd.read_parquet(tables / "performance.parquet")
        for rep in reps[~shared_b(reps)].itertuples():
            b = rep.b_runs[0]
            pair = select_rows(agr, a_measure="alpha", b_measure="alpha", a_run=rep.a_run, b_run=b).set_index("b_step")
            b_star = best_step(perf[perf["run"] == b])
            rows.append({"dataset": rep.dataset, "a_run": rep.a_run, "b_run": b, "b_step": b_star,
                         "at_best": float(pair.loc[b_star, "value"]), "max_over_b": float(pair["value"].max()),
                         "baseline": float(pair.loc[b_star, "baseline"])})
    return pd.DataFrame(rows)


def seed_pairs_markdown(pairs: pd.DataFrame) -> list[str]:
    """Each dataset's A.9 pairs with their mean [95% t interval], then the first dataset's
    difference of means from each other's above chance (at_best - baseline; Welch's t
    interval, p alone and under Holm over those comparisons)."""
    lines = ["| dataset | pairs (A / B) | A(α\\*, α^B\\*) per pair | mean [95% CI] | above chance: mean [95% CI] | "
             "max over B's checkpoints, per pair |", "|---" * 6 + "|"]
    above = {}
    for dataset, g in pairs.groupby("dataset", sort=False):
        above[dataset] = (g["at_best"] - g["baseline"]).to_numpy()
        at, over = t_intervals(g["at_best"]), t_intervals(above[dataset])
        lines.append(f"| {NAMES.get(dataset, dataset)} | " + ", ".join(f"{a}/{b}" for a, b in zip(g["a_run"], g["b_run"]))
                     + " | " + " / ".join(percent(v) for v in g["at_best"])
                     + f" | {interval(at['mean'], at['ci_low'], at['ci_high'], mark_past=False)}"
                     f" | {interval(over['mean'], over['ci_low'], over['ci_high'], mark_past=False)} | "
                     + " / ".join(percent(v) for v in g["max_over_b"]) + " |")
    first, *others = above  # A.9's claim: the first row's seeds agree less than the others'
    lines += ["", f"{NAMES.get(first, first)} against each other row, above chance (Welch's t; Holm over these "
                  "comparisons):", ""]
    return lines + welch_lines([(f"{NAMES.get(first, first)} - {NAMES.get(b, b)}", above[first], above[b])
                                for b in others])


def welch_tests(pairs: list[tuple[str, np.ndarray, np.ndarray]]) -> list:
    """Welch's t test of each (label, a, b), NaN dropped."""
    return [stats.ttest_ind(a[~np.isnan(a)], b[~np.isnan(b)], equal_var=False) for _, a, b in pairs]


def welch_lines(pairs: list[tuple[str, np.ndarray, np.ndarray]], adjusted=None) -> list[str]:
    """One line per (label, a, b): mean(a) - mean(b) in points with Welch's 95% t interval
    (independent samples, NaN dropped), its p alone and under Holm: over the lines (one family),
    or ``adjusted``, Holm's p computed over a larger family the caller names."""
    pairs = [(label, a[~np.isnan(a)], b[~np.isnan(b)]) for label, a, b in pairs]
    tests = welch_tests(pairs)
    adjusted = holm([t.pvalue for t in tests]) if adjusted is None else adjusted
    lines = []
    for (label, a, b), test, p_holm in zip(pairs, tests, adjusted):
        ci = test.confidence_interval()
        lines.append(f"- {label}: {points(a.mean() - b.mean(), ci.low, ci.high)}, "
                     f"p = {test.pvalue:.2g} (Holm {p_holm:.2g}; n = {len(a)} and {len(b)})")
    return lines


# --contrast: the agreements above chance (the rows' random baselines differ where their texts'
# lengths do; a baseline is the dataset's, not the seeds'), then the best performance as it is
CONTRASTED = {"agr_alpha_xi_uniform": True, "agr_xi_proxy_xi_uniform": True, "agr_grad_xi_uniform": True,
              "best_perf": False}
SEEDS = ["a_run", "u_run", "p_run"]  # a replicate's seeds, by its runs' names


def contrast_values(reps: pd.DataFrame, first: str, other: str, column: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """The column (above chance where CONTRASTED says) of ``first``'s and ``other``'s replicates,
    and whether they pair by seed: every replicate of each has a twin with the same A, U and
    proxy seeds in the other (then in the same order, twin by twin; a pair missing a value
    dropped); otherwise all of each, as independent samples."""
    def col(g):
        return (g[column] - g["random_baseline"] if CONTRASTED[column] else g[column]).to_numpy(dtype=float)
    a, b = reps[reps["dataset"] == first], reps[reps["dataset"] == other]
    keys = lambda g: [tuple(r) for r in g[SEEDS].itertuples(index=False)]  # noqa: E731
    if len(a) == len(b) and sorted(keys(a)) == sorted(keys(b)) and len(set(keys(a))) == len(a):
        b = b.set_index(SEEDS).loc[keys(a)].reset_index()
        x, y = col(a), col(b)
        ok = ~(np.isnan(x) | np.isnan(y))
        return x[ok], y[ok], True
    x, y = col(a), col(b)
    return x[~np.isnan(x)], y[~np.isnan(y)], False


def contrast_markdown(reps: pd.DataFrame) -> list[str]:
    """The first dataset's replicates against each other dataset's, column by column
    (CONTRASTED): the difference of means with its 95% interval and p, paired by seed where the
    replicates pair (contrast_values: the paired t test) and otherwise Welch's, then the same
    columns' seed spreads (spread_lines). Exploratory: each p alone, no Holm and no verdict (a
    contrast's tests are confirmatory only where a plan named them before its replicates
    trained, docs/methods.md 5.5)."""
    first, *others = reps["dataset"].unique()
    if not others:
        raise ValueError("--contrast sets one dataset's replicates against another's: give folders of two or more")
    name = lambda d: NAMES.get(d, d)  # noqa: E731
    compared = [(c, other, *contrast_values(reps, first, other, c)) for other in others for c in CONTRASTED]
    paired = all(p for *_, p in compared)
    how = ("paired by seed (every replicate has its twin on the same A, U and proxy seeds): the paired t interval"
           if paired else "Welch's 95% t interval (independent samples)")
    lines = [f"{name(first)} against {', '.join(map(name, others))}, per column (difference of means in points, "
             f"{how}). Exploratory: each p alone, no Holm and no verdict. Random baselines: "
             + "; ".join(f"{name(d)} {percent(reps.loc[reps['dataset'] == d, 'random_baseline'].mean())}"
                         for d in (first, *others)) + ".", ""]
    for c, other, a, b, pair in compared:
        test = stats.ttest_rel(a, b) if pair else stats.ttest_ind(a, b, equal_var=False)
        ci = test.confidence_interval()
        lines.append(f"- {HEADERS_OF[c]}{' above chance' if CONTRASTED[c] else ''}, {name(first)} - {name(other)}: "
                     f"{points(a.mean() - b.mean(), ci.low, ci.high)}, p = {test.pvalue:.2g} "
                     f"({'n = ' + str(len(a)) + ' pairs' if pair else f'n = {len(a)} and {len(b)}'})")
    spreads = [(f"{HEADERS_OF[c]}, {name(first)} / {name(other)}", a, b, pair) for c, other, a, b, pair in compared]
    return lines + ["", *spread_lines(spreads)]


def spread_test(a: np.ndarray, b: np.ndarray, pair: bool) -> float:
    """p of equal spreads: Pitman and Morgan's test for paired values (their variances are equal
    exactly where a + b and a - b do not correlate), Brown-Forsythe's (Levene's about the
    medians) for independent samples."""
    return stats.pearsonr(a + b, a - b).pvalue if pair else stats.levene(a, b, center="median").pvalue


def spread_lines(pairs: list[tuple[str, np.ndarray, np.ndarray, bool]]) -> list[str]:
    """One table row per (label, a, b, paired), the seed spreads: each sample's sd, their ratio
    and its test of equal spreads (spread_test), p alone."""
    lines = ["The seed spread of the same columns (sd over the replicates, in points; equal spreads tested by "
             "Pitman and Morgan's test where the replicates pair, Brown-Forsythe's where they do not; "
             "exploratory: p alone):", "",
             "| column, rows | sd, first row | sd, second row | sd ratio | p (equal spreads) |", "|---" * 5 + "|"]
    for label, a, b, pair in pairs:
        sd_a, sd_b = np.std(a, ddof=1), np.std(b, ddof=1)
        lines.append(f"| {label} | {100 * sd_a:.1f} | {100 * sd_b:.1f} | {sd_a / sd_b:.2f} | "
                     f"{spread_test(a, b, pair):.2g} |")
    return lines


# Training texts in our copy where a row's training split holds fewer than probe.max_examples
# (../shared/data/README.md: 20 Newsgroups' baseball and hockey, 597 + 600): the training-split
# probes read all of them
TRAIN_TEXTS = {"newsgroups": 1197, "newsgroups_no_headers": 1197}


def kept_settings(folders: list[Path]) -> tuple[dict[str, float], dict[str, int]]:
    """What the intervals and claims read beside the replicates, from the kept folders: each
    dataset's input-blind performance on its probed examples (learning.parquet) and how many
    validation examples its probes read (probed_examples)."""
    blind = {}
    for folder in folders:
        if (folder / "learning.parquet").is_file():
            learning = pd.read_parquet(folder / "learning.parquet")
            blind.update(learning.groupby("dataset")["trivial_perf"].first().to_dict())
    return blind, probed_examples(folders)


def probe_cap(folder: Path) -> tuple[str | None, int | None]:
    """(dataset, probe.max_examples) of the kept row's run.json above ``folder``; (None, None)."""
    run = folder.parent / "run.json"
    if not run.is_file():
        return None, None
    info = json.loads(run.read_text())
    cap = ((info.get("config") or {}).get("probe") or {}).get("max_examples")
    return info["dataset"], int(cap) if cap else None


def probed_examples(folders: list[Path], split: str = "valid") -> dict[str, int]:
    """How many examples each dataset's probes read, the count the examples' error is read over:
    on validation, a classification row's probe rows (agreement.parquet's n_rows, one per text),
    a translation row's sentence pairs (its probe.max_examples, at most the paper's split); on the
    training split, probe.max_examples, at most the training texts we hold (TRAIN_TEXTS). A
    dataset whose count cannot be read is left out (its intervals then give no verdict)."""
    out = {}
    for folder in folders:
        dataset, cap = probe_cap(folder)
        reps = pd.read_parquet(folder / "table2_replicates.parquet")
        tasks = reps.groupby("dataset")["task"].first().to_dict() if "task" in reps else {}
        if split == "train":
            if dataset and cap:
                out[dataset] = min(cap, TRAIN_TEXTS.get(dataset, cap))
            continue
        agr = folder / "agreement.parquet"
        rows_ = pd.read_parquet(agr, columns=["dataset", "n_rows"]) if agr.is_file() else pd.DataFrame()
        for d, task in tasks.items():
            if task == "classification" and (rows_["dataset"] == d).any():
                out[d] = int(rows_.loc[rows_["dataset"] == d, "n_rows"].max())
            elif d == dataset and cap:
                out[d] = min(cap, PAPER_EXAMPLES.get(d, cap))
    return out


def pool(frames: list[pd.DataFrame], grid: bool = False) -> pd.DataFrame:
    """One replicate table from several folders. A dataset may come from several folders only
    as parts sharing no run (paper_row.py --part parts and --parts blocks; replicates
    renumbered 1, 2, ...). A block's replicates read each other's A runs as B, so its values of
    the columns that read B (replicates.B_COLUMNS) are left out (NaN): those columns pool the
    replicates that own their B runs, and their ``n`` says how many. ``grid``: a crossed or
    factorial grid read for its variance split, every value kept (B is tied to A there)."""
    frames = [f.assign(folder=i) for i, f in enumerate(frames)]
    if not grid:
        frames = [f.assign(**{c: f[c].where(~shared_b(f)) for c in B_COLUMNS if c in f}) for f in frames]
    reps = pd.concat(frames, ignore_index=True)
    out = []
    for dataset, g in reps.groupby("dataset", sort=False):
        runs = [{run for r in f.itertuples() for run in (r.a_run, r.u_run, r.p_run, *r.b_runs)}
                for _, f in g.groupby("folder")]
        shared = sorted({run for i, mine in enumerate(runs) for run in mine if any(run in o for o in runs[i + 1:])})
        if shared:
            raise ValueError(f"{dataset}: the folders share runs {shared}: a dataset's replicates may come "
                             "from several folders only as paper_row.py --part parts or --parts blocks")
        out.append(g.drop(columns="folder").assign(replicate=range(1, len(g) + 1)))
    return pd.concat(out, ignore_index=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path, help="folders holding table2_replicates.parquet")
    ap.add_argument("--variance", action="store_true", help="the folders hold a crossed or factorial grid "
                    "(paper_row.py --factorial): print how each column's spread splits over the roles")
    ap.add_argument("--readings", action="store_true", help="also print what each replicate's A(alpha*, xi^uf) "
                    "reads (the kept folders' replicate_readings, a grid's included), whether the column follows "
                    "a reading, and whether it is one mode or two")
    ap.add_argument("--readings-figure", type=Path, help="with --readings: also draw A(alpha*, xi^uf) against each "
                    "reading, a dot per replicate, into this PNG")
    ap.add_argument("--seed-pairs", action="store_true", help="print appendix A.9's two seeds' attentions instead: "
                    "each part's A against its own B, both at their best checkpoints, per dataset, and the first "
                    "folder's dataset against each other's")
    ap.add_argument("--contrast", action="store_true", help="print the first folder's dataset against each other "
                    "dataset instead (e.g. newsgroups against newsgroups_no_headers): per column the difference of "
                    "the replicates' means, Welch's interval, Holm over the comparisons")
    ap.add_argument("--figure", type=Path, help="also draw the rows as distributions (every replicate's value "
                    "per column, the interval, the paper's value) into this PNG")
    args = ap.parse_args(argv)
    folders = [f for t in args.tables for f in table_folders(t)]
    missing = [t for t in folders if not (t / "table2_replicates.parquet").is_file()]
    if missing:
        print(f"no table2_replicates.parquet in {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    optimal = [f for t in args.tables for f in optimal_folders(t)]
    tanhmax = [f for t in args.tables for f in tanhmax_folders(t)]
    try:
        reps = pool([pd.read_parquet(t / "table2_replicates.parquet") for t in folders], grid=args.variance)
        appendix = optimal_lines(optimal) if optimal else []
        appendix += tanhmax_lines(tanhmax, folders, reps) if tanhmax else []
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if args.seed_pairs:
        print("\n".join(seed_pairs_markdown(pd.concat([seed_pairs(t) for t in args.tables], ignore_index=True))))
        return 0
    if args.contrast:
        try:
            print("\n".join(contrast_markdown(reps)))
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    if args.variance:
        lines = variance_markdown(reps)
        print("\n".join(lines) if lines else "no crossed or factorial grid in these replicates")
        return 0 if lines else 2
    blind, probed = kept_settings(folders)
    intervals = interval_table(reps, probed)
    claims = in_family(claims_table(reps, blind=blind), folders)
    lines = rows_markdown(intervals) + [""] + claims_markdown(claims) + appendix
    if args.readings:
        read = [f for t in args.tables for f in readings_folders(t)]
        readings = pd.concat([pd.read_parquet(f / "replicate_readings.parquet") for f in read]) if read else None
        lines += readings_markdown(reps, readings, args.readings_figure)
    if args.figure:
        from attnlearn.reporting.replicates_figure import replicates_figure

        replicates_figure(reps, intervals, args.figure)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
