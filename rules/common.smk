# Config validation and the input helpers shared by all rules.

import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from attnlearn.runtime.codedeps import script_modules
from attnlearn.agreement.compare import replicate_design, run_roles
from attnlearn.config import load_config, run_init, run_names, run_probe_settings, stack_groups
from attnlearn.data.download import FileSpec, download_path, refused_downloads, url_filename
from attnlearn.data.prepare import SPLITS
from attnlearn.data.synthetic import GENERATORS
from attnlearn.training.variants import VARIANTS

# config errors name the file(s): those given with --configfile, else the built-in default
CONFIG_FILES = [str(f) for f in workflow.overwrite_configfiles]
CONFIG_SOURCE = ", ".join(CONFIG_FILES) or str(Path(workflow.basedir) / "config" / "config.yaml")
config.update(load_config(config, Path(workflow.basedir) / "config" / "schema.yaml", source=CONFIG_SOURCE,
                          cli=workflow.config_settings.config, files=CONFIG_FILES or [CONFIG_SOURCE]))

DATASETS = list(config["datasets"])
# Said at planning time (dry runs included), not only when the download job fails
for _refused in refused_downloads(config["datasets"], config["allow_unverified_downloads"]):
    print(f"WARNING: {_refused} has no checksum: its download job will refuse it. Add its sha256 "
          "to the config, or run with --config allow_unverified_downloads=True", file=sys.stderr)
ENV = "../envs/attnlearn.yaml"
# For --use-conda: the env file installs the project from ${ATTNLEARN_ROOT}, since Snakemake
# builds it from a copy in .snakemake/conda/, where a path relative to envs/ leads nowhere.
os.environ.setdefault("ATTNLEARN_ROOT", workflow.basedir)
LIB = Path(workflow.basedir) / "src" / "attnlearn"
SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"
MODEL_MODULE = {"translation": "models/seq2seq.py", "classification": "models/classifier.py"}
FAMILY_MODULES = {*MODEL_MODULE.values(), "models/transformer.py"}


# The files that several rules name, each path written once ({dataset}, {run}: the wildcards).
def prepared(split):
    """A dataset's split (train, valid, test) as prepared from its source (rule prepare_data)."""
    return f"results/data/{{dataset}}/{split}.parquet"


def tokenized(split):
    """A dataset's split, tokenized (rule tokenize)."""
    return f"results/tokenized/{{dataset}}/{split}.parquet"


TOKENIZER = "results/tokenized/{dataset}/tokenizer.json"
COUNTS = "results/counts/{dataset}/counts.parquet"
CHECKPOINTS = "results/runs/{dataset}/{run}/checkpoints"
TRAIN_LOG = "results/runs/{dataset}/{run}/train_log.parquet"
AGREEMENT = "results/agreement/{dataset}.parquet"
AGREEMENT_PERF = "results/agreement/{dataset}.perf.parquet"
AGREEMENT_REPLICATES = "results/agreement/{dataset}.replicates.parquet"
AGREEMENT_REPLICATES_KENDALL = "results/agreement/{dataset}.replicates_kendall.parquet"  # appendix A.4
AGREEMENT_REPLICATES_TRAIN = "results/train_split/agreement/{dataset}.replicates.parquet"  # appendix A.4
AGREEMENT_READINGS = "results/agreement/{dataset}.readings.parquet"
TABLE2_TRAIN = "results/tables/table2_train.parquet"


def probe_table(dataset, name, perf=False, split="valid"):
    """A probe table, results/probes/{dataset}/{name}.parquet: of a run (rule probe), a proxy
    (proxy-s{pseed}), the gold links or IBM Model 1; ``perf``: the run's performance table beside
    it; split "train": the tables probed on training examples (results/train_split/probes/)."""
    folder = {"valid": "results/probes", "train": "results/train_split/probes"}[split]
    return f"{folder}/{dataset}/{name}{'.perf' if perf else ''}.parquet"


def run_probes(dataset, *variants, perf=False, split="valid"):
    """The probe tables (``perf``: performance tables) of a dataset's runs of ``variants``."""
    return [probe_table(dataset, r, perf=perf, split=split) for r in variant_runs(dataset, *variants)]


def experiment_table(name):
    """A controlled experiment's table: its rule writes it, its figure and the summary read it."""
    return f"results/tables/{name}.parquet"


def model_module(wildcards):
    """The model family's module: editing it reruns that family's trainings only."""
    d = ds(wildcards)
    if d["model"].get("arch") == "transformer":
        return "models/transformer.py"
    return MODEL_MODULE[d["task"]]


def ds(wildcards):
    return config["datasets"][wildcards.dataset]


def script_code(script):
    """Input function: the library modules the rule's script uses, read from its imports
    (src/attnlearn/runtime/codedeps.py), so editing one reruns exactly the jobs whose code it is.
    A dataset's jobs leave out the other model families' modules: editing a model reruns
    only the datasets of its family."""
    modules = [p.relative_to(LIB).as_posix() for p in script_modules(SCRIPTS / script, LIB)]

    def code(wildcards):
        other = FAMILY_MODULES - {model_module(wildcards)} if "dataset" in wildcards.keys() else set()
        return [str(LIB / m) for m in modules if m not in other]

    return code


def runs(dataset):
    return run_names(config["datasets"][dataset])


def variant_runs(dataset, *variants):
    """A dataset's runs of the given variants ("standard-s1", ...), in run order."""
    return [r for r in runs(dataset) if r.rsplit("-s", 1)[0] in variants]


# The variants whose runs take a role in the comparisons (A, B, U, F, T): all but the
# additive runs, which only the optimal-attention rule reads (rules/optimal.smk), and the donors,
# which only the standard runs that start from them read (their checkpoints; never probed).
ROLE_VARIANTS = tuple(v for v in VARIANTS if v not in ("additive", "donor"))


def run_probe_params(wildcards):
    return run_probe_settings(ds(wildcards)["probe"], wildcards.run.rsplit("-s", 1)[0])


def bleu_texts(wildcards):
    """The probe rule's input function: the prepared validation split, whose target texts (row for
    row with the tokenized one) are BLEU's references where the run's probe scores BLEU against
    text (probe.bleu_references: text); nothing otherwise, so other probes do not wait on it."""
    probe = run_probe_params(wildcards)
    if ds(wildcards)["task"] == "translation" and probe.get("bleu") and probe.get("bleu_references") == "text":
        return {"texts": prepared("valid").format(dataset=wildcards.dataset)}
    return {}


def proxy_probe_params(wildcards):
    return run_probe_settings(ds(wildcards)["probe"], "proxy")


def proxy_seeds(dataset):
    return config["datasets"][dataset]["proxy"]["seeds"]


def proxy_names(dataset):
    """The proxies of a dataset, one per proxy seed in config order: ["proxy-s0", ...]; their
    probes are results/probes/{dataset}/{name}.parquet. Table 2's replicate r uses the r-th."""
    return [f"proxy-s{seed}" for seed in proxy_seeds(dataset)]


def proxy_params(wildcards):
    """Everything that determines one proxy: the dataset's proxy settings with this job's seed
    in place of the seed list, so that adding a seed leaves the other proxies' jobs as they are."""
    settings = {k: v for k, v in ds(wildcards)["proxy"].items() if k != "seeds"}
    return dict(sorted({**settings, "seed": int(wildcards.pseed)}.items()))


def fits_logreg(wildcards):
    """Table 11's logistic regression (classification) does not depend on the proxy seed: the
    first seed's proxy job fits it, the others do not repeat it."""
    return ds(wildcards)["task"] == "classification" and int(wildcards.pseed) == proxy_seeds(wildcards.dataset)[0]


def has_gold(dataset):
    return config["datasets"][dataset]["source"]["kind"] in GENERATORS


def run_params(wildcards):
    """Everything that determines one training run (its checkpoints depend on nothing else)."""
    return params_of_run(wildcards.dataset, wildcards.run)


def params_of_run(dataset, run):
    d = config["datasets"][dataset]
    variant, seed = run.rsplit("-s", 1)
    # train.stack says which job trains the run (rules/train.smk), not what it is; standard runs
    # use their seed whatever train.seeding says: neither reruns them
    drop = {"stack", "seeding"} if variant == "standard" else {"stack"}
    train = {k: v for k, v in d["train"].items() if k not in drop}
    init = run_init(d, run)  # a standard run that starts from another run's checkpoint (`init`)
    return {"name": f"{dataset}/{run}", "task": d["task"], "variant": variant, "seed": int(seed),
            "model": d["model"], "train": train, "device": config["device"], **({"init": init} if init else {})}


def init_source(wildcards):
    """Input function of the train rule: the checkpoint folder of the run this one starts from (a
    change to that run reruns this one), or nothing."""
    init = run_init(ds(wildcards), wildcards.run)
    return {"init": CHECKPOINTS.format(dataset=wildcards.dataset, run=init["run"])} if init else {}


def stack_name(members):
    """A stack's name from its runs: standard-s1, standard-s2 -> standard-s1+2."""
    variant = members[0].rsplit("-s", 1)[0]
    return f"{variant}-s{'+'.join(m.rsplit('-s', 1)[1] for m in members)}"


def stack_params(members):
    """Input function: the run parameters of each member of a stack (rules/train.smk)."""
    return lambda wildcards: [params_of_run(wildcards.dataset, run) for run in members]


def stack_resources(members):
    """A stack job's resources from what the profile sets for `train` (its partition, memory,
    GPU request), its time limit K times one run's (docs/slurm.md): Snakemake's set-resources
    names rules, and a stack's rule is named for its runs."""
    train = dict(workflow.resource_settings.overwrite_resources.get("train", {}))
    out = {k: getattr(v, "raw", v) for k, v in train.items() if k != "gpu"}
    out = {k: int(v) if str(v).isdigit() else str(v) for k, v in out.items()}
    if isinstance(out.get("runtime"), int):
        out["runtime"] *= len(members)
    return out


def uses_gpu(wildcards):
    """1 where the job computes on a GPU (it then claims the `gpu` resource: sbatch --gpus=1 on
    SLURM): device cuda; device auto where jobs run on this machine and it has a GPU. Jobs that
    a cluster runs elsewhere cannot be judged from here (a login node has no GPU): `auto` is
    refused there, asking for cuda or cpu."""
    if config["device"] != "auto":
        return int(config["device"] == "cuda")
    if workflow.non_local_exec and not workflow.remote_exec:
        from snakemake.exceptions import WorkflowError

        raise WorkflowError("device: auto cannot tell on this machine whether the cluster's jobs get a GPU: "
                            "set --config device=cuda (GPU jobs ask the scheduler for a GPU) or device=cpu")
    import torch

    return int(torch.cuda.is_available())


def agreement_inputs(wildcards, split="valid"):
    """A dataset's probe tables and performance (which picks alpha*) of the ``split`` probes:
    the training-split tables take alpha*'s step and their performance columns from the
    training examples, as the appendix does. Gold links and IBM Model 1 exist for the
    validation probes only."""
    d = wildcards.dataset
    inputs = {
        "probes": run_probes(d, *ROLE_VARIANTS, split=split),
        "perf": run_probes(d, *ROLE_VARIANTS, perf=True, split=split),
        # the first proxy seed's probe (the single-draw tables' P) and every seed's, in config order
        "proxy": probe_table(d, proxy_names(d)[0], split=split),
        "proxies": [probe_table(d, p, split=split) for p in proxy_names(d)],
        "code": script_code("agreement.py")(wildcards),
    }
    if split == "valid" and has_gold(d):
        inputs["gold"] = probe_table(d, "gold")
    if split == "valid" and ibm1_enabled(d):
        inputs["ibm1"] = probe_table(d, "ibm1")
    return inputs


TRAIN_SPLIT = config["tables"]["train_split"]


def role_run(dataset, role):
    return next(r for r, ro in run_roles(runs(dataset)).items() if ro == role)


def table2_design(dataset):
    """Table 2's replicates of a dataset (tables.design; src/attnlearn/agreement/compare.py), the
    r-th frozen run replicate r's (Table 10 per replicate)."""
    return replicate_design(variant_runs(dataset, "standard"), variant_runs(dataset, "uniform"),
                            proxy_names(dataset), config["tables"]["design"], config["tables"]["xi_standard"],
                            frozen=variant_runs(dataset, "frozen"))


def xi_b_run(dataset):
    """The B run that A(alpha*, xi^B) reads (tables.xi_standard: first), None for the B runs' mean."""
    return role_run(dataset, "B") if config["tables"]["xi_standard"] == "first" else None


# What every Table 2 job needs of each dataset (rules tables and table2_train)
TABLE2_PARAMS = dict(tasks={d: config["datasets"][d]["task"] for d in DATASETS},
                     xi_b_runs={d: xi_b_run(d) for d in DATASETS})


def figures_all():
    per_dataset = expand("results/figures/{dataset}/{kind}.png", dataset=DATASETS,
                         kind=["contextualized", "agreement_curves", "heatmap"])
    return [*per_dataset, "results/figures/table2_replicates.png"]


def examples_all():
    """Each dataset's examples page and count-table figure (rules/examples.smk)."""
    return expand(["results/report/examples/{dataset}.html", "results/figures/{dataset}/count_table.png"],
                  dataset=DATASETS)


def source_files(wildcards):
    """The files a dataset's parser reads, by name: verified downloads, or local files (`path`)."""
    files = ds(wildcards)["source"].get("files", {})
    return {name: spec["path"] if "path" in spec else download_path(wildcards.dataset, spec)
            for name, spec in files.items()}


def source_params(wildcards):
    """The dataset's source with each download identified by its checksum (see FileSpec)."""
    source = ds(wildcards)["source"]
    return {**source, "files": {k: FileSpec(v) if "url" in v else v for k, v in source.get("files", {}).items()}}


def download_spec(wildcards):
    for spec in ds(wildcards)["source"].get("files", {}).values():
        if "url" in spec and url_filename(spec["url"]) == wildcards.filename:
            return FileSpec(spec)
    raise ValueError(f"no download named {wildcards.filename!r} for dataset {wildcards.dataset!r}")


def uses_glove(wildcards, kind="vectors"):
    """GloVe's word list shapes the vocabulary (tokenizer.glove_vocab, the reference's
    vocabulary); its vectors initialise the model (model.glove)."""
    d = ds(wildcards)
    return bool(d["tokenizer"].get("glove_vocab") if kind == "words" else d["model"].get("glove"))


GLOVE_ZIP = f"data/downloads/glove/{url_filename(config['glove']['url'])}"


def glove_inputs(kind):
    """Input function: the GloVe file a job needs when its dataset uses GloVe, else nothing."""
    path = {"words": "results/glove/words.txt", "vectors": "results/tokenized/{dataset}/glove.npy"}[kind]
    return lambda w: {kind: path.format(dataset=w.dataset)} if uses_glove(w, kind) else {}


# The controlled experiments (rules/experiments.smk): the config section `experiments`
# (absent or null: none); each subsection present adds its jobs.
EXP = config.get("experiments") or {}
EXP_THREADS = EXP.get("threads", 1)
COPY_TASKS = list(EXP["copying"]["tasks"]) if "copying" in EXP else []


def experiment_tables():
    out = []
    if "copying" in EXP:
        out += [experiment_table("copying"), experiment_table("copy_counts")]
    if "multihead" in EXP:
        out += [experiment_table("multihead")]
    if "keyword" in EXP:
        out += [experiment_table("keyword")]
    if "derivative" in EXP:
        out += [experiment_table("derivative")]
    return out


def experiment_figures():
    kinds = {"copying": ["copying", "copy_counts"], "multihead": ["multihead"], "keyword": ["keyword"],
             "derivative": ["derivative"]}
    return [f"results/figures/experiments/{k}.png" for section, ks in kinds.items() if section in EXP for k in ks]


def experiments_all():
    return experiment_tables() + experiment_figures()


def report_pages():
    """The HTML pages of the report made from the Markdown summaries (rules/tables.smk)."""
    pages = ["tables", "analyses"] + (["experiments"] if experiment_tables() else [])
    return [f"results/report/{page}.html" for page in pages]


def ibm1_enabled(dataset):
    return "ibm1" in EXP and config["datasets"][dataset]["task"] == "translation"


# The attention analyses (rules/analyses.smk)
TRANSLATION = [d for d in DATASETS if config["datasets"][d]["task"] == "translation"]
WITH_TANHMAX = [d for d in DATASETS if config["datasets"][d]["runs"].get("tanhmax")]
WITH_ADDITIVE = [d for d in DATASETS if config["datasets"][d]["runs"].get("additive")]


def analysis_runs(dataset):
    """The standard runs the translation analyses cover: every `runs.standard` seed (one job
    per analysis and run), or run A only with `analyses.seeds: first`."""
    standard = variant_runs(dataset, "standard")
    return standard if config["analyses"]["seeds"] == "all" else standard[:1]


def analysis_outputs(name):
    """Every translation dataset's per-run table ``name`` (results/analyses/{dataset}/{run}/)."""
    return [f"results/analyses/{d}/{r}/{name}.parquet" for d in TRANSLATION for r in analysis_runs(d)]


def analysed_run_inputs(wildcards):
    return {"checkpoints": CHECKPOINTS.format(dataset=wildcards.dataset, run=wildcards.run),
            "perf": probe_table(wildcards.dataset, wildcards.run, perf=True)}


ANALYSIS_SETTINGS = {"norms": ("exclude_special",), "effective": ("effective",), "head_roles": ("roles",)}


def analysis_rule_params(name):
    """Each analysis gets only its own settings: changing one reruns only it."""
    keys = ("max_examples", "batch_size", *ANALYSIS_SETTINGS[name])
    return dict(analysis=name, run=run_params, run_role=lambda w: run_roles(runs(w.dataset))[w.run],
                settings={k: config["analyses"][k] for k in keys},
                max_examples=lambda w: ds(w)["probe"]["max_examples"], has_gold=lambda w: has_gold(w.dataset))


# The preflight (rules/preflight.smk)
PREFLIGHT_ESTIMATES = ("train", "probe", "probe_train")  # the jobs whose time it estimates


def runtime_limit(name):
    """Minutes that the run's resources (the profile's set-resources, else its default-resources)
    give rule ``name``; None where none is set or an expression computes it per job."""
    runtime = workflow.get_rule(name).resources.get("runtime")
    if runtime.is_evaluable() or runtime.value is None:
        return None
    return runtime.value


def train_jobs(dataset):
    """The runs of each of a dataset's train jobs: a stack's (train.stack: rules/train.smk) or
    one run's."""
    groups = stack_groups(config["datasets"][dataset])
    stacked = {run for group in groups for run in group}
    return groups + [[run] for run in runs(dataset) if run not in stacked]


def gpu_jobs():
    """Each dataset's training and probing jobs as the rules plan them, for the preflight to
    count and price: the runs of each train job, and how many jobs of each other rule, read
    with the helpers that the rules' inputs use (agreement_inputs, rules/optimal.smk)."""

    def jobs(d):
        probed = run_probes(d, *ROLE_VARIANTS) + (run_probes(d, "additive") if d in WITH_ADDITIVE else [])
        return {"train": [len(members) for members in train_jobs(d)], "probe": len(probed),
                "probe_train": len(run_probes(d, *ROLE_VARIANTS, split="train")) if TRAIN_SPLIT else 0,
                "proxy": len(proxy_names(d)), "proxy_probe_train": len(proxy_names(d)) if TRAIN_SPLIT else 0}

    return {d: jobs(d) for d in DATASETS}


def gpu_sharing():
    """How many GPU jobs share one GPU in this run: the `gpu` resource where the jobs run on
    this machine (profiles/default: 8, or --resources gpu=N); 1 where a cluster gives each job
    a GPU of its own (sbatch --gpus=1, profiles/slurm)."""
    if workflow.non_local_exec and not workflow.remote_exec:
        return 1
    gpu = workflow.global_resources.get("gpu")
    return int(gpu.value) if gpu is not None and gpu.value else 1


def preflight_datasets():
    """The settings that size each dataset's jobs."""
    keys = ("task", "source", "model", "train", "probe", "tokenizer", "runs")  # runs: the config's totals
    return {d: {k: config["datasets"][d][k] for k in keys} for d in DATASETS}
