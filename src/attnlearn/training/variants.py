"""The training variants and seeding modes by name, without torch: the workflow reads them
when it parses the Snakefile (the run-name pattern, the config check), where importing torch
would cost every Snakemake start about a second."""

VARIANTS = ("standard", "uniform", "frozen", "tanhmax", "additive", "donor")
# tanhmax: a standard run whose attention uses TanhMax whatever model.activation says
# (docs/methods.md 11), so one dataset compares softmax and TanhMax on the same data.
# additive: a standard run with appendix A.1's additive output layer (eq. 31) whatever
# model.readout says, whose optimal attention the probe computes (optimal.py).
# donor: a uniform-attention run trained only to be the start of standard runs (a dataset's
# `init`); its seed is its own (training/model.py run_seed), so the standard run that starts from
# donor-sN shares nothing with uniform-sN, the run its agreement is read against.
VARIANT_MODEL = {"tanhmax": {"activation": "tanhmax"}, "additive": {"readout": "additive"}}
UNIFORM_ATTENTION = ("uniform", "donor")  # the variants whose attention is uniform
SEEDING = ("independent", "shared")
