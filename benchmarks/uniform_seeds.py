"""Table 2's uniform-model columns once per uniform seed, from a finished run's probes.

    python benchmarks/uniform_seeds.py results sst

The pipeline compares alpha* with the first uniform run only (later uniform seeds are
trained and probed but take no role, src/attnlearn/compare.py). This script pairs run A
and the proxy with each uniform run in turn, so that the seed spread of A(alpha*, xi^uf),
A(xi^px, xi^uf) and A(g*, xi^uf) can be set beside a gap to the paper
(docs/reproduction.md, SST).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.compare import Comparator, performance_frame
from attnlearn.tables import table2_row

COLUMNS = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "random_baseline"]


def run_a(results: Path, dataset: str) -> str:
    """Run A as the pipeline chose it (the first standard run in the config's order)."""
    agr = pd.read_parquet(results / "agreement" / f"{dataset}.parquet", columns=["a_run", "a_role"])
    return agr.loc[agr["a_role"] == "A", "a_run"].iloc[0]


def per_seed(results: Path, dataset: str) -> pd.DataFrame:
    probes = results / "probes" / dataset
    uniform = sorted(p.stem for p in probes.glob("uniform-s*.parquet") if not p.stem.endswith(".perf"))
    a = run_a(results, dataset)
    a_table, a_perf = pq.read_table(probes / f"{a}.parquet"), pd.read_parquet(probes / f"{a}.perf.parquet")
    proxy = pq.read_table(probes / "proxy.parquet")
    rows = []
    for u in uniform:
        tables = {a: a_table, u: pq.read_table(probes / f"{u}.parquet")}
        perf = {a: a_perf, u: pd.read_parquet(probes / f"{u}.perf.parquet")}
        agr = Comparator(dataset, tables, perf, proxy).build()
        row = table2_row(dataset, "", agr, performance_frame(dataset, perf))
        rows.append({"uniform_run": u, **{c: row[c] for c in COLUMNS}})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        sys.exit(__doc__)
    df = per_seed(Path(argv[0]), argv[1])
    print(df.to_string(index=False, float_format=lambda v: f"{100 * v:.1f}"))
    print(df[COLUMNS].agg(["mean", "std", "min", "max"]).to_string(float_format=lambda v: f"{100 * v:.1f}"))


if __name__ == "__main__":
    main(sys.argv[1:])
