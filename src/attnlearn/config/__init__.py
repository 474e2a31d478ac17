"""The workflow's config: a file read (``files``: a YAML error or a wrong key named by file and
line), checked (``checks``: every problem, each naming its key), resolved over the paper's task
defaults (``load``), its runs named (``runs``), and ``python -m attnlearn.config FILE...``, which
checks files as the workflow would (``__main__``). The names the workflow and the programs use
are here."""

from attnlearn.config.files import ConfigError, key_lines, read_config_file
from attnlearn.config.load import TASK_DEFAULTS, canonical, deep_merge, load_config
from attnlearn.config.runs import (ADDITIVE_MEASURES, BLEU_KEYS, STANDARD_ONLY_MEASURES, run_init, run_names,
                                   run_probe_settings, stack_groups)

__all__ = ["ADDITIVE_MEASURES", "BLEU_KEYS", "STANDARD_ONLY_MEASURES", "TASK_DEFAULTS", "ConfigError", "canonical", "deep_merge",
           "key_lines", "load_config", "read_config_file", "run_init", "run_names", "run_probe_settings", "stack_groups"]
