"""jobbench.runner (see the README for the pipeline)."""
