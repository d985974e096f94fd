"""Agents behind one small interface (:class:`Agent.run(ctx) -> AgentResult`).

Built in: ``oracle`` (runs the task's ``solution/solve.py``), ``null`` (writes nothing),
``builtin`` (tool-calling agent over any OpenAI-compatible endpoint), and the CLI adapters
``claude-code``, ``codex``, ``opencode`` and ``openclaw``.

Public API:
    :class:`Agent`, :class:`AgentContext`, :class:`AgentResult`, :class:`AgentLimits`,
    :class:`ModelSettings`, :class:`Pricing`, :class:`Endpoint`, :class:`Trajectory`,
    :class:`InfraError`, :func:`make_agent`, :data:`AGENTS`, :func:`standard_prompt`,
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


def make_agent(name: str, **options: Any) -> Agent:
    """Instantiate the agent called ``name``.

    Args:
        name: one of :data:`AGENTS`.
        options: constructor options (e.g. ``executable=`` for CLI agents); options an
            agent does not take are ignored.

    Raises:
        KeyError: unknown agent name (the message lists the known ones).
    """
    try:
        cls = AGENTS[name]
    except KeyError:
        raise KeyError(
            f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}"
        ) from None
    import inspect

    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in options.items() if k in params and v is not None}
    return cls(**kwargs)


__all__ = [
    "AGENTS",
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
