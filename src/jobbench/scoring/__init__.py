"""jobbench.scoring (see the README for the pipeline)."""
