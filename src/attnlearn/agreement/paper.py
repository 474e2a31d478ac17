"""The paper's published values (docs/methods.md 5; Snell et al. 2021, Tables 2 and 11),
keyed by this project's dataset names, and our tables set beside them."""

from __future__ import annotations

import pandas as pd

# percent at the appendix's two decimals (A.4: the agreement table and the token-accuracy
# contextualized table, all eleven tasks), in Table 2's column order from agr_alpha_xi_uniform to
# best_perf; the main text prints them rounded to whole percents
TABLE2 = {
    "imdb": [52.55, 81.60, 61.55, 60.35, 5.30, 86.81, 86.81, 89.55],
    "yelp": [17.55, 75.38, 58.90, 35.00, 5.80, 90.39, 93.59, 96.20],
    "ag_news": [39.24, 55.13, 43.08, 48.13, 6.20, 93.54, 94.50, 96.05],
    "newsgroups": [65.08, 41.33, 64.82, 63.07, 5.11, 91.16, 84.57, 94.22],
    "sst": [19.85, 33.57, 22.45, 25.33, 8.39, 78.16, 82.38, 83.53],
    "amazon": [52.02, 76.78, 49.68, 62.13, 5.80, 82.48, 88.07, 90.38],
    "multi30k": [31.02, 34.43, 27.06, 48.78, 7.11, 43.45, 48.58, 66.29],
    "iwslt14": [35.75, 39.09, 27.69, 55.25, 6.52, 35.82, 44.09, 67.36],
    "news_it_pt": [29.13, 38.62, 25.45, 52.48, 6.17, 21.82, 25.06, 55.41],
    "news_en_nl": [35.53, 41.72, 29.15, 60.15, 6.36, 18.59, 26.79, 62.90],
    "news_en_pt": [35.90, 37.37, 30.23, 65.49, 6.34, 19.12, 27.85, 67.75],
}
# the appendix's two other contextualized columns (percent): C-perf of A(xi^px, xi^uf) and of
# A(g*, xi^uf), token accuracy; starred values there are the paper's convention (best performance)
TABLE2_APPENDIX_CTX = {
    "imdb": [88.88, 86.81], "yelp": [95.22, 95.31], "ag_news": [96.05, 94.32], "newsgroups": [60.75, 84.57],
    "sst": [83.53, 78.16], "amazon": [90.38, 82.48], "multi30k": [43.45, 43.45], "iwslt14": [35.82, 32.98],
    "news_it_pt": [25.06, 21.82], "news_en_nl": [23.21, 18.59], "news_en_pt": [19.12, 19.12],
}
TABLE2_APPENDIX_CTX_COLUMNS = ["ctx_perf_xi_proxy_xi_uniform", "ctx_perf_grad_xi_uniform"]
# Translation with BLEU as the performance (A.4; the checkpoint of best BLEU): the agreement
# columns, then the contextualized ones and the best BLEU (37.89 on Multi30k: the paper's 37.9)
TABLE2_BLEU = {
    "multi30k": [30.77, 34.43, 27.24, 48.70, 7.19, 11.43, 16.41, 37.89],
    "iwslt14": [35.75, 39.09, 27.69, 55.25, 6.52, 6.71, 9.89, 32.95],
    "news_it_pt": [29.13, 38.62, 25.45, 52.48, 6.17, 1.29, 2.16, 24.71],
    "news_en_nl": [35.53, 41.72, 29.15, 60.15, 6.35, 0.94, 4.12, 29.42],
    "news_en_pt": [35.77, 37.37, 30.37, 64.94, 6.34, 0.74, 4.28, 37.04],
}
# A.4's Table 2 with Kendall's tau as the agreement (percent): its agreement table (Table 2's
# agreement columns but A(alpha*, xi^B), and the baseline, 0 for tau) and its contextualized table
# (the three agreements' C-perf by token accuracy, then the best performance), in
# TABLE2_KENDALL_COLUMNS' order. Starred there (the paper's convention: the best performance):
# SST's and the contextualized A(xi^px, xi^uf)'s 83.53.
TABLE2_KENDALL_COLUMNS = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "random_baseline",
                          "ctx_perf_xi_uniform", "ctx_perf_xi_proxy_xi_uniform", "ctx_perf_grad_xi_uniform",
                          "best_perf"]
TABLE2_KENDALL = {
    "imdb": [12.77, 33.31, 12.56, 0.00, 70.60, 80.50, 70.60, 89.55],
    "yelp": [20.38, 36.75, 20.98, 0.00, 87.44, 93.20, 87.44, 96.20],
    "ag_news": [26.31, 36.65, 20.55, 0.00, 89.31, 93.54, 85.85, 96.05],
    "newsgroups": [16.06, 22.03, 6.50, 0.00, 60.75, 60.75, 60.75, 94.22],
    "sst": [11.68, 31.43, 15.01, 0.00, 76.69, 83.53, 76.69, 83.53],
    "amazon": [15.21, 35.84, 9.33, 0.00, 69.91, 88.07, 57.36, 90.38],
    "multi30k": [7.89, 27.54, 3.93, 0.00, 22.94, 36.61, 22.94, 66.29],
    "iwslt14": [8.64, 22.56, 2.72, 0.00, 29.07, 32.98, 29.07, 67.36],
    "news_it_pt": [4.82, 17.16, 1.63, 0.00, 14.01, 18.25, 8.10, 55.41],
    "news_en_nl": [4.53, 20.35, 2.08, 0.00, 9.60, 18.59, 9.60, 62.90],
    "news_en_pt": [4.65, 18.20, 2.17, 0.00, 14.10, 14.10, 7.71, 67.75],
}
# A.4's Table 2 on the training split (percent), in TABLE2_TRAIN_COLUMNS' order: the agreement
# table (five columns) and the contextualized one (four C-perf columns by token accuracy and the
# best performance; starred there: IMDB's, AG News', SST's and Amazon's C-perf of A(xi^px, xi^uf)
# and SST's of A(alpha*, xi^B))
TABLE2_TRAIN_COLUMNS = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform",
                        "agr_alpha_xi_standard", "random_baseline", "ctx_perf_xi_uniform",
                        "ctx_perf_xi_proxy_xi_uniform", "ctx_perf_grad_xi_uniform", "ctx_perf_xi_standard", "best_perf"]
TABLE2_TRAIN = {
    "imdb": [51.52, 80.10, 42.85, 64.88, 5.29, 90.40, 99.95, 90.40, 95.01, 99.95],
    "yelp": [11.15, 76.12, 55.50, 37.63, 5.85, 75.61, 96.54, 96.19, 94.44, 98.22],
    "ag_news": [36.97, 53.95, 43.11, 46.89, 6.17, 93.57, 98.42, 94.63, 95.54, 98.42],
    "newsgroups": [72.36, 38.69, 71.73, 69.47, 5.32, 100.00, 65.40, 100.00, 100.00, 100.00],
    "sst": [21.82, 29.35, 20.48, 28.50, 8.48, 97.72, 100.00, 84.11, 100.00, 100.00],
    "amazon": [51.95, 77.18, 40.15, 61.78, 5.91, 87.96, 99.58, 80.98, 91.09, 99.58],
    "multi30k": [32.89, 34.67, 28.36, 56.39, 7.21, 43.27, 43.27, 43.27, 51.97, 80.76],
    "iwslt14": [36.61, 38.95, 28.37, 57.71, 6.52, 35.94, 35.94, 35.94, 44.18, 71.18],
    "news_it_pt": [31.03, 38.70, 27.11, 64.81, 6.15, 22.69, 25.96, 22.69, 39.98, 77.10],
    "news_en_nl": [37.86, 41.91, 31.11, 67.68, 6.39, 18.85, 23.56, 18.85, 40.09, 74.49],
    "news_en_pt": [37.43, 37.23, 31.76, 71.96, 6.35, 19.33, 19.33, 19.33, 42.41, 77.97],
}
# Table 10 (A.6: the frozen run's attention against alpha*, beside A(xi^uf, alpha*), classification):
# its values are not in the paper's text we hold; its reading is that "the left column is
# consistently lower than the right column".
# Appendix Table 9: training and validation examples and median token counts (source, target
# for translation), the sizes the preflight prices a dataset at before it is downloaded.
# Keyed by dataset name, or by source kind where several datasets share one (multi30k_tf).
TABLE9 = {
    "imdb": {"train": 25000, "valid": 4000, "median": (181,)},
    "ag_news": {"train": 60000, "valid": 3800, "median": (40,)},
    "newsgroups": {"train": 1197, "valid": 796, "median": (183,)},
    "sst": {"train": 5130, "valid": 1421, "median": (16,)},
    "amazon": {"train": 32514, "valid": 4000, "median": (71,)},
    "yelp": {"train": 88821, "valid": 4000, "median": (74,)},
    "iwslt14": {"train": 160240, "valid": 7284, "median": (23, 24)},
    "multi30k": {"train": 29000, "valid": 1014, "median": (14, 14)},
    "news_en_nl": {"train": 52070, "valid": 5786, "median": (30, 34)},
    "news_en_pt": {"train": 48538, "valid": 5394, "median": (31, 35)},
    "news_it_pt": {"train": 21572, "valid": 2397, "median": (36, 35)},
}
# The validation examples the paper probed, for datasets whose validation split is the one we
# probe (all of it): with both on the same examples, their sampling error is shared
# (replicates.interval_table); elsewhere the paper's examples are other than ours.
# the validation split the paper probed whole, where it is the split we probe (Multi30k: its 1,014
# pairs). Not SST: the paper's Table 9 gives 1,421 validation texts, which match no split of the
# release we probe (872; docs/data.md), so its value rests on other examples (2 b^2, methods 5.1)
PAPER_EXAMPLES = {"multi30k": 1014}
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
            if col not in row.index:
                continue
            rows.append({"dataset": row["dataset"], "table": table, "column": col, "ours": float(row[col]),
                         "paper": paper * scale, "difference": float(row[col]) - paper * scale})
    return rows


def paper_comparison(table2: pd.DataFrame, table11: pd.DataFrame, table2_bleu: pd.DataFrame | None = None
                     ) -> pd.DataFrame:
    """Every value of ours that the paper also reports, beside it (fractions)."""
    rows = _long(table2, TABLE2, TABLE2_VALUE_COLUMNS, 0.01, "table2")
    rows += _long(table2, TABLE2_APPENDIX_CTX, TABLE2_APPENDIX_CTX_COLUMNS, 0.01, "table2")
    if table2_bleu is not None:
        rows += _long(table2_bleu, TABLE2_BLEU, TABLE2_VALUE_COLUMNS, 0.01, "table2_bleu")
    rows += _long(table11, TABLE11, TABLE11_VALUE_COLUMNS, 1.0, "table11")
    return pd.DataFrame(rows, columns=COLUMNS)
