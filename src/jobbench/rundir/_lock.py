"""``lock.json``: what a run was made of (:class:`RunLock`), and its checks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..records import SCHEMA_VERSION
from ._ids import UnsafeIdError, check_task_id

_PART = ConfigDict(extra="ignore")


class LockAgent(BaseModel):
    """One agent configuration of a run: ``agent`` name, ``model`` (``-`` for none, the real
    name otherwise) and the model ``settings`` passed to it."""

    model_config = _PART

    agent: str
    model: str = "-"
    settings: dict[str, Any] = Field(default_factory=dict)


class InvalidTaskEntry(BaseModel):
    """A task left out because it was invalid (``--skip-invalid``): its validation
    ``problems`` (``<file>: <json path>: <message>``) and ``max_points``, the sum of its
    readable rubric weights (a lower bound when some are invalid; None when none can be
    read)."""

    model_config = _PART

    problems: list[str] = Field(default_factory=list)
    max_points: float | None = None


class LockConfig(BaseModel):
    """The configuration of the last invocation that ran trials (compared across
    invocations: a change is allowed with a warning).

    Attributes:
        limits: the agent budget (:class:`jobbench.agents.AgentLimits` as a dict).
        prompt_version: :func:`jobbench.agents.prompt_version` of the run's protocol.
        splits, task_glob: the task selection.
        endpoint: the model endpoint URL, without credentials.
        pricing: the agents' price table, if given.
        deliverable_limits: the caps on collected deliverables.
        agents: per ``agent@model`` label, the agent's description of itself (executable,
            version, options).
        strict: True when the dataset was loaded strictly (``jobbench run --strict``; see
            :func:`jobbench.tasks.load_dataset`); absent otherwise.
    """

    model_config = ConfigDict(extra="forbid")

    limits: dict[str, Any] | None = None
    prompt_version: str | None = None
    splits: list[str] | None = None
    task_glob: str | None = None
    endpoint: str | None = None
    pricing: dict[str, Any] | None = None
    deliverable_limits: dict[str, Any] | None = None
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict)
    strict: bool | None = None


class RunLock(BaseModel):
    """``lock.json`` of a run directory.

    Attributes:
        schema_version: see :data:`jobbench.records.SCHEMA_VERSION`.
        harness_version: the JobBench version of the last invocation.
        created_at, updated_at: UTC, ISO 8601.
        dataset_root: absolute path of the dataset the run was made from.
        tasks: task id → :func:`jobbench.tasks.task_digest` of the tasks run.
        agents: the agent configurations, in the order they were added.
        epochs: trials per (task, configuration), the largest asked for.
        config: see :class:`LockConfig`.
        sandboxes: every sandbox backend that ran trials of the run.
        invalid_tasks: tasks left out as invalid (see :class:`InvalidTaskEntry`).
        dataset_problems: dataset errors outside any task directory (``<file>: <message>``).
        protocol: the run protocol of every trial of the run (``jobbench`` or ``public``;
            one run directory never mixes them); None in locks older than protocols, whose
            trials ran under ``jobbench``.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    harness_version: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    dataset_root: str | None = None
    tasks: dict[str, str]
    agents: list[LockAgent] = Field(default_factory=list)
    epochs: int = Field(default=1, ge=1)
    config: LockConfig = Field(default_factory=LockConfig)
    sandboxes: list[str] = Field(default_factory=list)
    invalid_tasks: dict[str, InvalidTaskEntry] = Field(default_factory=dict)
    dataset_problems: list[str] = Field(default_factory=list)
    protocol: str | None = None


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def lock_field_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``[(field, message)]`` for the parts of a parsed ``lock.json`` every reader relies
    on, with the messages JobBench has always given; the rest is checked by the model."""
    out: list[tuple[str, str]] = []
    tasks = data.get("tasks")
    if not isinstance(tasks, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tasks.items()
    ):
        out.append(("tasks", "expected an object {task_id: digest}"))
    else:
        for k in tasks:
            try:
                check_task_id(k)
            except UnsafeIdError:
                out.append((f"tasks.{k}", "task id is not split/occupation/taskN"))
    epochs = data.get("epochs", 1)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        out.append(("epochs", "expected an integer >= 1"))
    invalid = data.get("invalid_tasks", {})
    if not isinstance(invalid, dict):
        out.append(("invalid_tasks", "expected an object {task_id: {problems, max_points}}"))
    else:
        for k, v in invalid.items():
            ok = (
                isinstance(v, dict)
                and isinstance(v.get("problems", []), list)
                and all(isinstance(x, str) for x in v.get("problems", []))
                and (v.get("max_points") is None or _is_number(v.get("max_points")))
            )
            try:
                check_task_id(k)
            except UnsafeIdError:
                out.append((f"invalid_tasks.{k}", "task id is not split/occupation/taskN"))
                continue
            if not ok:
                out.append(
                    (f"invalid_tasks.{k}", "expected {problems: [str], max_points: number or null}")
                )
    dp = data.get("dataset_problems", [])
    if not isinstance(dp, list) or not all(isinstance(x, str) for x in dp):
        out.append(("dataset_problems", "expected a list of strings"))
    agents = data.get("agents", [])
    if not isinstance(agents, list) or not all(
        isinstance(a, dict)
        and isinstance(a.get("agent"), str)
        and isinstance(a.get("model", "-"), str)
        for a in agents
    ):
        out.append(("agents", "expected a list of {agent, model, settings}"))
    return out


def migrate_lock_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 ``lock.json`` (parsed) as schema-2 fields, in memory (the file is never
    rewritten): undeclared fields are dropped, and the run-wide ``config.sandbox`` of locks
    older than per-trial sandboxes becomes ``sandboxes`` when that list is absent."""
    out = {k: v for k, v in data.items() if k in RunLock.model_fields}
    cfg = out.get("config")
    if isinstance(cfg, dict):
        if not isinstance(out.get("sandboxes"), list):
            out["sandboxes"] = [cfg["sandbox"]] if isinstance(cfg.get("sandbox"), str) else []
        out["config"] = {k: v for k, v in cfg.items() if k in LockConfig.model_fields}
    elif cfg is None:
        out.pop("config", None)
    return out
