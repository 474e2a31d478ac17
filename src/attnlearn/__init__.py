"""attnlearn: the library behind the attention-learning pipeline.

Modules are small and named for what they do; the Snakemake rules call them
through thin scripts in ``workflow/scripts``.
"""

__version__ = "0.1.0"
