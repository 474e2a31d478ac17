"""What a job costs, estimated in one place: ``jobs`` (a job's seconds from its sizes and a
rate, and a config's jobs added up), ``rates`` (the measured GPU rates, gpu_rates.tsv, read and
picked) and ``time_left`` (a running workflow's jobs priced from their earlier times). The
preflight, the GPU-hour pricing (rule gpu_hours) and the console's time left all read it.

At the ground floor, below runtime: it imports nothing of the package, so that the console
(runtime/) may read it as well as the stages that time what it prices (probing/timing.py)."""
