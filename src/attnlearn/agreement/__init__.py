"""Agreement and what is read from it: the metric (paper eq. 10), which measures are compared, Table 2 and its replicates, the paper's claims and values."""
