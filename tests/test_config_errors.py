"""A config with several mistakes is told all of them at once, each with its file and line (a
config with `trian` in four datasets and `hiden` in one was once refused one dataset per run,
without line numbers)."""

from pathlib import Path

import pytest
import yaml

from attnlearn.config import ConfigError, key_lines, load_config
from attnlearn.runtime.console import Console

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
TINY = REPO / "tests" / "configs" / "tiny.yaml"


def line_of(text: str, needle: str, after: str = "") -> int:
    """The 1-based line of the first ``needle`` after the first ``after``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


def test_every_error_at_once_with_its_file_and_line(tmp_path):
    text = TINY.read_text()
    # the sequence: `trian` in four datasets, `hiden` in one, and a semantic error beside them
    text = text.replace("    train:\n", "    trian:\n")
    text = text.replace("    model: {hidden: 8, dropout: 0.0}", "    model: {hiden: 8, dropout: 0.0}", 1)
    text = text.replace("    model: {embed: 8, hidden: 8, att_hidden: 8}",
                        "    model: {embed: 8, hidden: 8, att_hidden: 8, heads: 2}")
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(yaml.safe_load(text), SCHEMA, source=str(path), files=[path])
    lines = str(e.value).splitlines()
    assert lines[0] == f"invalid config ({path}): 6 errors"
    trian = [i + 1 for i, line in enumerate(text.splitlines()) if line == "    trian:"]
    for n, name in zip(trian, ["tiny_mt", "tiny_cls", "tiny_tf", "tiny_mh"], strict=True):
        assert f"{path}:{n}: datasets.{name}: unknown key 'trian' (did you mean 'train'?)" in lines
    assert (f"{path}:{line_of(text, 'hiden')}: datasets.tiny_mt.model: unknown key 'hiden' (did you mean "
            "'hidden'?)") in lines
    assert (f"{path}:{line_of(text, 'heads: 2}')}: datasets.tiny_cls.model: ['heads'] apply to translation "
            "models only") in lines
    numbers = [int(line.split(":")[1]) for line in lines[1:]]  # in the file's order, top to bottom
    assert numbers == sorted(numbers)


def test_a_value_the_command_line_or_override_set_is_named_so(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(TINY.read_text())
    config = yaml.safe_load(TINY.read_text())
    config["device"] = "tpu"
    config["override"] = {"train": {"lr": -1}}
    with pytest.raises(ConfigError) as e:
        load_config(config, SCHEMA, source=str(path), files=[path], cli={"device": "tpu", "override": "x"})
    lines = str(e.value).splitlines()
    assert lines[1].startswith("--config: device: 'tpu' is not one of")
    # the override's value is wrong in every dataset: each names the command line that set it
    assert sum(line.startswith("--config: datasets.") and ".train.lr: -1 is less than" in line
               for line in lines) == 4


def test_a_key_from_a_later_configfile_names_that_file(tmp_path):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(TINY.read_text())
    second.write_text("datasets:\n  tiny_cls:\n    model:\n      hiden: 3\n")
    config = yaml.safe_load(first.read_text())
    config["datasets"]["tiny_cls"]["model"]["hiden"] = 3
    with pytest.raises(ConfigError) as e:
        load_config(config, SCHEMA, source=f"{first}, {second}", files=[first, second])
    assert f"{second}:4: datasets.tiny_cls.model: unknown key 'hiden' (did you mean 'hidden'?)" in str(e.value)


def test_key_lines():
    lines = key_lines(TINY)
    text = TINY.read_text()
    assert lines[("datasets", "tiny_mt", "train", "steps")] == line_of(text, "steps: 20", after="tiny_mt:")
    assert lines[("datasets", "tiny_cls")] == line_of(text, "tiny_cls:")


def test_the_console_prints_a_config_error_without_snakemake_s_header_and_traceback():
    msg = ('ConfigError in file "/x/rules/common.smk", line 20:\ninvalid config (c.yaml): 2 errors\n'
           "c.yaml:3: datasets.a: unknown key 'trian' (did you mean 'train'?)\nc.yaml:9: datasets.b: x\n"
           '  File "/x/rules/common.smk", line 20, in <module>\n  File "/x/config.py", line 3, in load_config')
    for dryrun in (False, True):
        assert Console(dryrun=dryrun).record({"event": "error", "exception": "ConfigError", "msg": msg}) == [
            "invalid config (c.yaml): 2 errors", "c.yaml:3: datasets.a: unknown key 'trian' (did you mean 'train'?)",
            "c.yaml:9: datasets.b: x"]
