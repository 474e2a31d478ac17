"""A cluster profile given with ``--profile`` is refused, with the command that uses it as meant.

Snakemake always reads the workflow's own profile (profiles/default: the local settings) unless
``--workflow-profile`` names another, and it reads it over a ``--profile``. So
``--profile profiles/slurm`` silently mixed the two: CPU jobs got profiles/default's
``default-resources`` (mem_mb 1000, no runtime, no cpus_per_task) in place of the SLURM ones
(4000 / 60 / 1), and its ``gpu: 8`` capped the cluster's GPU jobs. The console's only hint was
"Using profiles profiles/slurm and workflow specific profile profiles/default". A cluster
profile is a workflow profile here (docs/slurm.md): ``--workflow-profile profiles/slurm``.
"""

from __future__ import annotations

import os
import shlex


class ProfileError(ValueError):
    pass


def _given(argv: list[str], flag: str) -> list[tuple[int, str]]:
    """(position, value) of each ``flag VALUE`` or ``flag=VALUE`` in ``argv``."""
    found = []
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            found.append((i, argv[i + 1]))
        elif arg.startswith(flag + "="):
            found.append((i, arg.split("=", 1)[1]))
    return found


def profile_executor(profile: str, places: list[str]) -> str | None:
    """The executor a profile sets (its config.yaml's ``executor``), looking for the folder as
    given, then under each of ``places`` (the folders a relative path may be relative to);
    None where no such profile is found or it sets none."""
    import yaml

    for base in ["", *places]:
        folder = os.path.join(base, profile) if base else profile
        for name in ("config.v9+.yaml", "config.v8+.yaml", "config.yaml"):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                try:
                    settings = yaml.safe_load(open(path, encoding="utf-8")) or {}
                except (OSError, yaml.YAMLError):
                    return None
                return settings.get("executor") if isinstance(settings, dict) else None
    return None


def profile_mix(argv: list[str], env: dict, places: list[str]) -> str | None:
    """The refusal for a run whose cluster profile (one that sets an executor other than the
    local one) came with ``--profile`` (or $SNAKEMAKE_PROFILE) while the workflow's own profile
    still applies (no ``--workflow-profile``); None where the run is not such a run. ``places``:
    where a relative profile path may lead (the folder Snakemake was started in, ...)."""
    if _given(argv, "--workflow-profile"):
        return None
    given = _given(argv, "--profile")
    profile = given[-1][1] if given else env.get("SNAKEMAKE_PROFILE")
    if not profile or profile_executor(profile, places) in (None, "local", "dryrun", "touch"):
        return None
    args = list(argv[1:])
    if given:  # the same command with the flag renamed
        at = given[-1][0] - 1
        args[at] = args[at].replace("--profile", "--workflow-profile", 1)
    else:
        args = ["--workflow-profile", profile, *args]
    command = " ".join(["snakemake", *map(shlex.quote, args)])
    return (f"--profile {profile}: Snakemake also reads this workflow's own profile, profiles/default (the "
            "local settings), over it, so its default-resources (mem_mb 1000, no runtime or cpus_per_task) and "
            f"gpu: 8 would replace the cluster's. A cluster profile is the workflow profile here (docs/slurm.md); "
            f"run instead:\n  {command}")


def refuse_profile_mix(workflow, argv: list[str] | None = None, env: dict | None = None) -> None:
    """Raise ProfileError where ``profile_mix`` refuses this Snakemake's run (its main process:
    the cluster's jobs read no profile), dry runs included."""
    import sys

    if not workflow.is_main_process:
        return
    env = dict(os.environ if env is None else env)
    # a relative --profile is relative to where Snakemake was started: the shell's $PWD (Snakemake
    # may have moved to the -d folder by now), else here, else the workflow's folder
    places = [p for p in (env.get("PWD"), os.getcwd(), workflow.basedir) if p]
    message = profile_mix(list(sys.argv if argv is None else argv), env, places)
    if message:
        raise ProfileError(message)
