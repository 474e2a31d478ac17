"""Probing every saved checkpoint: the measures over source positions and appendix A.1's optimal attention;
the proxy's probe; how long a unit of the jobs' work takes (timing.py times training and probing, so it sits
above both; attnlearn.cost multiplies it out)."""
