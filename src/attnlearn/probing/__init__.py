"""Probing every saved checkpoint: the measures over source positions and appendix A.1's optimal attention."""
