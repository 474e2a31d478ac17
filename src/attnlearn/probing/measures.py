"""The probe's measures by name, without torch (the config check reads them when the workflow
parses the Snakefile); probes.py registers one function under each name."""

MEASURE_NAMES = ("alpha", "xi", "grad", "optimal", "norm")
