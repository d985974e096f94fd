"""The small interface every agent implements, and the records passed to and from it."""

from __future__ import annotations

import json
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..records import Usage
from ..sandbox import Mount, Sandbox, SandboxResult, TrialWorkspace
from ..tasks import Task


class InfraError(RuntimeError):
    """An infrastructure failure during an agent run (model API unreachable, rate limited
    past retries, sandbox set-up failure). The trial is recorded as ``infra_error``; it is
    never scored as the agent's failure.

    Args:
        message: what failed, with the server's own text when there is one.
        permanent: the same request will fail the same way (a deterministic rejection: a
            wrong base URL, a bad key, an unknown model, a request body the server
            refuses); the trial is not retried within the invocation and the message says
            what to change. False (default): transient, retried with backoff.
        cause: a short cause (``not_found``, ``auth``, ``model``, ``validation``,
            ``no_answer``, ``connection``, ``zero_tokens``, …), recorded in
            ``details.infra_cause``.
    """

    def __init__(self, message: str, *, permanent: bool = False, cause: str | None = None):
        super().__init__(message)
        self.permanent = permanent
        self.cause = cause


class ModelSettings(BaseModel):
    """Model settings passed through to every agent that accepts them and recorded in
    ``lock.json`` and each ``trial.json``.

    Attributes:
        temperature: sampling temperature, or None for the model's default.
        reasoning_effort: e.g. ``low``, ``medium``, ``high``, ``xhigh`` (the paper's sweep
            compares ``low`` and ``xhigh``), or None.
        max_output_tokens: cap on tokens per model response, or None.
        extra: further provider parameters (builtin: merged into the request body; CLI
            agents: ignored unless the adapter documents a use).
    """

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    reasoning_effort: str | None = None
    max_output_tokens: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        """Only the fields that are set (what was actually requested)."""
        return self.model_dump(exclude_none=True, exclude={"extra"} if not self.extra else set())


class Pricing(BaseModel):
    """Prices in US dollars per million tokens, used to compute cost when the agent's own
    stream does not report it."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None

    def cost(self, usage: Usage) -> float:
        """Dollar cost of ``usage`` (cached input at the cached price when given)."""
        cached = usage.cached_input_tokens if self.cached_input_per_mtok is not None else 0
        fresh = usage.input_tokens - cached
        return (
            fresh * self.input_per_mtok
            + cached * (self.cached_input_per_mtok or 0.0)
            + usage.output_tokens * self.output_per_mtok
        ) / 1e6


class AgentLimits(BaseModel):
    """Budget of one trial.

    Attributes:
        timeout: wall-clock seconds for the whole agent run (agent_timeout past it).
        max_turns: model calls (builtin) or the CLI's own turn limit when it has one; None =
            no cap (the published Claude Code runner's setting; the builtin agent then stops
            only on its other budgets).
        max_total_tokens: input + output tokens over the run (builtin), or None.
        max_cost_usd: dollars over the run (builtin; needs a known price), or None.
        command_timeout: seconds per tool command of the builtin agent.
        memory_mb: address-space limit of sandboxed commands (None for CLI agents, whose
            runtimes reserve large virtual ranges).
        max_processes: processes of the sandbox user.
    """

    timeout: float = 3600.0
    max_turns: int | None = 100
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    command_timeout: float = 600.0
    memory_mb: int | None = 4096
    max_processes: int = 512


class Endpoint(BaseModel):
    """An OpenAI-compatible endpoint. The key is never written to disk."""

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True)


class Trajectory:
    """Append-only JSONL event log of one trial (``trajectory.jsonl``).

    Each event is a JSON object with ``type`` and ``t`` (seconds since the trial started).
    Lines are flushed as written (a killed run keeps every complete line) and fsynced on
    :meth:`close`. Thread-safe.
    """

    def __init__(self, path: Path, *, max_bytes: int = 200 * 1024 * 1024) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._bytes = 0
        self._max = max_bytes
        self._dropped = 0
        self.events = 0

    def emit(self, type: str, **fields: Any) -> None:
        """Append one event; events past ``max_bytes`` are counted but not written."""
        event = {"type": type, "t": round(time.monotonic() - self._t0, 3), **fields}
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._f.closed:
                return
            if self._bytes + len(line) > self._max:
                self._dropped += 1
                return
            self._f.write(line)
            self._f.flush()
            self._bytes += len(line)
            self.events += 1

    def command_result(self, res: SandboxResult) -> None:
        """Append the ``command_result`` event of one sandboxed command: exit code, time-out,
        the last 20,000 characters of stdout and stderr, wall seconds."""
        self.emit(
            "command_result",
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            stdout=res.stdout[-20000:],
            stderr=res.stderr[-20000:],
            seconds=round(res.wall_seconds, 3),
        )

    def close(self) -> None:
        """Flush, fsync and close (idempotent)."""
        with self._lock:
            if self._f.closed:
                return
            if self._dropped:
                self._f.write(
                    json.dumps({"type": "trajectory_truncated", "dropped_events": self._dropped})
                    + "\n"
                )
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


SandboxFactory = Callable[..., Sandbox]


@dataclass
class AgentContext:
    """Everything an agent gets for one trial.

    Attributes:
        task: the task (agents that are harness code may read ``solution_dir`` or
            ``search_dir``; the model never sees those paths).
        workspace: the trial's scratch area (host paths).
        make_sandbox: ``make_sandbox(network=bool, mounts=[Mount], limits_memory=...)``
            returns a :class:`Sandbox` for this trial's workspace.
        prompt: the standard prompt with the paths the agent sees.
        model: model name, or None.
        settings: model settings.
        limits: the trial budget.
        trajectory: event log.
        cancel: set when the run is being interrupted; stop promptly.
        endpoint: OpenAI-compatible endpoint (builtin agent), or None.
        pricing: prices for cost accounting, or None.
        protocol: the run protocol, ``jobbench`` or ``public`` (see
            :mod:`jobbench.agents._protocol`): which published runner settings apply.
        attempt: 1-based attempt of the agent within the trial (the published OpenCode
            runner retries once after a timeout).
    """

    task: Task
    workspace: TrialWorkspace
    make_sandbox: SandboxFactory
    prompt: str
    model: str | None
    settings: ModelSettings
    limits: AgentLimits
    trajectory: Trajectory
    cancel: threading.Event = field(default_factory=threading.Event)
    endpoint: Endpoint | None = None
    pricing: Pricing | None = None
    protocol: str = "jobbench"
    attempt: int = 1

    def price(self, usage: Usage) -> None:
        """Set ``usage.cost_usd`` from :attr:`pricing` when the agent's own stream reported
        no cost and some tokens were used (in place; nothing without a price)."""
        if (
            usage.cost_usd is None
            and self.pricing is not None
            and (usage.input_tokens or usage.output_tokens)
        ):
            usage.cost_usd = self.pricing.cost(usage)


AgentStatus = Literal["ok", "agent_error", "agent_timeout", "infra_error"]


@dataclass
class AgentResult:
    """What the agent reports back; the runner adds deliverables and the final status
    (``no_deliverable`` when an ``ok`` run left nothing in ``output/``).

    Attributes:
        status: ``ok``, ``agent_error``, ``agent_timeout`` (time or another budget ran
            out; ``error`` names which) or ``infra_error``.
        error: message for non-ok statuses.
        turns: model calls, when known.
        usage: token usage and cost, when known.
        session_id: the CLI's session/thread id, when reported.
        details: extra facts (exit code, stop reason, limit hit, ...).
    """

    status: AgentStatus = "ok"
    error: str | None = None
    turns: int | None = None
    usage: Usage = field(default_factory=Usage)
    session_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


class Agent(ABC):
    """An agent behind one small interface: :meth:`run` does the task in the trial's
    workspace and returns an :class:`AgentResult`.

    Class attributes:
        name: the ``--agent`` name.
        needs_model: True when a ``--model`` is required.
        takes_model: True when a model is optional (``command:CMD``): each ``--model``
            gives one configuration; without any the agent runs with no model.
        uses_network: True when the agent's own process needs the network (CLI agents
            calling their model API); tool commands of the builtin agent never have it.
    """

    name: ClassVar[str]
    needs_model: ClassVar[bool] = False
    takes_model: ClassVar[bool] = False
    uses_network: ClassVar[bool] = False

    @abstractmethod
    def run(self, ctx: AgentContext) -> AgentResult:
        """Run the agent once. Raise :class:`InfraError` for infrastructure failures."""

    def describe(self) -> dict[str, Any]:
        """Configuration facts recorded in ``lock.json`` (never secrets)."""
        return {}

    def preflight_targets(self, model: str | None, endpoint: Endpoint | None) -> list[Any]:
        """The model endpoints this agent will call with ``model``, as
        :class:`jobbench.endpoint.PreflightTarget` items (``jobbench run`` makes one cheap
        request to each distinct one before the first trial). Default: none (agents
        without a model API)."""
        return []


__all__ = [
    "Agent",
    "AgentContext",
    "AgentLimits",
    "AgentResult",
    "Endpoint",
    "InfraError",
    "ModelSettings",
    "Mount",
    "Pricing",
    "Trajectory",
]
