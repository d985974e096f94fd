"""jobbench.agents (see the README for the pipeline)."""
