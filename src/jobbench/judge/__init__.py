"""jobbench.judge (see the README for the pipeline)."""
