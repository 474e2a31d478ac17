"""Probing every saved checkpoint: the measures over source positions and appendix A.1's optimal attention;
the proxy's probe; what the jobs will cost (cost.py prices training and probing, so it sits above both)."""
