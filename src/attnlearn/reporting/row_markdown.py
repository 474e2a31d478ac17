"""The seeded rows of docs/reproduction.md as Markdown: Table 2's columns as mean [95% prediction
interval] beside the paper's value, a grid's variance split, the TanhMax runs, appendix A.1's
summary, the claims in their one Holm family, what each replicate's A(alpha*, xi^uf) reads, and
the ledger of every row started. Each function formats what attnlearn.rows read, pooled and
tested; nothing here reads a file, so a page's wording changes here without touching how its
numbers are found."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.agreement.optimal_attention import markdown as optimal_markdown
from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
from attnlearn.agreement.readable import interval, modes_frame, paper_mark, percent, points, readings_tests_frame
from attnlearn.agreement.readings import CENTRAL

# The datasets as the pages name them
NAMES = {"sst": "SST", "sms_spam": "SMS spam", "newsgroups": "20 Newsgroups", "multi30k": "Multi30k",
         "newsgroups_no_headers": "20 Newsgroups, headers stripped", "multi30k_epochs20": "Multi30k at 20 epochs"}
# Table 2's columns as the pages head them
HEADERS = ["A(α\\*, ξ^uf)", "A(ξ^px, ξ^uf)", "A(g\\*, ξ^uf)", "A(α\\*, ξ^B)", "baseline", "ctx ξ^uf", "ctx ξ^B",
           "best"]
HEADERS_OF = dict(zip(TABLE2_VALUE_COLUMNS, HEADERS))
# a grid's seed roles, by the letter variance_table gives each
ROLES = {"a": "A seed", "u": "U seed", "p": "proxy seed"}


def dataset_name(dataset: str) -> str:
    """The dataset as the pages name it, or its own name where NAMES has none."""
    return NAMES.get(dataset, dataset)


def interval_cell(iv: pd.Series) -> str:
    """mean [PI], with n where a contextualized value is undefined in some replicates; to as many
    decimals as it takes to read the paper's value inside or outside (readable.decimals_against)."""
    if iv["n"] == 0:
        return "undefined"
    # one replicate: its value, no interval ("[-, -]" read as a broken cell)
    cell = (percent(iv["mean"]) if iv["n"] == 1 else
            interval(iv["mean"], iv["pi_low"], iv["pi_high"], mark_past=False, against=iv["paper"]))
    return cell if iv["n"] == iv["n_replicates"] else f"{cell} (n = {iv['n']} of {iv['n_replicates']})"


def paper_cell(iv: pd.Series) -> str:
    if np.isnan(iv["paper"]):
        return "-"
    if paper_mark(iv["paper_in_pi"]):
        return f"{100 * iv['paper']:.2f} ({paper_mark(iv['paper_in_pi'])})"
    # an interval without the examples' error reads no paper value (replicates.column_interval)
    return f"{100 * iv['paper']:.2f} ({'no interval' if pd.isna(iv['pi_low']) else 'no verdict: examples unknown'})"


def rows_markdown(intervals: pd.DataFrame) -> list[str]:
    """Table 2 (replicates.interval_table): per dataset a row of ours and, where the paper has
    the dataset, a row of the paper's values, each inside or outside ours."""
    lines = ["| dataset | " + " | ".join(HEADERS) + " |", "|---" * (len(HEADERS) + 1) + "|"]
    for dataset, g in intervals.groupby("dataset", sort=False):
        by_col = g.set_index("column")
        n = int(by_col.loc["agr_alpha_xi_uniform", "n"])
        ours = [interval_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        lines.append(f"| {dataset_name(dataset)}, ours (n = {n}) | " + " | ".join(ours) + " |")
        papers = [paper_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        if any(p != "-" for p in papers):
            lines.append(f"| {dataset_name(dataset)}, paper | " + " | ".join(papers) + " |")
    return lines


def variance_markdown(table: pd.DataFrame, adjusted: dict[tuple, float]) -> list[str]:
    """A crossed or factorial grid's split (replicates.variance_table): per agreement column the
    roles it reads, each role's sd and the residual's in points, and each role's F test, alone
    and under Holm (``adjusted``: Holm's p keyed by (the table's row, the role's letter))."""
    lines = ["| dataset | column | reads | sd: A seed | sd: U seed | sd: proxy seed | sd: residual | "
             "F test p (Holm) |", "|---" * 8 + "|"]
    for i, r in table.iterrows():
        alone = len(r["reads"]) < 2  # one role read: no residual to estimate, nothing to test against
        sd = lambda f: "-" if np.isnan(r[f"var_{f}"]) or (f == "residual" and alone) else \
            f"{100 * np.sqrt(r[f'var_{f}']):.1f}"  # noqa: E731
        p = "; ".join(f"{ROLES[f]} {r[f'p_{f}']:.2g} ({adjusted[(i, f)]:.2g})" for f in "aup" if (i, f) in adjusted)
        reads = ", ".join(ROLES[f] for f in r["reads"]) or "none (constant)"
        lines.append(f"| {dataset_name(r['dataset'])} | {HEADERS_OF[r['column']]} | {reads} | {sd('a')} | {sd('u')} | "
                     f"{sd('p')} | {sd('residual')} | {p or '-'} |")
    return lines


def optimal_section(summary: pd.DataFrame) -> list[str]:
    """Appendix A.1's summary (optimal_attention.summary) under the page's own Table 2 heading:
    its headings one level down (#### and below)."""
    lines = optimal_markdown(summary).splitlines()
    return ["", *(f"###{line}" if line.startswith("#") else line for line in lines)]


def tanhmax_markdown(table: pd.DataFrame) -> list[str]:
    """The TanhMax table (reproduction_rows.tanhmax_table): each TanhMax value beside the softmax
    draws' mean [95% PI] (n), inside or outside it, or '-' where no verdict is read."""
    lines = ["", "| dataset | TanhMax run | measure | TanhMax | softmax: mean [95% PI, seeds and examples] (n) | "
             "inside |", "|---" * 6 + "|"]
    for r in table.itertuples():
        where = "-" if r.inside is None else ("inside" if r.inside else "**outside**")
        measure = r.measure.replace("|", "\\|")  # |w| inside a Markdown cell
        lines.append(f"| {dataset_name(r.dataset)} | {r.run} | {measure} | {percent(r.value)} | "
                     f"{interval(r.mean, r.pi_low, r.pi_high, mark_past=False)} ({r.n}) | {where} |")
    return lines


def holm_family_sentence(datasets: list[str], tested: int, where: str, alpha) -> str:
    """The lead of every claims table: the one Holm family its verdicts are read in, over
    ``datasets``, ``tested`` claims with a p value, fixed in the file ``where`` at ``alpha``."""
    return (f"Holm's family: the paper's claims over {', '.join(map(dataset_name, datasets))}, {tested} with a p "
            f"value, fixed in `{where}` (alpha {alpha}); every page prints these verdicts, and a row outside the "
            "family its p alone.")


def claims_markdown(claims: pd.DataFrame, family: str) -> list[str]:
    """The claims table (family.in_family), led by ``family``, the sentence naming its Holm family."""
    lines = [family, "",
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
        estimate = ("undefined in every replicate" if r.n == 0 else f"{fmt(r.estimate)} (one replicate: no interval)"
                    if r.n == 1 else f"{fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}]")
        if r.n == 1:  # no test: the row's verdict cell says why rather than a bare dash
            p, p_holm = "- (one replicate)", "-"
        lines.append(f"| {dataset_name(r.dataset)} | {r.statistic} | {estimate} | {fmt(r.threshold)} | {p} | "
                     f"{p_holm} | {r.verdict_holm} | {sentence} |")
    return lines


def modes_markdown(modes: pd.DataFrame) -> list[str]:
    """Whether A(alpha*, xi^uf) is one mode or two (readings.modes_table); nothing where no
    dataset was tested."""
    modes = modes_frame(modes).assign(dataset=lambda f: f["dataset"].map(dataset_name),
                                      column=lambda f: f["column"].map(HEADERS_OF))
    if not len(modes):
        return []
    return ["", "| dataset | column | n | likelihood ratio | p | normal samples |", "|---" * 6 + "|",
            *("| " + " | ".join(map(str, row)) + " |" for row in modes.itertuples(index=False))]


def readings_markdown(read: pd.DataFrame, total: int, splits: dict[str, dict], tests: pd.DataFrame) -> list[str]:
    """Each independent replicate's readings (``read``, of ``total``), each dataset's boundary
    split in words (``splits``: readings.boundary_split per dataset) and whether the column follows
    a reading (``tests``: readings.readings_tests, r with its interval, p alone and under Holm)."""
    lines = ["", f"Readings of {len(read)} of {total} independent replicates:", "",
             "| dataset | A run | U run | A(α\\*, ξ^uf) | A's best step | best | α\\* entropy | `<s>`/`</s>` first: α\\*, ξ^uf | "
             "A(α\\*, ξ^uf) where α\\* puts `<s>`/`</s>` first, a word first | A(α\\*, ξ^uf) without `<s>`/`</s>` | "
             "α\\* puts first | ξ^uf puts first |",
             "|---" * 12 + "|"]
    for r in read.itertuples():
        lines.append(f"| {dataset_name(r.dataset)} | {r.a_run} | {r.u_run} | {percent(getattr(r, CENTRAL))} | "
                     f"{int(r.a_step)} | {percent(r.best_perf)} | {r.alpha_entropy:.3f} | "
                     f"{percent(r.alpha_boundary_share)}, {percent(r.xi_boundary_share)} | "
                     f"{percent(r.agr_boundary_rows)}, {percent(r.agr_word_rows)} | {percent(r.agr_without_boundary)} | "
                     f"`{r.alpha_words}` | `{r.xi_words}` |")
    for dataset, b in splits.items():
        lines += ["", boundary_sentence(dataset_name(dataset), b)]
    if not len(tests):  # a correlation needs three replicates of a dataset
        return lines + ["", "Whether the column follows a reading: not tested, fewer than 3 replicates with readings."]
    lines += ["", "| dataset | reading | n | r [95% CI] | p | p, Holm |", "|---" * 6 + "|"]
    return lines + ["| " + " | ".join(map(str, row)) + " |" for row in readings_tests_frame(tests)
                    .assign(dataset=lambda f: f["dataset"].map(dataset_name)).itertuples(index=False)]


def boundary_sentence(name: str, b: dict) -> str:
    """boundary_split in words: how often alpha* puts a boundary token first; the column on those
    rows against word rows (where both kinds occur); the column without the boundary tokens."""
    share = (f"{interval(b['share'], b['share_low'], b['share_high'])} percent of rows (mean [95% CI])"
             if b["share_n"] > 1 else f"{percent(b['share'])} percent of rows (one replicate: no interval)")
    text = (f"Exploratory (a split chosen after these replicates were seen; no verdict): {name}, over the "
            f"{b['share_n']} replicate{'s' if b['share_n'] != 1 else ''}: α\\* puts a boundary token (`<s>`, `</s>`) "
            f"first in {share}")
    if b["n"] >= 2:
        text += ("; A(α\\*, ξ^uf) on those rows minus on the rows where it puts a word first: "
                 f"{points(b['gap'], b['gap_low'], b['gap_high'])} points (paired t, p = {b['gap_p']:.2g}).")
    elif b["n"] == 1:  # one difference has no spread, so no interval and no test
        text += (", and only one replicate has both kinds of row, too few for an interval (there A(α\\*, ξ^uf) "
                 f"on those rows minus on the word rows is {100 * b['gap']:+.1f} points).")
    else:
        text += ", so no replicate has both kinds of row to set against each other."
    if b["without_n"] == 1:
        text += (" With `<s>` and `</s>` left out of both measures (one replicate), A(α\\*, ξ^uf) is "
                 f"{percent(b['without'])}; the column minus it: {100 * b['loss']:+.1f} points (one replicate: no "
                 "interval, no test).")
    elif b["without_n"]:
        text += (f" With `<s>` and `</s>` left out of both measures ({b['without_n']} replicates), A(α\\*, ξ^uf) is "
                 f"{interval(b['without'], b['without_low'], b['without_high'])}; the column minus it: "
                 f"{points(b['loss'], b['loss_low'], b['loss_high'])} points (paired t, p = {b['loss_p']:.2g}).")
    return text


def ledger_markdown(directories: list[dict]) -> list[str]:
    """The ledger's table: one row per working directory (ledger.by_directory), its invocations'
    starts and commits, and kept (where), dropped (why) or open (its command)."""
    lines = ["| directory | started (each invocation) | commit | status | kept as, or why dropped, or the command |",
             "|---" * 5 + "|"]
    for d in directories:
        commits = ", ".join(dict.fromkeys(f"`{c}`" for c in d["commits"])) or "-"
        n = d["reconstructed"]
        mark = "" if not n else f" ({n} of {len(d['starts'])} invocations reconstructed)"
        # a kept folder's run.json holds its command; the others' is printed here
        note = d["note"] if d["status"] != "open" else f"`{d['command']}`"
        lines.append(f"| `{d['directory']}` | {', '.join(sorted(d['starts'])) or '-'} | {commits} | {d['status']}{mark} | "
                     f"{note or '-'} |")
    return lines
