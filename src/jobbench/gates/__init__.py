"""jobbench.gates (see the README for the pipeline)."""
