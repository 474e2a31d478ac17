"""The transfer test for people (results/tables/transfer.md): the early response per start, in
percent with its 95% interval over the seeds, then the plan's tests with their verdicts."""

from __future__ import annotations

import pandas as pd

from attnlearn.agreement.readable import UNDEFINED, interval, percent, points, to_markdown
from attnlearn.agreement.sweep import plan_lines
from attnlearn.agreement.transfer import AGAINST


def mean_ci_cell(r) -> str:
    """mean [95% CI] in percent, from a row or dict with mean, ci_low and ci_high (the mean alone
    where there is no interval; UNDEFINED where there is no mean)."""
    if pd.isna(r["mean"]):
        return UNDEFINED
    return interval(r["mean"], r["ci_low"], r["ci_high"]) if not pd.isna(r["ci_low"]) else percent(r["mean"])


def _wide(frame: pd.DataFrame, cells: list[str]) -> str:
    """One Markdown row per start (arm, parts, k, n), a column per reference and response; the
    doses first, the control after them."""
    shown = frame.assign(reference=frame["against"].map(AGAINST), cell=cells)
    wide = shown.pivot_table(index=["arm", "parts", "dose", "n"], columns=["reference", "what"], values="cell",
                             aggfunc="first").reset_index()
    wide.columns = [" ".join(c).strip() if isinstance(c, tuple) else c for c in wide.columns]
    return to_markdown(doses_then_control(wide).rename(columns={"dose": "k (donor step)"}))


def doses_then_control(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per start, the transfer's doses in order, the control after them."""
    return frame.sort_values(["arm", "dose"], key=lambda c: c != "transfer" if c.name == "arm" else c)


def markdown(pooled: pd.DataFrame, plan: pd.DataFrame, status: str, sweep: str, window: int,
             title: bool = True) -> str:
    """The page; ``title`` False leaves out its heading (a block printed into another page)."""
    lines = [f"# Transfer: attention after a start from a donor's weights (sweep {sweep})", ""] if title else []
    lines += [f"Each standard run starts from its donor's checkpoint at step k (every part but the attention; "
             f"the control: only the parts it names). Early: A(α_t, ·) averaged over steps 0..{window}; last: at "
             "the run's last checkpoint. Agreement in percent, mean [95% CI] over the seeds (docs/methods.md, "
             "section 14).", ""]
    lines += [_wide(pooled, [mean_ci_cell(r) for _, r in pooled.iterrows()]), ""]
    if len(plan):
        lines += plan_lines(plan, status)
    return "\n".join(lines)


def contrast_lines(diffs: pd.DataFrame) -> list[str]:
    """Each start against k = 0, seed by seed: exploratory (no plan tested these), in points."""
    cells = [points(r["mean"], r["ci_low"], r["ci_high"]) for _, r in diffs.iterrows()]
    return ["## Each start minus k = 0, seed by seed (exploratory)", "",
            "Mean difference [95% CI] over the seeds, in points; no plan tested these: read them as what to test "
            "next, not as findings.", "", _wide(diffs, cells), ""]
