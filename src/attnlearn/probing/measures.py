"""The probe's measures by name, without torch (the config check reads them when the workflow
parses the Snakefile); probes.py registers one function under each name."""

MEASURE_NAMES = ("alpha", "xi", "grad", "optimal", "norm")

# the measures a probe computes at the run's best checkpoints only (probe.at_best's default): the
# tables read g and the norm-based weights at alpha*'s checkpoint alone, and g is most of a
# translation probe's time
AT_BEST = ("grad", "norm")


def split_at_best(measures, at_best) -> tuple[list[str], list[str]]:
    """(the measures computed at every checkpoint, those at the best checkpoints alone), in
    ``measures``' order."""
    return [m for m in measures if m not in at_best], [m for m in measures if m in at_best]
