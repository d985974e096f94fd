"""Agents behind one small interface (:class:`Agent.run(ctx) -> AgentResult`).

Built in: ``oracle`` (runs the task's ``solution/solve.py``), ``null`` (writes nothing),
``builtin`` (tool-calling agent over any OpenAI-compatible endpoint), and the CLI adapters
``claude-code``, ``codex``, ``opencode`` and ``openclaw``; ``command:CMD`` runs any
executable under a documented contract (:class:`CommandAgent`).

Public API:
    :class:`Agent`, :class:`AgentContext`, :class:`AgentResult`, :class:`AgentLimits`,
    :class:`ModelSettings`, :class:`Pricing`, :class:`Endpoint`, :class:`Trajectory`,
    :class:`InfraError`, :func:`make_agent`, :data:`AGENTS`, :func:`resolve_agent`,
    :func:`available_agents`, :func:`standard_prompt`,
    :func:`prompt_version`, the concrete agents and the CLI event parsers; run protocols
    (:data:`PROTOCOLS`, :data:`PUBLISHED_RUNNERS`, :func:`effective_limits`,
    :func:`attempt_policy`, :func:`protocol_deviations`, :func:`check_protocol` and the
    leaderboard facts, from :mod:`jobbench.agents._protocol`).
"""

from __future__ import annotations

from typing import Any

from ._base import (
    Agent,
    AgentContext,
    AgentLimits,
    AgentResult,
    Endpoint,
    InfraError,
    ModelSettings,
    Pricing,
    Trajectory,
)
from ._builtin import TOOLS, BuiltinAgent, WorkspaceTools
from ._cli_agents import (
    ClaudeCodeAgent,
    ClaudeCodeParser,
    CliAgent,
    CodexAgent,
    CodexParser,
    EventParser,
    OpenCodeAgent,
    OpenCodeParser,
    cli_version,
    install_mounts,
    looks_like_infra,
)
from ._command import CommandAgent
from ._openclaw import OpenClawAgent, OpenClawParser
from ._prompt import PROMPT_VERSION, PUBLIC_PROMPT_VERSION, prompt_version, standard_prompt
from ._protocol import (
    DEFAULT_PROTOCOL,
    LEADERBOARD_JUDGE_MODE,
    LEADERBOARD_JUDGE_MODEL,
    LEADERBOARD_MAIN_TASKS,
    LEADERBOARD_SPLIT,
    PROTOCOLS,
    PUBLISHED_RUNNERS,
    Protocol,
    PublishedRunner,
    attempt_policy,
    check_protocol,
    codex_public_effort,
    effective_limits,
    network_policy,
    protocol_deviations,
)
from ._search import SearchHit, SearchIndex
from ._simple import NullAgent, OracleAgent

AGENTS: dict[str, type[Agent]] = {
    cls.name: cls
    for cls in (
        OracleAgent,
        NullAgent,
        BuiltinAgent,
        ClaudeCodeAgent,
        CodexAgent,
        OpenCodeAgent,
        OpenClawAgent,
    )
}


ENTRY_POINT_GROUP = "jobbench.agents"
"""The ``importlib.metadata`` entry-point group where installed packages register agents:
``[project.entry-points."jobbench.agents"] myagent = "mypkg.agents:MyAgent"``."""


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_agents() -> list[str]:
    """Every agent name :func:`resolve_agent` knows without an import path: the built-in
    ones (:data:`AGENTS`) and those of the ``jobbench.agents`` entry-point group, sorted."""
    return sorted(set(AGENTS) | set(_entry_points()))


def resolve_agent(ref: str) -> type[Agent]:
    """The agent class ``ref`` names, looked up in this order:

    1. a built-in agent name (:data:`AGENTS`: ``oracle``, ``builtin``, ``codex``, …), or
       ``command:CMD`` (:class:`CommandAgent`: any executable, see
       :mod:`jobbench.agents._command`);
    2. a name registered in the ``jobbench.agents`` entry-point group;
    3. ``module:Class`` (``mypkg.agents:MyAgent``): ``Class`` imported from ``module``
       (which must be importable: installed, or on ``sys.path``/``PYTHONPATH``).

    The reference itself is what a run records as the agent (trial ids, ``lock.json``), so
    a resumed run and every worker resolve the same class again.

    Raises:
        KeyError: ``ref`` is none of these (the message lists the known names), or its
            module or class cannot be imported.
        TypeError: what it names is not a subclass of :class:`Agent`.
    """
    if ref in AGENTS:
        return AGENTS[ref]
    if ref.startswith("command:"):
        return CommandAgent
    eps = _entry_points()
    if ref in eps:
        cls = eps[ref].load()
        where = f"entry point {ENTRY_POINT_GROUP}:{ref} ({eps[ref].value})"
    elif ":" in ref:
        from importlib import import_module

        mod_name, _, attr = ref.partition(":")
        try:
            obj: Any = import_module(mod_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise KeyError(
                f"agent {ref!r}: cannot import {attr!r} from {mod_name!r} ({exc})"
            ) from None
        cls, where = obj, f"agent {ref!r}"
    else:
        raise KeyError(
            f"unknown agent {ref!r}; known agents: {', '.join(available_agents())} "
            "(or module:Class)"
        )
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise TypeError(f"{where} is not a subclass of jobbench.agents.Agent")
    return cls


def make_agent(name: str, **options: Any) -> Agent:
    """Instantiate the agent called ``name``.

    Args:
        name: an agent reference as :func:`resolve_agent` takes it.
        options: constructor options (e.g. ``executable=`` for CLI agents); options an
            agent does not take are ignored.

    Raises:
        KeyError: unknown agent (the message lists the known ones).
        TypeError: the reference names something that is not an :class:`Agent` class.
    """
    cls = resolve_agent(name)
    if cls is CommandAgent and name.startswith("command:"):
        options = {**options, "command": name}
    import inspect

    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in options.items() if k in params and v is not None}
    return cls(**kwargs)


__all__ = [
    "AGENTS",
    "ENTRY_POINT_GROUP",
    "available_agents",
    "resolve_agent",
    "Agent",
    "AgentContext",
    "AgentLimits",
    "AgentResult",
    "DEFAULT_PROTOCOL",
    "LEADERBOARD_JUDGE_MODE",
    "LEADERBOARD_JUDGE_MODEL",
    "LEADERBOARD_MAIN_TASKS",
    "LEADERBOARD_SPLIT",
    "PROTOCOLS",
    "PUBLIC_PROMPT_VERSION",
    "PUBLISHED_RUNNERS",
    "Protocol",
    "PublishedRunner",
    "attempt_policy",
    "check_protocol",
    "codex_public_effort",
    "effective_limits",
    "network_policy",
    "prompt_version",
    "protocol_deviations",
    "BuiltinAgent",
    "ClaudeCodeAgent",
    "ClaudeCodeParser",
    "CliAgent",
    "CommandAgent",
    "CodexAgent",
    "CodexParser",
    "Endpoint",
    "EventParser",
    "InfraError",
    "ModelSettings",
    "NullAgent",
    "OpenCodeAgent",
    "OpenCodeParser",
    "OpenClawAgent",
    "OpenClawParser",
    "OracleAgent",
    "PROMPT_VERSION",
    "Pricing",
    "SearchHit",
    "SearchIndex",
    "TOOLS",
    "Trajectory",
    "WorkspaceTools",
    "cli_version",
    "install_mounts",
    "looks_like_infra",
    "make_agent",
    "standard_prompt",
]
