"""paper_rows/appendix_rows.py: the appendix's tables the kept rows hold (Kendall's tau, BLEU,
Tables 10 and 11, the training split), pooled over the kept replicates and read against the
paper as Table 2 is. Fast tier: the kept parquet files and the script's functions, in this
process."""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
import pytest

from conftest import REPO, rows_module

from attnlearn.agreement.paper import TABLE2_KENDALL, TABLE2_KENDALL_COLUMNS, TABLE2_TRAIN, TABLE11
from attnlearn.reporting.appendix_markdown import PER_REPLICATE, ours_cell, table_lines

ROWS = sorted(p for p in (REPO / "reproduction/rows").iterdir() if p.is_dir())
# the rows the results page's appendix command reads: one row per dataset (a dataset's rows at
# two budgets, Multi30k at 3 and 20 epochs, share their seeds' runs and are never pooled)
PAGE_ROWS = [REPO / r for block in rows_module("printed").blocks((REPO / "docs/reproduction.md").read_text())
             if block["command"].startswith("python paper_rows/appendix_rows.py ")
             for r in block["command"].split()[2:]]


@pytest.fixture(scope="module")
def appendix():
    return rows_module("appendix_rows")


def test_the_papers_appendix_values_are_the_ones_it_prints():
    """A.4's Kendall table and A.10's Table 11 as the paper prints them (the issue's rows)."""
    kendall = {d: dict(zip(TABLE2_KENDALL_COLUMNS, v)) for d, v in TABLE2_KENDALL.items()}
    for dataset, row in {"newsgroups": [16.06, 22.03, 6.50, 0.00], "multi30k": [7.89, 27.54, 3.93, 0.00],
                         "sst": [11.68, 31.43, 15.01, 0.00]}.items():
        assert [kendall[dataset][c] for c in TABLE2_KENDALL_COLUMNS[:4]] == row
    assert kendall["sst"]["ctx_perf_xi_proxy_xi_uniform"] == 83.53 and kendall["multi30k"]["best_perf"] == 66.29
    assert TABLE11["newsgroups"] == [0.40, 0.45] and TABLE11["sst"] == [0.39, 0.46]
    assert TABLE2_TRAIN["newsgroups"][:5] == [72.36, 38.69, 71.73, 69.47, 5.32]
    assert all(len(v) == 8 for v in TABLE2_KENDALL.values()) and all(len(v) == 10 for v in TABLE2_TRAIN.values())


def test_each_kept_folder_gives_its_first_replicate_and_a_block_leaves_out_what_reads_b(appendix):
    """Every kept part's table10, table11 and table2_kendall is its first replicate's (the runs
    its performance table names A and U: checked), pooled once each; a block (parts4-10) gives
    its first replicate without the columns that read B. Row by row: two rows of one dataset
    (Multi30k at 3 and at 20 epochs, on the same seeds) are two budgets, never one pool."""
    for row in ROWS:
        folders = appendix.rows.table_folders(row)
        for name in ("table10", "table11", "table2_kendall"):
            pooled = appendix.pooled(folders, name)
            kept = pd.concat([pd.read_parquet(f / f"{name}.parquet") for f in folders], ignore_index=True)
            assert len(pooled) == len(kept)  # one replicate per folder with the table, none twice
            for dataset, g in (pooled.groupby("dataset") if len(pooled) else ()):  # Table 11: no translation
                assert sorted(g["a_run"]) == sorted(pd.concat(
                    [pd.read_parquet(f / "table2_replicates.parquet").iloc[:1] for f in folders
                     if (pd.read_parquet(f / f"{name}.parquet")["dataset"] == dataset).any()])["a_run"])
    kendall = appendix.pooled([REPO / "reproduction/rows/newsgroups/part1/tables",
                               REPO / "reproduction/rows/newsgroups/parts4-10/tables"], "table2_kendall").set_index("a_run")
    block = kendall.loc["standard-s7"]  # parts4-10's first replicate: its B runs are the block's other A runs
    assert np.isnan(block["ctx_perf_xi_uniform"]) and np.isnan(block["agr_alpha_xi_standard"])
    assert not np.isnan(block["agr_alpha_xi_uniform"]) and not np.isnan(kendall.loc["standard-s1", "ctx_perf_xi_uniform"])
    assert list(kendall["replicate"]) == [1, 2]  # renumbered over the pool


def test_folders_that_share_runs_are_refused(appendix):
    """sms_spam's factorial grid trains part 1's runs again: pooled with part 1 it would count
    one replicate twice."""
    with pytest.raises(ValueError, match="share runs"):
        appendix.pooled([REPO / "reproduction/rows/sms_spam/part1/tables", REPO / "reproduction/rows/sms_spam/factorial/tables"],
                        "table10")


def test_a_table_of_other_runs_than_the_first_replicates_is_refused(appendix, tmp_path):
    src = REPO / "reproduction/rows/sst/part1/tables"
    for name in ("table2_replicates", "table10"):
        pd.read_parquet(src / f"{name}.parquet").to_parquet(tmp_path / f"{name}.parquet")
    perf = pd.read_parquet(src / "performance.parquet")
    perf.assign(role=perf["role"].replace({"A": "B", "B": "A"})).to_parquet(tmp_path / "performance.parquet")
    with pytest.raises(ValueError, match="not its first replicate's"):
        appendix.pooled([tmp_path], "table10")


def test_intervals_read_the_paper_as_table2_does(appendix):
    """mean and the t prediction interval over the replicates with the bound on the examples'
    error (872 texts); the paper's value inside or outside; one replicate: its value, n and no
    interval; a zero-width column to the decimals that tell it from the paper's; without the
    count of probed texts, no verdict."""
    reps = pd.DataFrame({"dataset": "sst", "independent": True, "agr_alpha_xi_uniform": [0.10, 0.13, 0.12],
                         "agr_xi_proxy_xi_uniform": [0.60, 0.61, 0.62], "random_baseline": [0.0] * 3,
                         "best_perf": [0.8, np.nan, np.nan]})
    cols = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "random_baseline", "best_perf"]
    unknown = appendix.appendix_intervals(reps, cols, TABLE2_KENDALL, TABLE2_KENDALL_COLUMNS).set_index("column")
    assert unknown["paper_in_pi"].isna().all()
    iv = appendix.appendix_intervals(reps, cols, TABLE2_KENDALL, TABLE2_KENDALL_COLUMNS,
                                     probed={"sst": 872}).set_index("column")
    assert iv.loc["agr_xi_proxy_xi_uniform", "examples_sd"] == pytest.approx(np.sqrt(2 * 0.61 * 0.39 / 872))
    assert iv.loc["agr_alpha_xi_uniform", "paper_in_pi"] and iv.loc["agr_alpha_xi_uniform", "paper"] == 0.1168
    assert not iv.loc["agr_xi_proxy_xi_uniform", "paper_in_pi"]  # 31.43 against 40-42
    assert ours_cell(iv.loc["random_baseline"]) == "0.00 [0.00, 0.00] (n = 3)"  # the paper's 0.00: inside
    assert ours_cell(iv.loc["best_perf"]) == "80.0 (n = 1, no interval)"
    assert iv.loc["best_perf", "paper_in_pi"] is None
    lines = table_lines(iv.reset_index(), cols)
    assert lines[3] == "| SST, paper | 11.68 (inside) | 31.43 (**outside**) | 0.00 (inside) | 83.53 (no interval) |"


def test_table10_says_per_replicate_what_the_mean_does_not(appendix):
    """Beside the mean difference's CI, one more replicate's prediction interval and how many
    replicates lie below 0: a mean below 0 with a replicate above it is not 'consistently lower'."""
    reps = pd.DataFrame({"dataset": "sms_spam", "independent": True,
                         "agr_alpha_frozen_alpha_star": [0.10, 0.20, 0.30, 0.52],
                         "agr_xi_uniform_alpha_star": [0.40, 0.50, 0.60, 0.50]})
    diff = reps["agr_alpha_frozen_alpha_star"] - reps["agr_xi_uniform_alpha_star"]
    ci = stats.ttest_1samp(diff, 0).confidence_interval()
    cell = appendix.paired(reps, "agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star", per_replicate=True)
    half = stats.t.ppf(0.975, 3) * diff.std(ddof=1) * np.sqrt(1 + 1 / 4)
    assert cell["sms_spam"] == (f"{100 * diff.mean():+.1f} [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}] (n = 4); "
                                f"one more replicate: {100 * diff.mean():+.1f} [{100 * (diff.mean() - half):+.1f}, "
                                f"{100 * (diff.mean() + half):+.1f}]; 3 of 4 below 0")


def test_a_kept_training_split_table_is_read_against_the_papers(appendix, tmp_path):
    """A kept table2_train prints against A.4's training-split values; a folder without one
    says so."""
    reps = pd.DataFrame({"dataset": "sst", "replicate": [1], "a_run": ["standard-s1"], "u_run": ["uniform-s1"],
                         "p_run": ["proxy-s0"], "b_runs": [["standard-s4"]], "xi_b_run": ["standard-s4"],
                         "independent": [True]})
    perf = pd.DataFrame({"dataset": "sst", "run": ["standard-s1", "uniform-s1"], "role": ["A", "U"], "step": 0,
                         "metric": "accuracy", "value": 0.5})
    folders = []
    for i, value in enumerate([0.20, 0.24]):
        folder = tmp_path / f"part{i + 1}"
        folder.mkdir()
        runs = {c: [f"{v}-p{i}" for v in reps[c]] for c in ("a_run", "u_run", "p_run")}
        reps.assign(**runs, b_runs=[[f"standard-s4-p{i}"]]).to_parquet(folder / "table2_replicates.parquet")
        perf.assign(run=[runs["a_run"][0], runs["u_run"][0]]).to_parquet(folder / "performance.parquet")
        pd.DataFrame({"dataset": ["sst"], "agr_alpha_xi_uniform": [value]}).to_parquet(folder / "table2_train.parquet")
        folders.append(folder)
    lines = appendix.train_lines(folders)  # no run.json: how many training texts were probed is not known
    ours = next(line for line in lines if line.startswith("| SST, ours"))
    assert ours.split(" | ")[1] == "22.0 [-22.0, 66.0] (n = 2)"  # 22 +- t(1) sd sqrt(1 + 1/2), the seeds alone
    assert next(line for line in lines if line.startswith("| SST, paper")).split(" | ")[1] == \
        "21.82 (no verdict: examples unknown)"
    lines = appendix.train_lines(folders, {"sst": 4000})  # with the examples' bound: a verdict
    assert next(line for line in lines if line.startswith("| SST, paper")).split(" | ")[1] == "21.82 (inside)"
    assert "No kept row holds table2_train.parquet" in "\n".join(appendix.train_lines([REPO / "reproduction/rows/sst/part1/tables"]))


def test_the_kept_rows_print_every_appendix_table(appendix, capsys):
    """The command the results page names: Kendall's tau for every kept row, Multi30k's BLEU row
    (the 20-epoch parts'), Table 10 with n = 1 frozen runs and no interval, Table 11's classification rows
    against the paper (SST's and SMS spam's blocks every replicate), the training split (SST's
    block)."""
    assert appendix.main([str(r) for r in PAGE_ROWS]) == 0
    out = capsys.readouterr().out
    kendall = out.split("## Table 2 with Kendall's tau")[1].split("## Translation")[0]
    for name in ("Multi30k", "20 Newsgroups", "20 Newsgroups, headers stripped", "SMS spam", "SST"):
        assert f"| {name}, ours |" in kendall
    assert "| 20 Newsgroups, paper | 16.06 (" in kendall and "| SST, paper | 11.68 (" in kendall
    bleu = out.split("## Translation with BLEU")[1].split("## Table 10")[0]  # the 20-epoch parts probed it
    assert "| Multi30k, ours | " in bleu and "| Multi30k, paper | 30.77 (" in bleu and "no row" not in bleu
    table10 = out.split("## Table 10")[1].split("## Table 11")[0]
    assert "(n = 1, no interval)" in table10 and "[" not in table10.split("| Multi30k, ours | ")[1].split(" | ")[0]
    table11 = out.split("## Table 11")[1].split("## Table 2 on the training split")[0]
    assert "| 20 Newsgroups, paper | 40.00 (" in table11 and "| SST, paper | 39.00 (" in table11
    assert "Multi30k" not in table11  # translation: no Table 11
    assert "| SST, ours |" in table11 and "(n = 8)" in table11 and "(n = 14)" in table11
    train = out.split("## Table 2 on the training split")[1]
    assert "| SST, ours | " in train and "(n = 5)" in train and "| SST, paper | 21.82 (" in train
    assert "nan" not in out and "None" not in out


def _kept_folder(folder: Path, a_runs, u_runs, p_runs, b_runs, t10: list[float], frozen: dict | None = None):
    """A kept tables folder of sms_spam: its replicates' runs, the performance table's roles (the
    first replicate's, with F where it has one), its table10 (the first replicate's values
    ``t10``) and, with ``frozen`` ({replicate: (f_run, frozen value, xi^uf value)}), its
    table10_replicates."""
    folder.mkdir(parents=True)
    n = len(a_runs)
    pd.DataFrame({"dataset": "sms_spam", "replicate": range(1, n + 1), "a_run": a_runs, "u_run": u_runs,
                  "p_run": p_runs, "b_runs": b_runs, "xi_b_run": [b[0] for b in b_runs], "independent": True}
                 ).to_parquet(folder / "table2_replicates.parquet")
    f_first = (frozen or {}).get(1, (None,))[0]
    roles = {a_runs[0]: "A", u_runs[0]: "U", **({f_first: "F"} if f_first else {})}
    pd.DataFrame({"dataset": "sms_spam", "run": list(roles), "role": list(roles.values()), "step": 0,
                  "metric": "accuracy", "value": 0.9}).to_parquet(folder / "performance.parquet")
    pd.DataFrame({"dataset": ["sms_spam"], "agr_alpha_frozen_alpha_star": [t10[0]],
                  "agr_xi_uniform_alpha_star": [t10[1]]}).to_parquet(folder / "table10.parquet")
    if frozen is not None:
        pd.DataFrame([{"dataset": "sms_spam", "replicate": r, "a_run": a_runs[r - 1], "u_run": u_runs[r - 1],
                       "f_run": f, "independent": True, "agr_alpha_frozen_alpha_star": v_f,
                       "agr_xi_uniform_alpha_star": v_u} for r, (f, v_f, v_u) in frozen.items()],
                     columns=["dataset", "replicate", "a_run", "u_run", "f_run", "independent",
                              "agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]
                     ).to_parquet(folder / "table10_replicates.parquet")
    return folder


def _block(folder: Path, first: int = 7, frozen_seeds=(2, 3), values=((0.10, 0.50), (0.20, 0.40))):
    """A block of two replicates (A = standard-s<first>, s<first+1>; B: each other's A), each with
    a frozen run of its own; table10 holds its first replicate's values, as the tables rule writes."""
    a = [f"standard-s{first}", f"standard-s{first + 1}"]
    frozen = {r: (f"frozen-s{s}", *v) for r, (s, v) in enumerate(zip(frozen_seeds, values), 1)}
    return _kept_folder(folder, a, [f"uniform-s{first}", f"uniform-s{first + 1}"],
                        [f"proxy-s{first}", f"proxy-s{first + 1}"], [[a[1]], [a[0]]], list(values[0]), frozen)


def test_table10_pools_every_replicate_with_a_frozen_run_of_its_own(appendix, tmp_path):
    """A block run with --variants frozen gives every replicate (table10_replicates), a part its
    first (table10, its F from the performance table): three frozen runs, an interval, the
    paired difference over the three; the block's table10 row (its first replicate) is not
    counted twice."""
    part = _kept_folder(tmp_path / "part1", ["standard-s1"], ["uniform-s1"], ["proxy-s0"], [["standard-s4"]],
                        [0.15, 0.60], {1: ("frozen-s1", 0.15, 0.60)})
    (part / "table10_replicates.parquet").unlink()  # kept before the per-replicate table existed
    block = _block(tmp_path / "parts4-5")
    reps = appendix.table10_replicates([part, block])
    assert list(reps["f_run"]) == ["frozen-s1", "frozen-s2", "frozen-s3"] and list(reps["replicate"]) == [1, 2, 3]
    assert list(reps["agr_alpha_frozen_alpha_star"]) == [0.15, 0.10, 0.20]
    assert list(reps["agr_xi_uniform_alpha_star"]) == [0.60, 0.50, 0.40]
    lines = appendix.table10_lines([part, block])
    ours = next(line for line in lines if line.startswith("| SMS spam, ours")).split(" | ")
    assert ours[1].endswith("(n = 3)") and "[" in ours[1] and ours[2].endswith("(n = 3)")
    assert ours[3].startswith("-35.0 [") and ours[3].endswith("3 of 3 below 0 |")  # -45, -40, -20 points, paired
    assert PER_REPLICATE in "\n".join(lines)
    # a part alone: one frozen run, no interval, and the page's sentence as before
    alone = appendix.table10_lines([part])
    one = next(line for line in alone if line.startswith("| SMS spam, ours"))
    assert one.count("(n = 1, no interval)") == 3 and PER_REPLICATE not in "\n".join(alone)


def test_table10_falls_back_to_the_first_replicate_where_no_replicate_has_its_own_frozen_run(appendix, tmp_path):
    """A folder whose table10_replicates is empty (no frozen run: a block without --variants, a
    part without F) gives its first replicate's table10 row, as before: U's column counts it,
    F's has none."""
    folder = _kept_folder(tmp_path / "part2", ["standard-s2"], ["uniform-s2"], ["proxy-s1"], [["standard-s5"]],
                          [float("nan"), 0.45], {})
    reps = appendix.table10_replicates([folder])
    assert len(reps) == 1 and reps["f_run"].isna().all() and reps["agr_xi_uniform_alpha_star"].tolist() == [0.45]


def test_table10_refuses_a_frozen_run_twice_or_a_replicate_of_other_runs(appendix, tmp_path):
    first = _block(tmp_path / "a")
    again = _block(tmp_path / "b", first=20, frozen_seeds=(3, 4))  # other A, U, proxy, but frozen-s3 again
    with pytest.raises(ValueError, match="frozen run frozen-s3 is in more than one"):
        appendix.table10_replicates([first, again])
    table = pd.read_parquet(first / "table10_replicates.parquet")
    table.assign(a_run=["standard-s99", "standard-s8"]).to_parquet(first / "table10_replicates.parquet")
    with pytest.raises(ValueError, match="replicate 1 of sms_spam has a_run standard-s99"):
        appendix.table10_replicates([first])


def test_a_folder_with_kendall_per_replicate_gives_every_replicate(appendix, tmp_path):
    """A block whose tables hold table2_kendall_replicates (the tables rule writes it now) gives
    each of its replicates to the Kendall table, its columns that read B left out; a folder
    without it still gives its first replicate alone."""
    import shutil
    from attnlearn.agreement.replicates import KENDALL_REPLICATE_COLUMNS

    block = tmp_path / "parts4-10"
    shutil.copytree(REPO / "reproduction/rows/newsgroups/parts4-10/tables", block)
    reps = pd.read_parquet(block / "table2_replicates.parquet")
    kendall = reps[[c for c in KENDALL_REPLICATE_COLUMNS if c in reps]].assign(agr_alpha_xi_uniform=0.1)
    kendall.to_parquet(block / "table2_kendall_replicates.parquet")
    part = REPO / "reproduction/rows/newsgroups/part1/tables"
    pooled = appendix.every_replicate([part, block], "table2_kendall").set_index("a_run")
    assert len(pooled) == 1 + len(reps)  # part 1's first replicate, then every replicate of the block
    assert (pooled.loc[list(reps["a_run"]), "agr_alpha_xi_uniform"] == 0.1).all()
    assert pooled.loc[list(reps["a_run"]), "agr_alpha_xi_standard"].isna().all()  # the block's B: its own A runs
    assert pooled.loc["standard-s1", "agr_alpha_xi_uniform"] == pd.read_parquet(
        part / "table2_kendall.parquet")["agr_alpha_xi_uniform"].iloc[0]


def test_the_appendix_option_prints_the_rows_appendix_tables_alone(capsys):
    """docs/analyses.md prints the TanhMax runs against their rows' softmax runs without the rows'
    Table 2 and claims (which it had typed by hand, and which went stale as parts were kept)."""
    reproduction_rows = rows_module("reproduction_rows")
    assert reproduction_rows.main(["--appendix", str(REPO / "reproduction/rows/sst")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| dataset | TanhMax run |") and "| dataset | claim |" not in out
    assert reproduction_rows.main(["--appendix", str(REPO / "reproduction/rows/newsgroups")]) == 2
    assert "no additive or TanhMax runs kept in" in capsys.readouterr().err
