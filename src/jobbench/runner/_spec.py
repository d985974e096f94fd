"""Agent configurations of a run (:class:`AgentSpec`).

Trial ids and every name inside a run directory belong to :mod:`jobbench.rundir`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
            agent=self.agent,
            model=self.model or NO_MODEL,
            settings=self.settings.as_record(),
        )


DEFAULT_SPLIT = "main"
"""The split a run covers when neither a dataset nor splits are given (the bundled sample
holds ``main`` and ``easy``)."""
DEFAULT_AGENTS = ("oracle", "null")


class AgentSpecError(ValueError):
    """An agent reference that cannot be used: unknown, not an agent class, or needing a
    model that was not given. ``option`` names the CLI option to blame."""

    def __init__(self, message: str, option: str = "--agent") -> None:
        super().__init__(message)
        self.option = option


def agent_specs(
    agents: Sequence[str] | None,
    models: Sequence[str] | None = None,
    settings: ModelSettings | None = None,
    options: dict[str, dict[str, Any]] | None = None,
) -> list[AgentSpec]:
    """Agent configurations from agent references and models (``--agent``/``--model``).

    Each reference is ``REF`` or ``REF@MODEL``, REF as :func:`jobbench.agents.resolve_agent`
    takes it (a built-in name, an entry-point name, or ``module:Class``). ``REF@MODEL`` fixes
    the model; an agent that needs a model (``needs_model``) or takes an optional one
    (``takes_model``: ``command:CMD``) and has none gets one configuration per entry of
    ``models`` (an optional-model agent runs once without a model when ``models`` is empty);
    other agents ignore ``models`` and the model settings.

    Args:
        agents: references (default: ``oracle`` and ``null``).
        models: models for agents that need one.
        settings: model settings (default none).
        options: agent reference → constructor options.

    Raises:
        AgentSpecError: unknown agent, not an agent class, or a model-needing agent without
            any model.
    """
    from ..agents import resolve_agent

    settings = settings or ModelSettings()
    specs = []
    for a in agents or DEFAULT_AGENTS:
        name, _, model = a.partition("@")
        try:
            cls = resolve_agent(name)
        except (KeyError, TypeError) as exc:
            raise AgentSpecError(str(exc.args[0] if exc.args else exc)) from None
        # options given for "command" apply to every command:CMD agent
        key = "command" if name.startswith("command:") and name not in (options or {}) else name
        opts = dict((options or {}).get(key, {}))
        if model:
            chosen = settings if cls.needs_model or cls.takes_model else ModelSettings()
            specs.append(AgentSpec(name, model, chosen, opts))
        elif cls.needs_model or (cls.takes_model and models):
            if not models:
                raise AgentSpecError(
                    f"agent {name} needs --model (or --agent {name}@MODEL)", "--model"
                )
            specs += [AgentSpec(name, m, settings, opts) for m in models]
        else:
            specs.append(AgentSpec(name, None, ModelSettings(), opts))
    return specs


def default_run_name(
    dataset_root: Path,
    specs: Sequence[AgentSpec],
    splits: list[str] | None = None,
    protocol: str = "jobbench",
) -> str:
    """Deterministic run name: ``<dataset dir>[-<split+…>]-<agent@model+…>`` plus a short
    hash of the model settings when any is set, and ``-public`` under the public protocol, so
    the same command resumes the same run (and runs of different splits, e.g.
    ``sample-main-…`` and ``sample-easy-…``, or of the two protocols get different run
    directories). Characters outside ``[A-Za-z0-9._@+-]`` (e.g. the ``:`` of
    ``module:Class``) become ``_``."""
    import hashlib
    import json
    import re

    from ..rundir import safe_name

    labels = "+".join(s.agent if not s.model else f"{s.agent}@{s.model}" for s in specs)
    chosen = "+".join(dict.fromkeys(splits or []))
    name = f"{safe_name(dataset_root.name)}-" + (f"{chosen}-" if chosen else "") + labels
    settings = [s.settings.as_record() for s in specs if s.settings.as_record()]
    if settings:
        name += "-" + hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
    if protocol != "jobbench":
        name += f"-{protocol}"
    name = re.sub(r"[^A-Za-z0-9._@+-]", "_", name)
    if len(name) > 100:
        name = name[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()[:10]
    return name
