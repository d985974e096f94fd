"""Agent configurations of a run (:class:`AgentSpec`).

Trial ids and every name inside a run directory belong to :mod:`jobbench.rundir`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..agents import ModelSettings
from ..rundir import NO_MODEL, LockAgent, config_label


@dataclass
class AgentSpec:
    """One agent configuration of a run.

    Attributes:
        agent: agent name (see :data:`jobbench.agents.AGENTS`).
        model: model name or None.
        settings: model settings passed through and recorded.
        options: constructor options of the agent (e.g. CLI executable); recorded.
    """

    agent: str
    model: str | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return config_label(self.agent, self.model)

    def lock_entry(self) -> LockAgent:
        """The configuration as ``lock.json`` records it."""
        return LockAgent(
            agent=self.agent, model=self.model or NO_MODEL, settings=self.settings.as_record()
        )
