"""A standard run that starts from another run's weights (a dataset's `init`): the parts it copies,
the attention it leaves fresh, the errors that name the key, the manifest that says where the run
started, a resume to the same bytes, and the config check and sweep that plan it. The workflow
end (the source an input of the train rule): tests/test_transfer_workflow.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from attnlearn.agreement import transfer as T
from attnlearn.agreement.compare import run_roles
from attnlearn.config import ConfigError, load_config, run_init, run_names
from attnlearn.training.model import build_model, start_from
from attnlearn.training.train import train_run
from attnlearn.training.workdir import list_checkpoints
from conftest import run_params

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())


def _donor_state(task):
    """A donor's weights, moved off its initial values so that a copy is told from a fresh start."""
    donor = build_model(task, run_params("translation", "donor", seed=7))
    with torch.no_grad():
        for p in donor.parameters():
            p.add_(1.0)
    return {k: v.clone() for k, v in donor.state_dict().items()}


def test_every_part_but_the_attention_is_copied(mt_data):
    task, _ = mt_data
    state = _donor_state(task)
    own = build_model(task, run_params("translation")).state_dict()
    model = build_model(task, run_params("translation"))
    parts = start_from(model, state, "all", "donor-s7")
    assert "attn" not in parts and {"embed", "encoder", "decoder", "out"} <= set(parts)
    for k, v in model.state_dict().items():
        want = own[k] if k.startswith("attn.") else state[k]  # the attention keeps the run's own start
        assert torch.equal(v, want), k


def test_named_parts_only_and_errors_that_name_the_key(mt_data):
    task, _ = mt_data
    state = _donor_state(task)
    own = build_model(task, run_params("translation")).state_dict()
    model = build_model(task, run_params("translation"))
    assert start_from(model, state, ["embed", "encoder"], "donor-s7") == ["embed", "encoder"]
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k] if k.split(".")[0] in ("embed", "encoder") else own[k]), k
    with pytest.raises(ValueError, match=r"init.params: \['decodr'\] not among the model's parts"):
        start_from(model, state, ["decodr"], "donor-s7")
    with pytest.raises(ValueError, match=r"init.params: \['attn'\] hold\(s\) only the attention's own weights"):
        start_from(model, state, ["attn", "out"], "donor-s7")
    smaller = {k: v[..., :1] if k == "out.weight" else v for k, v in state.items()}
    with pytest.raises(ValueError, match=r"init.from: the checkpoint of donor-s7 does not fit.*out.weight"):
        start_from(model, smaller, "all", "donor-s7")


def _train(task, table, params, root, **kw):
    train_run(task, table, params, root / "ckpt", root / "log.parquet", root / "work", progress=False, **kw)
    return {step: torch.load(p, weights_only=True) for step, p in list_checkpoints(root / "ckpt")}


def test_the_run_starts_from_the_checkpoint_says_so_and_resumes_to_the_same_bytes(mt_data, tmp_path):
    """Step 0 is the source's weights (attention fresh); the manifest names the source, its step,
    the parts and the checkpoint's hash; a run stopped midway and rerun ends with the bytes of an
    uninterrupted one, which differ from a run without init only where training took them."""
    task, tables = mt_data
    params = {**run_params("translation"), "init": {"run": "donor-s7", "step": 4, "params": "all"}}
    init = lambda: {**params["init"], "state": _donor_state(task), "sha256": "abc"}  # noqa: E731
    whole = _train(task, tables["train"], params, tmp_path / "whole", init=init())
    assert torch.equal(whole[0]["out.weight"], _donor_state(task)["out.weight"])
    manifest = json.loads((tmp_path / "whole/ckpt/manifest.json").read_text())
    assert manifest["init"] == {"run": "donor-s7", "step": 4, "sha256": "abc",
                                "parts": ["embed", "encoder", "decoder", "proj", "combine", "out"]}
    with pytest.raises(SystemExit, match="stopped at step 5"):
        _train(task, tables["train"], params, tmp_path / "cut", init=init(), stop_after=5)
    resumed = _train(task, tables["train"], params, tmp_path / "cut", init=init())
    assert whole.keys() == resumed.keys()
    for step in whole:
        for k in whole[step]:
            assert torch.equal(whole[step][k], resumed[step][k]), (step, k)
    assert json.loads((tmp_path / "cut/ckpt/manifest.json").read_text())["init"] == manifest["init"]
    plain = _train(task, tables["train"], run_params("translation"), tmp_path / "plain")
    assert torch.equal(plain[0]["attn.weight"], whole[0]["attn.weight"])  # the run's own attention start
    assert not torch.equal(plain[0]["out.weight"], whole[0]["out.weight"])
    assert "init" not in json.loads((tmp_path / "plain/ckpt/manifest.json").read_text())


def tiny_mt(**changes) -> dict:
    entry = copy.deepcopy(TINY["datasets"]["tiny_mt"])
    entry.update({"runs": {"standard": [1, 2], "uniform": [1], "frozen": [], "donor": [1, 2]},
                  "init": {"from": "donor", "step": 10}, **changes})
    return {"device": "cpu", "datasets": {"tiny_mt": entry}}


def test_the_runs_and_where_each_starts():
    config = load_config(tiny_mt(), SCHEMA, warn=lambda m: None)
    d = config["datasets"]["tiny_mt"]
    assert run_names(d) == ["standard-s1", "standard-s2", "uniform-s1", "donor-s1", "donor-s2"]
    assert run_init(d, "standard-s2") == {"run": "donor-s2", "step": 10, "params": "all"}
    assert run_init(d, "uniform-s1") is None and run_init(d, "donor-s1") is None
    assert run_roles(run_names(d)) == {"standard-s1": "A", "standard-s2": "B", "uniform-s1": "U"}


@pytest.mark.parametrize("changes, said", [
    ({"runs": {"standard": [1, 2], "uniform": [1], "donor": [1]}},
     "datasets.tiny_mt.init.from: standard run(s) standard-s2 would start from donor-s2, which this dataset "
     "does not train: add [2] to runs.donor"),
    ({"init": {"from": "donor", "step": 7}}, "datasets.tiny_mt.init.step: 7 is not a step the donor runs save"),
    ({"init": {"from": "standard", "step": 10}}, "datasets.tiny_mt.init.from: 'standard' is not one of"),
    ({"init": {"from": "donor", "step": 10, "params": []}}, "datasets.tiny_mt.init.params"),
])
def test_an_init_that_does_not_fit_is_named(changes, said):
    with pytest.raises(ConfigError) as e:
        load_config(tiny_mt(**changes), SCHEMA, warn=lambda m: None)
    assert said in str(e.value)


def test_a_stack_of_runs_that_start_elsewhere_is_refused():
    config = tiny_mt()
    config["datasets"]["tiny_mt"]["train"]["stack"] = 2
    with pytest.raises(ConfigError, match="datasets.tiny_mt.init: the runs that start from another run's weights "
                                          "train one per job"):
        load_config(config, SCHEMA, warn=lambda m: None)


def test_a_sweep_over_the_transfer_step_gives_each_value_its_donors():
    config = tiny_mt()
    config["sweeps"] = {"dose": {"base": "tiny_mt", "key": "init.step", "values": [0, 10], "replicates": 3}}
    config["only"] = ["dose"]
    resolved = load_config(config, SCHEMA, warn=lambda m: None)
    for name, step in (("dose_0", 0), ("dose_1", 10)):
        d = resolved["datasets"][name]
        assert d["runs"]["donor"] == d["runs"]["standard"] == [1, 2, 3]
        assert run_init(d, "standard-s3") == {"run": "donor-s3", "step": step, "params": "all"}


# -- the response and the per-seed table the plan reads (agreement/transfer.py) ------------------


def test_the_response_is_the_curve_s_time_average_over_the_window():
    steps, values = np.array([0, 25, 50, 100, 250, 500]), np.array([0.0, 0.5, 0.5, 1.0, 1.0, 0.0])
    # trapezoids: 25 * 0.25 + 25 * 0.5 + 50 * 0.75 + 150 * 1.0 = 206.25 over 250 steps
    assert T.time_average(steps, values, 250) == pytest.approx(206.25 / 250)
    with pytest.raises(ValueError, match=r"transfer.window: 300 needs checkpoints at step 0 and at step 300"):
        T.time_average(steps, values, 300)


def _responses(early: dict) -> pd.DataFrame:
    rows = [{"dataset": f"d{dose}{arm}", "arm": arm, "dose": dose, "parts": "all" if arm == "transfer" else "embed",
             "replicate": seed, "seed": seed, "against": against, "early": value, "last": value}
            for (arm, dose, seed, against), value in early.items()]
    return pd.DataFrame(rows, columns=T.RESPONSE_COLUMNS)


def test_per_seed_slopes_read_the_doses_ranks_and_the_control_its_own_dose():
    """Doses 0, 100, 1500 are ranks 0, 1, 2 (the spacing does not weigh); the control is read
    against the transfer at its own dose, seed by seed."""
    early = {}
    for seed, offset in ((1, 0.0), (2, 0.1)):
        for rank, dose in enumerate((0, 100, 1500)):
            early[("transfer", dose, seed, "xi_uniform")] = offset + 0.1 * rank
            early[("transfer", dose, seed, "gold")] = offset - 0.05 * rank
        early[("control", 1500, seed, "xi_uniform")] = offset + 0.05
        early[("control", 1500, seed, "gold")] = offset
    seeds = T.seed_table(_responses(early)).set_index("seed")
    assert seeds.loc[1, "slope_xi"] == pytest.approx(0.1) and seeds.loc[2, "slope_xi"] == pytest.approx(0.1)
    assert seeds.loc[1, "slope_gold"] == pytest.approx(-0.05)
    assert seeds.loc[2, "top_xi"] == pytest.approx(0.3) and seeds.loc[2, "control_xi"] == pytest.approx(0.15)
    pooled = T.pooled(_responses(early))
    row = pooled[(pooled["arm"] == "transfer") & (pooled["dose"] == 1500) & (pooled["against"] == "xi_uniform")
                 & (pooled["what"] == "early")].iloc[0]
    assert row["n"] == 2 and row["mean"] == pytest.approx(0.25)


def test_without_a_control_its_columns_are_missing_not_made_up():
    early = {("transfer", d, 1, a): v for d, v in ((0, 0.1), (500, 0.4)) for a in ("xi_uniform", "gold")}
    seeds = T.seed_table(_responses(early))
    assert seeds["top_xi"].isna().all() and seeds["control_xi"].isna().all()
    assert seeds["slope_xi"].iloc[0] == pytest.approx(0.3)


def test_a_kept_transfer_test_prints_its_verdicts_first(tmp_path, capsys):
    """paper_rows/transfer_tables.py on a kept folder: the confirmatory tests' verdicts lead, then
    the responses per start and the plan's table, recomputed from the kept per-seed rows."""
    from attnlearn.agreement.plans import evaluate, load_plan
    from attnlearn.rows import transfer_tables

    rng = np.random.default_rng(0)
    early = {}
    for seed in range(1, 6):
        for rank, dose in enumerate((0, 100, 500, 1500)):
            for against in ("xi_uniform", "gold"):
                early[("transfer", dose, seed, against)] = 0.2 + 0.1 * rank + rng.normal(0, 0.01)
        for against in ("xi_uniform", "gold"):
            early[("control", 1500, seed, against)] = 0.25 + rng.normal(0, 0.01)
    responses = _responses(early)
    seeds = T.seed_table(responses)
    plan = load_plan(REPO / "docs/plans/transfer_synthetic.yaml")
    kept = evaluate(plan, seeds, confirmatory=True).assign(why="plan committed before the first training")
    responses.to_parquet(tmp_path / "transfer_responses.parquet")
    seeds.to_parquet(tmp_path / "transfer_seeds.parquet")
    kept.to_parquet(tmp_path / "transfer_plan.parquet")
    (tmp_path / "transfer.json").write_text(json.dumps({"sweep": "transfer", "window": 250,
                                                         "plan": "docs/plans/transfer_synthetic.yaml"}))
    assert transfer_tables.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("- **Confirmatory** (`docs/plans/transfer_synthetic.yaml`") and "**holds**" in first
    assert "| transfer | all | 1500 | 5 |" in out and "| control | embed | 1500 | 5 |" in out
    assert "## The plan's tests (confirmatory: plan committed before the first training)" in out


def test_each_start_against_k0_is_paired_by_seed():
    """Seed 1 rises 0.1 and seed 2 rises 0.3 from k = 0 to k = 100: the mean difference is 0.2
    whatever the seeds' levels (each seed is its own baseline)."""
    early = {("transfer", 0, 1, "xi_uniform"): 0.1, ("transfer", 0, 2, "xi_uniform"): 0.6,
             ("transfer", 100, 1, "xi_uniform"): 0.2, ("transfer", 100, 2, "xi_uniform"): 0.9}
    diffs = T.against_k0(_responses(early))
    row = diffs[(diffs["dose"] == 100) & (diffs["what"] == "early")].iloc[0]
    assert row["n"] == 2 and row["mean"] == pytest.approx(0.2) and row["ci_low"] < 0.2 < row["ci_high"]
    assert (diffs["dose"] != 0).all()


def _probe_tables(folder: Path, run: str, peaks: dict[int, int], measure: str, best: int) -> None:
    """A run's probe table (two examples of three tokens; at each step the measure peaks at the
    token ``peaks[step]``) and its performance table (best at step ``best``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"step": step, "example": e, "t": 0, "n": 3,
             "alpha": [0.9 if i == peak else 0.05 for i in range(3)] if measure == "alpha" else None,
             "xi": [0.9 if i == peak else 0.05 for i in range(3)] if measure == "xi" else None}
            for step, peak in peaks.items() for e in (0, 1)]
    pq.write_table(pa.Table.from_pylist(rows), folder / f"{run}.parquet")
    pd.DataFrame({"step": list(peaks), "metric": "accuracy",
                  "value": [1.0 if s == best else 0.5 for s in peaks]}).to_parquet(folder / f"{run}.perf.parquet")


def test_the_reference_reading_puts_each_run_against_every_u_checkpoint(tmp_path, capsys):
    """On SST the k = 0 runs agreed with U's xi at chance at U's best validation step (the plan's
    reference) and at 23% at U's step 200 (Table 2's best of U's steps): the reading prints both.
    Here run A's attention (best at step 10) peaks on token 0; U's xi peaks on token 0 at step 5
    and on token 2 at its best validation step, 20; U lives in the sweep's first value."""
    from attnlearn.rows import transfer_reference

    results = tmp_path / "results"
    for seed in (1, 2):
        _probe_tables(results / "probes/dose_0", f"standard-s{seed}", {0: 1, 10: 0}, "alpha", best=10)
        _probe_tables(results / "probes/dose_0", f"uniform-s{seed}", {5: 0, 20: 2}, "xi", best=20)
    curves = pd.DataFrame([{"dataset": "dose_0", "arm": "transfer", "dose": 0, "parts": "all", "seed": s,
                            "a_run": f"standard-s{s}", "u_run": f"uniform-s{s}"} for s in (1, 2)])
    kept = tmp_path / "kept"
    kept.mkdir()
    curves.to_parquet(kept / "transfer_curves.parquet")
    (kept / "transfer.json").write_text(json.dumps({"sweep": "dose"}))
    assert transfer_reference.main([str(kept), "--results", str(results), "--steps", "5"]) == 0
    ref = pd.read_parquet(kept / "transfer_reference.parquet")
    assert ref["a_step"].eq(10).all() and ref.loc[ref["u_best"], "u_step"].eq(20).all()
    assert ref.set_index(["seed", "u_step"])["value"].to_dict() == {(1, 5): 1.0, (1, 20): 0.0, (2, 5): 1.0, (2, 20): 0.0}
    out = capsys.readouterr().out
    assert "| transfer | all | 0 | 2 | 0.0 [0.0, 0.0] | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | 5, 5 |" in out
    # the same read seed by seed: U's step 5 minus its best validation step, 100 points in each seed
    assert "| transfer | all | 0 | 2 | -33.3 [-33.3, -33.3] | +100.0 [+100.0, +100.0] | +100.0 [+100.0, +100.0] |" in out
    assert transfer_reference.main([str(kept), "--steps", "5"]) == 0  # printed again from the kept table
    assert capsys.readouterr().out == out
