"""jobbench.selection (see the README for the pipeline)."""
