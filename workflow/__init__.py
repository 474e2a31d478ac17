"""The workflow's own Python beside its Snakefile (own_code.py). A package, not a bare folder:
Snakemake puts the Snakefile's folder first on sys.path, and a regular package there is found
before any other ``workflow`` on the path (a namespace package would yield to one)."""
