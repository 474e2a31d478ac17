"""The paper's published values (docs/methods.md 5; Snell et al. 2021, Tables 2 and 11),
keyed by this project's dataset names, and our tables set beside them."""

from __future__ import annotations

import pandas as pd

# percent, in Table 2's column order from agr_alpha_xi_uniform to best_perf; printed as whole
# percents, so each stands for the interval of half a point either side
TABLE2_ROUNDING = 0.005
TABLE2 = {
    "imdb": [53, 82, 62, 60, 5, 87, 87, 90],
    "ag_news": [39, 55, 43, 48, 6, 94, 95, 96],
    "newsgroups": [65, 41, 65, 63, 5, 91, 85, 94],
    "sst": [20, 34, 22, 25, 8, 78, 82, 84],
    "multi30k": [31, 34, 27, 49, 7, 43, 49, 66],
    "iwslt14": [36, 39, 28, 55, 7, 36, 44, 67],
    "news_it_pt": [29, 39, 25, 52, 6, 22, 25, 55],
}
TABLE2_VALUE_COLUMNS = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform",
                        "agr_alpha_xi_standard", "random_baseline", "ctx_perf_xi_uniform", "ctx_perf_xi_standard",
                        "best_perf"]
# fractions: A(xi^px, xi^uf), A(xi^lr, xi^uf)
TABLE11 = {"imdb": [0.81, 0.84], "yelp": [0.74, 0.76], "ag_news": [0.57, 0.58], "newsgroups": [0.40, 0.45],
           "sst": [0.39, 0.46], "amazon": [0.53, 0.60]}
TABLE11_VALUE_COLUMNS = ["agr_xi_proxy_xi_uniform", "agr_xi_logreg_xi_uniform"]

COLUMNS = ["dataset", "table", "column", "ours", "paper", "difference"]


def _long(ours: pd.DataFrame, published: dict, columns: list[str], scale: float, table: str) -> list[dict]:
    rows = []
    for _, row in ours.iterrows():
        for col, paper in zip(columns, published.get(row["dataset"], [])):
            rows.append({"dataset": row["dataset"], "table": table, "column": col, "ours": float(row[col]),
                         "paper": paper * scale, "difference": float(row[col]) - paper * scale})
    return rows


def paper_comparison(table2: pd.DataFrame, table11: pd.DataFrame) -> pd.DataFrame:
    """Every value of ours that the paper also reports, beside it (fractions)."""
    rows = _long(table2, TABLE2, TABLE2_VALUE_COLUMNS, 0.01, "table2")
    rows += _long(table11, TABLE11, TABLE11_VALUE_COLUMNS, 1.0, "table11")
    return pd.DataFrame(rows, columns=COLUMNS)
