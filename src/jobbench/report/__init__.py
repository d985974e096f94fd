"""jobbench.report (see the README for the pipeline)."""
