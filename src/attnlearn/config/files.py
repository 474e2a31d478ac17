"""A config file read, and where in it a key is set: a YAML error named by file, line and
column (Snakemake names neither), and each key's line, which the errors of a wrong key or value
name (``config.yaml:23: datasets.tiny_mt.train: ...``)."""

from __future__ import annotations

from pathlib import Path

import yaml


class ConfigError(ValueError):
    pass


def read_config_file(path) -> dict:
    """A YAML config file as a dict. A syntax error names the file, line and column; an empty
    file, or one whose top level is not a mapping, is refused naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file ({e})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = "; ".join(filter(None, [getattr(e, "context", None), getattr(e, "problem", None)])) or str(e)
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty (or only comments); it needs at least 'datasets:'")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config's top level must be keys (datasets:, device:, ...), "
                          f"not a {type(data).__name__}")
    return data


def key_lines(path) -> dict[tuple, int]:
    """Each key's (and list item's) 1-based line in a YAML file: ('datasets', 'tiny_mt', 'train')
    -> 23. Empty where the file cannot be read or parsed (read_config_file names that fault)."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    lines = {}

    def walk(node, prefix):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                k = key.value
                if isinstance(key, yaml.ScalarNode) and key.tag.endswith(":int"):
                    k = int(k)
                lines[(*prefix, k)] = key.start_mark.line + 1
                walk(value, (*prefix, k))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*prefix, i)] = item.start_mark.line + 1
                walk(item, (*prefix, i))

    if root is not None:
        lines[()] = root.start_mark.line + 1
        walk(root, ())
    return lines


def locate(path: tuple, files: list, cli: dict, override: dict) -> str:
    """Where a key was set: 'FILE:LINE' of the last config file that sets it (Snakemake merges
    several --configfile in order), '--config' where the command line set it, else the line of
    its nearest enclosing key that a file sets (a value from the task's defaults is wrong
    because of a key the dataset set beside it)."""
    def given(tree, keys):
        for k in keys:
            if not isinstance(tree, dict) or k not in tree:
                return False
            tree = tree[k]
        return True

    candidates = [path]
    if len(path) > 2 and path[0] == "datasets" and given(override, path[2:]):
        candidates.insert(0, ("override", *path[2:]))  # the value came from override, which wins
    for keys in candidates:
        if given(cli, keys):
            return "--config"
        for name, lines in reversed(files):
            if keys in lines:
                return f"{name}:{lines[keys]}"
    for n in range(len(path) - 1, 0, -1):
        for name, lines in reversed(files):
            if path[:n] in lines:
                return f"{name}:{lines[path[:n]]}"
    return files[-1][0] if files else "--config"
