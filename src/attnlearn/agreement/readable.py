"""tables.md for a reader: what was found first, one unit (percent), the paper's notation, one
mark for undefined values, and a word where a table is empty or an interval runs past 0 or 100."""

from __future__ import annotations

import numpy as np
import pandas as pd

UNDEFINED = "-"
PAST = "†"  # a t interval's bound past 0 or 100: a bound of the interval, not a possible value
SHARED = "‡"  # read over replicates that share their B runs: the interval is too narrow

# every column a reader meets in tables.md, in the paper's notation (docs/methods.md 5)
LEGEND = {
    "agr_alpha_xi_uniform": "A(α*, ξ^uf): run A's attention at its best checkpoint against the uniform run's "
                            "lexical probe (maximum over U's checkpoints)",
    "agr_xi_proxy_xi_uniform": "A(ξ^px, ξ^uf): the bag-of-words proxy's probe against the uniform run's",
    "agr_grad_xi_uniform": "A(g*, ξ^uf): run A's gradient saliency against the uniform run's probe",
    "agr_alpha_xi_standard": "A(α*, ξ^B): run A's attention against another standard run's probe",
    "random_baseline": "the agreement of a uniformly random position",
    "ctx_perf_xi_uniform": "contextualized A(α*, ξ^uf): the comparison runs' performance at the first checkpoint "
                           "whose attention agrees with α* as much (- where none does)",
    "ctx_perf_xi_standard": "contextualized A(α*, ξ^B), as above",
    "best_perf": "run A's performance at α*'s checkpoint",
    "ctx_perf_xi_uniform_conv": "contextualized A(α*, ξ^uf) under the paper's convention (where none reaches it: "
                                "the comparison runs' best performance, the paper's asterisk)",
    "ctx_perf_xi_standard_conv": "contextualized A(α*, ξ^B) under the paper's convention",
    "ctx_perf_xi_proxy_xi_uniform": "contextualized A(ξ^px, ξ^uf) (appendix)",
    "ctx_perf_grad_xi_uniform": "contextualized A(g*, ξ^uf) (appendix)",
    "agr_alpha_frozen_alpha_star": "A(α^frozen, α*): the frozen run's attention against α* (Table 10)",
    "agr_xi_uniform_alpha_star": "A(ξ^uf, α*) (Table 10)",
    "agr_xi_logreg_xi_uniform": "A(ξ^lr, ξ^uf): a logistic regression's word coefficients against the uniform "
                                "run's probe (Table 11)",
}


def percent(v, mark_past: bool = False, decimals: int = 1) -> str:
    """A fraction as percent with ``decimals`` decimals (one by default); undefined as
    ``UNDEFINED``; with ``mark_past``, a value past 0 or 100 marked ``PAST``."""
    if v is None or pd.isna(v):
        return UNDEFINED
    text = f"{100 * v:.{decimals}f}"
    return text + PAST if mark_past and not 0 <= v <= 1 else text


PAPER_DECIMALS = 2  # the paper's appendix prints percents at two decimals
MOST_DECIMALS = 4


def decimals_against(low, high, paper, least: int = 1) -> int:
    """The fewest decimals (of a percent, ``least`` or more) at which [low, high] as printed
    reads the paper's value (a fraction, printed at its two decimals) inside or outside as the
    bounds themselves do. An interval of zero width at the paper's two decimals (a deterministic
    column: the random baseline depends only on the texts' lengths) is printed at two at least, and
    to as many as it takes to tell it from the paper's value: "6.196 [6.196, 6.196]" against
    6.20, never "6.2 [6.2, 6.2]", which a reader reads as inside. Without a paper value or an
    interval: ``least``."""
    if any(v is None or pd.isna(v) for v in (low, high, paper)):
        return least
    if f"{100 * low:.{PAPER_DECIMALS}f}" == f"{100 * high:.{PAPER_DECIMALS}f}":  # zero width, at the paper's precision
        least = max(least, PAPER_DECIMALS)
    inside = low <= paper <= high
    shown = float(f"{100 * paper:.{PAPER_DECIMALS}f}")
    for d in range(least, MOST_DECIMALS + 1):
        lo, hi = float(f"{100 * low:.{d}f}"), float(f"{100 * high:.{d}f}")
        if (lo <= shown <= hi) == inside:
            return d
    return MOST_DECIMALS


def interval(mean, low, high, mark_past: bool = True, against=None) -> str:
    """mean [low, high] in percent, bounds past 0 or 100 marked (a value that cannot leave
    [0, 100]; not a difference or a ratio). ``against``: the paper's value (a fraction) the
    interval is read against; the numbers then take as many decimals as it takes for the
    printed bounds to read it inside or outside as the bounds do (``decimals_against``)."""
    d = decimals_against(low, high, against)
    return f"{percent(mean, decimals=d)} [{percent(low, mark_past, d)}, {percent(high, mark_past, d)}]"


def points(mean, low, high) -> str:
    """A difference of fractions in signed percentage points: +mean [+low, +high]."""
    return f"{100 * mean:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def signed(kind: str, null_value=None) -> bool:
    """Whether a plan test's estimate is a signed quantity, printed in points without bounds
    (a difference, or a mean tested against 0 such as a per-seed slope) rather than a share in
    percent whose bounds past 0 or 100 are marked."""
    return kind == "paired_difference" or (kind == "mean" and null_value == 0)


def cell(v) -> str:
    if v is None or v is pd.NA:
        return UNDEFINED
    return percent(v) if isinstance(v, float) else str(v)


def to_markdown(df: pd.DataFrame, empty: str = "no rows") -> str:
    """A GitHub Markdown table, fractions as percent with one decimal, undefined values as
    ``UNDEFINED``; an empty table is a sentence saying why (``empty``)."""
    if df.empty:
        return f"No rows: {empty}.\n"
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def legend(columns) -> str:
    """The legend of the columns among ``columns`` that it knows, in their order."""
    known = [c for c in dict.fromkeys(columns) if c in LEGEND]
    return "\n".join(f"- `{c}`: {LEGEND[c]}" for c in known) + "\n"


# Table 2's columns as a sentence names them (findings)
SHORT = {"agr_alpha_xi_uniform": "A(α*, ξ^uf)", "agr_xi_proxy_xi_uniform": "A(ξ^px, ξ^uf)",
         "agr_grad_xi_uniform": "A(g*, ξ^uf)", "agr_alpha_xi_standard": "A(α*, ξ^B)",
         "random_baseline": "the random baseline", "ctx_perf_xi_uniform": "contextualized A(α*, ξ^uf)",
         "ctx_perf_xi_standard": "contextualized A(α*, ξ^B)", "best_perf": "the best performance"}


def _claim_line(r) -> str:
    """One claim in words: its statistic's mean [95% CI] against its threshold, the verdict
    alone and under Holm, the p value before Holm's correction."""
    shared = f" {SHARED}" if getattr(r, "b_shared", False) else ""  # a claims table kept before b_shared
    if r.n < 2:
        value = "undefined" if pd.isna(r.estimate) else f"{percent(r.estimate)} (one draw, no interval)"
        return f"  - {r.statistic}{shared}: {value}, threshold {percent(r.threshold)}: undetermined."
    return (f"  - {r.statistic}{shared}: {interval(r.estimate, r.ci_low, r.ci_high, mark_past=False)}, threshold "
            f"{percent(r.threshold)}: {r.verdict} alone, {r.verdict_holm} under Holm (p = {_p(r.p_value)} before "
            "the correction).")


def _paper_words(iv: pd.DataFrame) -> str:
    """Table 2's columns against the paper's values, in words with their numbers: which lie
    inside our 95% prediction interval, which outside, which have none."""
    rows = iv[iv["column"].isin(list(SHORT)) & iv["paper"].notna()]
    if rows.empty:
        return "  - The paper reports no Table 2 row for this dataset."
    groups = {"outside our interval": [], "inside": [], "without an interval": []}
    for r in rows.itertuples():
        paper = f"against the paper's {100 * r.paper:.2f}"
        n = f" (n = {r.n} of {r.n_replicates})" if r.n < r.n_replicates else ""
        shared = f" {SHARED}" if getattr(r, "b_shared", False) else ""
        if r.n == 0:
            groups["without an interval"].append(f"{SHORT[r.column]} undefined in every replicate, {paper}")
        elif pd.isna(r.pi_low):
            groups["without an interval"].append(f"{SHORT[r.column]} {percent(r.mean)}{n}{shared} {paper}")
        else:
            shown = interval(r.mean, r.pi_low, r.pi_high, against=r.paper)
            groups["outside our interval" if paper_mark(r.paper_in_pi) == "**outside**" else "inside"].append(
                f"{SHORT[r.column]} {shown}{n}{shared} {paper}")
    said = "; ".join(f"{where}: {', '.join(texts)}" for where, texts in groups.items() if texts)
    return (f"  - Table 2 against the paper (ours: mean [95% prediction interval of one more replicate], "
            f"{len(rows)} columns with a paper value): {said}.")


NOT_LEARNED = "(rests on runs that did not learn)"


def findings(claims: pd.DataFrame, intervals: pd.DataFrame | None = None,
             not_learned: dict[str, str] | None = None) -> str:
    """What was found, in words with the numbers: per dataset each claim's statistic, its 95%
    interval and its verdicts alone and under Holm, then (``intervals``: table2_intervals)
    Table 2's columns against the paper's values; with n, and what too few replicates mean.
    ``not_learned``: dataset -> the runs its replicates read that did not beat an input-blind
    predictor (learned.resting_on), said first in its block and beside each verdict."""
    if claims.empty:
        return "No claim was tested: no dataset has Table 2's runs.\n"
    lines = []
    for dataset, rows in claims.groupby("dataset", sort=False):
        n = int(rows["n"].max())
        if n < 2:
            lines.append(f"- **{dataset}** (n = {n} replicate{'s' if n != 1 else ''}): one draw has no interval, so "
                         "every claim is undetermined. Replicates come from more standard, uniform and proxy seeds "
                         "(`runs.standard`, `runs.uniform`, `proxy.seeds`; docs/methods.md 5.1).")
        else:
            lines.append(f"- **{dataset}** (n = {n} replicates). The paper's claims, each statistic's mean over the "
                         "replicates with its 95% t interval against its threshold (percent), the verdict alone and "
                         "read as one family (Holm over this table's claims):")
        marked = dataset in (not_learned or {})
        if marked:
            lines.append(f"  - **Runs that did not learn**, read by these replicates: {not_learned[dataset]}. Their "
                         f"agreements are noise, and so is every verdict below marked {NOT_LEARNED}.")
        lines += [_marked(_claim_line(r), marked) for r in rows.itertuples()]
        if rows.get("b_shared", pd.Series(False, index=rows.index)).astype(bool).any():
            lines.append(f"  - {SHARED}: read over replicates that share their B runs, so the interval is too narrow "
                         "and the verdict rests on it.")
        if intervals is not None:
            words = _paper_words(intervals[intervals["dataset"] == dataset])
            lines.append(_marked(words, marked and "against the paper's" in words))  # not "reports no row"
    return "\n".join(lines) + "\n"


def _marked(line: str, marked: bool) -> str:
    """A verdict's line, ending with NOT_LEARNED where it rests on runs that did not learn."""
    return f"{line.removesuffix('.')} {NOT_LEARNED}." if marked else line


def _p(p) -> str:
    return UNDEFINED if pd.isna(p) else f"{p:.2g}"


def _n(counts, b_shared) -> list[str]:
    """The counts, each marked ``SHARED`` where its replicates share their B runs."""
    return [f"{n} {SHARED}" if shared else n for n, shared in zip(counts, b_shared)]


def claims_frame(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims for tables.md, in percent (the ratio claim as a percent of A(α*, ξ^B)'s
    above-chance agreement), with the p value and both verdicts."""
    return pd.DataFrame({
        "dataset": claims["dataset"], "claim": claims["claim"], "statistic": claims["statistic"],
        "n": _n(claims["n"].astype(str), claims["b_shared"]),
        "estimate [95% CI]": [interval(m, lo, hi, mark_past=False)  # differences and ratios: any sign
                              for m, lo, hi in zip(claims["estimate"], claims["ci_low"], claims["ci_high"])],
        "threshold": claims["threshold"].map(percent),
        "verdict alone": claims["verdict"],
        "p": claims["p_value"].map(_p),
        "verdict, Holm over the table": claims["verdict_holm"]})


def paper_mark(inside) -> str:
    """Where the paper's value lies against our interval: "inside", "**outside**", or "" (no
    paper value or no interval). ``inside`` may be a bool, numpy's bool (a row read out of a
    bool column) or None/NaN."""
    return "" if inside is None or pd.isna(inside) else ("inside" if inside else "**outside**")


def intervals_frame(intervals: pd.DataFrame) -> pd.DataFrame:
    """Table 2 over replicates for tables.md: mean [95% PI] with the examples' error, the
    seeds-only interval, both spreads and the paper's value at its two decimals."""
    return pd.DataFrame({
        "dataset": intervals["dataset"], "column": intervals["column"],
        "n": _n([f"{n}/{m}" for n, m in zip(intervals["n"], intervals["n_replicates"])], intervals["b_shared"]),
        "mean [95% PI]": [interval(m, lo, hi, against=paper) for m, lo, hi, paper in
                          zip(intervals["mean"], intervals["pi_low"], intervals["pi_high"], intervals["paper"])],
        "95% PI, seeds only": [interval(m, lo, hi, against=paper).split(" ", 1)[1] for m, lo, hi, paper in
                               zip(intervals["mean"], intervals["pi_low_seed"], intervals["pi_high_seed"],
                                   intervals["paper"])],
        "sd seeds": intervals["sd"].map(percent), "sd examples": intervals["boot_sd"].map(percent),
        "paper": intervals["paper"].map(lambda v: UNDEFINED if np.isnan(v) else f"{100 * v:.2f}"),
        "paper in PI": intervals["paper_in_pi"].map(paper_mark)})


def _r(v) -> str:
    return UNDEFINED if pd.isna(v) else f"{v:+.2f}"


def readings_tests_frame(tests: pd.DataFrame) -> pd.DataFrame:
    """The correlations for tables.md: r [95% interval] as a correlation (not a percent), p
    alone and under Holm over the dataset's readings."""
    return pd.DataFrame({
        "dataset": tests["dataset"], "reading": tests["label"], "n": tests["n"].astype(str),
        # r is undefined where a reading takes one value in every replicate (nothing to follow)
        "r [95% CI]": [f"{_r(r)} [{_r(lo)}, {_r(hi)}]" if pd.notna(r) else "none: the same in every replicate"
                       for r, lo, hi in zip(tests["r"], tests["r_low"], tests["r_high"])],
        "p": tests["p_value"].map(_p), "p, Holm": tests["p_holm"].map(_p)})


def modes_frame(modes: pd.DataFrame) -> pd.DataFrame:
    """One mode or two, for tables.md: the likelihood ratio and its bootstrap p."""
    return pd.DataFrame({"dataset": modes["dataset"], "column": modes["column"], "n": modes["n"].astype(str),
                         "likelihood ratio": modes["lr"].map(lambda v: UNDEFINED if pd.isna(v) else f"{v:.2f}"),
                         "p": modes["p_value"].map(_p), "normal samples": modes["resamples"].astype(str)})


def document(sections: dict[str, pd.DataFrame], claims: pd.DataFrame, datasets: list[str],
             empty: dict[str, str] | None = None, intervals: pd.DataFrame | None = None,
             not_learned: dict[str, str] | None = None) -> str:
    """tables.md, in the same order for any config: the findings in words with their numbers
    (``findings``; ``intervals``: table2_intervals, Table 2 against the paper; ``not_learned``:
    the runs that did not learn beside the verdicts that rest on them), the legend, then every
    section (title -> table)."""
    columns = [c for df in sections.values() for c in df.columns]
    columns += [c for df in sections.values() if "column" in df.columns for c in df["column"]]
    head = [
        "# Tables (percent)",
        "",
        f"Datasets: {', '.join(datasets)}. Every value is in percent; `-` is undefined; {PAST} marks a bound that "
        f"the t interval pushes past 0 or 100 (a bound, not a possible value); {SHARED} marks an n whose "
        "replicates share their B runs (one's A is another's B: the rotate design), so the column or claim that "
        "reads B has an interval too narrow by an amount the design cannot measure (docs/methods.md 5.1; "
        "paper_rows/paper_row.py --part gives each replicate B runs of its own). Another config's run in this "
        "directory rewrites these tables.",
        "",
        "## What was found",
        "",
        findings(claims, intervals, not_learned),
        "## Columns",
        "",
        legend(columns),
    ]
    empty = empty or {}
    body = [f"## {title}\n\n{to_markdown(df, empty.get(title, 'no rows'))}" for title, df in sections.items()]
    return "\n".join(head) + "\n" + "\n".join(body)
