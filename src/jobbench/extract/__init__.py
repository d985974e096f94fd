"""jobbench.extract (see the README for the pipeline)."""
