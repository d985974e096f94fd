"""jobbench.sandbox (see the README for the pipeline)."""
