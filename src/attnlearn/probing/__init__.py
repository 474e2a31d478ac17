"""Probing every saved checkpoint: the measures over source positions and appendix A.1's optimal attention;
the proxy's probe; how long a training step and a probe take (timing.py, which the cost estimate
of attnlearn/cost/ reads)."""
