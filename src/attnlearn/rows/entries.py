"""The dataset entry of one part, a block of parts or a factorial grid of a row: which runs and
seeds each trains (paper_row.py --part, --parts, --factorial), so that parts and blocks share no
run and pool as independent replicates."""

from __future__ import annotations

import argparse
import copy

from attnlearn.agreement.compare import replicate_design
from attnlearn.config import load_config
from attnlearn.rows import REPO

VARIANTS = ("frozen", "tanhmax", "additive")  # dealt to the parts in this order (config.run_names' order)


def part_entry(entry: dict, resolved: dict, part: int) -> dict:
    """The dataset entry of replicate ``part`` (1-based) alone, so that a row too long for one
    sitting is run and kept as independent parts: A = the part-th standard seed, U and the proxy
    the part-th of theirs, B = the standard seeds past the n replicates' A's, every n-th from
    part (n = the shortest of the three lists). No run serves two parts, so the pooled
    replicates share nothing (the rotate design's replicates share their B runs). The frozen,
    TanhMax and additive seeds are dealt to the parts in turn. ``resolved``: the entry with the
    task defaults filled in (config.load_config); every variant is written out, [] included,
    so that no default adds a run to a part."""
    runs, proxies = resolved["runs"], resolved["proxy"]["seeds"]
    standard, uniform = runs.get("standard", []), runs.get("uniform", [])
    design = replicate_design(standard, uniform, proxies)  # the workflow's rotate replicates, on seeds
    n = len(design)
    if not 1 <= part <= n:
        raise ValueError(f"--part {part}: the row has {n} replicates (standard {standard}, uniform {uniform}, "
                         f"proxy seeds {proxies})")
    rep, b = design[part - 1], standard[n + part - 1::n]
    if not b:
        raise ValueError(f"--part {part}: no B run (standard {standard} has no seed past the {n} A's; "
                         f"list {2 * n} standard seeds)")
    extra = [(v, s) for v in VARIANTS for s in runs.get(v, [])]
    mine = {v: [s for k, (w, s) in enumerate(extra) if w == v and k % n == part - 1] for v in VARIANTS}
    return {**entry, "runs": {"standard": [rep["a_run"], *b], "uniform": [rep["u_run"]], **mine},
            "proxy": {**entry.get("proxy", {}), "seeds": [rep["p_run"]]}}


def factorial_entry(resolved: dict, n: int) -> dict:
    """The dataset entry of an n x n x n factorial grid (``tables: {design: factorial}``): the
    first n standard, uniform and proxy seeds, every A with every U with every proxy, so that
    the variance of each column splits into A's, U's and the proxy's shares (methods.md 5.1).
    B is the next standard run after A (cyclically): tied to A, as in every design. No other
    variant runs. ``resolved``: the entry with the task defaults filled in."""
    runs, proxies = resolved["runs"], resolved["proxy"]["seeds"]
    standard, uniform = runs.get("standard", []), runs.get("uniform", [])
    if n < 2 or min(len(standard), len(uniform), len(proxies)) < n:
        raise ValueError(f"--factorial {n}: needs 2 <= n and n standard, uniform and proxy seeds (standard "
                         f"{standard}, uniform {uniform}, proxy seeds {proxies})")
    return {**resolved, "runs": {"standard": standard[:n], "uniform": uniform[:n], **{v: [] for v in VARIANTS}},
            "proxy": {**resolved["proxy"], "seeds": proxies[:n]}}


BLOCK_VARIANTS = ("frozen",)  # what a block may add to each replicate (--variants): Table 10's F


def block_entry(resolved: dict, first: int, last: int, variants: tuple[str, ...] = ()) -> dict:
    """The dataset entry of replicates ``first``..``last`` past the config's n (``--parts 4-10``),
    run together in one directory: each list continues with fresh seeds (replicate R: A =
    the largest standard seed + R - n, U and the proxy likewise), so the block shares no run
    with the parts 1..n nor with another block. Each replicate trains only its A, U and proxy;
    its B runs are the block's other A runs (the rotate design), so the columns that read B
    are not independent replicates within a block: reproduction_rows.py pools those columns
    over the replicates that own their B (the parts). No other variant runs, but those named in
    ``variants`` ("frozen": one frozen run per replicate, the largest frozen seed + R - n, which
    the design makes replicate R's F: Table 10 per replicate). A variant changes no other run's
    seed, so adding it to a finished block trains only its runs. ``resolved``: the entry with
    the task defaults filled in."""
    runs, proxies = resolved["runs"], resolved["proxy"]["seeds"]
    standard, uniform = runs.get("standard", []), runs.get("uniform", [])
    n = len(replicate_design(standard, uniform, proxies))
    if not n < first < last:
        raise ValueError(f"--parts {first}-{last}: a block runs two or more replicates past the config's {n} "
                         f"(write {n + 1}-{n + 2} or later; parts 1-{n} run with --part)")
    unknown = sorted(set(variants) - set(BLOCK_VARIANTS))
    if unknown:
        raise ValueError(f"--variants {' '.join(unknown)}: a block adds only {', '.join(BLOCK_VARIANTS)}")
    fresh = range(first - n, last - n + 1)
    # past every seed the parts were dealt (part_entry): the config's own list; none: from 1
    added = {v: [max(runs.get(v, []), default=0) + k for k in fresh] for v in variants}
    return {**resolved, "runs": {"standard": [max(standard) + k for k in fresh],
                                 "uniform": [max(uniform) + k for k in fresh], **{v: [] for v in VARIANTS}, **added},
            "proxy": {**resolved["proxy"], "seeds": [max(proxies) + k for k in fresh]}}


def parse_block(text: str) -> tuple[int, int]:
    """'4-10' -> (4, 10)."""
    first, sep, last = text.partition("-")
    if not (sep and first.isdigit() and last.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: write FIRST-LAST, e.g. 4-10")
    return int(first), int(last)


def resolved_entry(config: dict, dataset: str) -> dict:
    """The dataset's entry with the task defaults filled in, as the workflow reads it."""
    return load_config(copy.deepcopy(config), REPO / "config/schema.yaml")["datasets"][dataset]
