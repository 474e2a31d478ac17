"""python -m attnlearn.config FILE...: the command line that checks config files."""

from __future__ import annotations

import sys
from pathlib import Path

from attnlearn.config.files import ConfigError, read_config_file
from attnlearn.config.load import load_config


def main(argv=None) -> int:
    """python -m attnlearn.config FILE...: check config files as the workflow would, naming the
    file, line and column of a YAML error (Snakemake reads a --configfile before the workflow
    starts and names neither) and the key of a schema error."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m attnlearn.config", description=main.__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--schema", default=Path(__file__).resolve().parents[3] / "config" / "schema.yaml")
    args = ap.parse_args(argv)
    failed = 0
    for path in args.files:
        try:
            config = load_config(read_config_file(path), args.schema, source=path)
            print(f"{path}: valid ({len(config['datasets'])} datasets)")
        except ConfigError as e:
            print(e, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
