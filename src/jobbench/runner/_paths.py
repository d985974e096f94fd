"""Names and paths inside a run directory (the cross-stage contract, COMMON.md).

``trial_id`` = ``<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>``; it is also the
trial's path under ``trials/``. ``<model>`` is ``-`` for agents without a model; characters
outside ``[A-Za-z0-9._-]`` are replaced by ``_`` in paths (trial.json keeps the real name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import ModelSettings

NO_MODEL = "-"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

LOCK_FILE = "lock.json"
TRIALS = "trials"
GRADES = "grades"
REPORT = "report"
TRIAL_JSON = "trial.json"
TRAJECTORY = "trajectory.jsonl"
DELIVERABLES = "deliverables"


def safe_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``_``; ``.``
    and ``..`` (which would be path components) become ``_`` and ``__``."""
    s = _UNSAFE.sub("_", name) or "_"
    return "_" * len(s) if set(s) == {"."} else s


def model_label(model: str | None) -> str:
    """The model as it appears in paths (``-`` when none)."""
    return NO_MODEL if not model else safe_name(model)


def config_label(agent: str, model: str | None) -> str:
    """``<agent>@<model>`` as used in trial ids."""
    return f"{agent}@{model_label(model)}"


def trial_id(task_id: str, agent: str, model: str | None, epoch: int) -> str:
    """The trial id (and relative path under ``trials/``)."""
    return f"{task_id}/{config_label(agent, model)}/epoch-{epoch}"


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

    def lock_entry(self) -> dict[str, Any]:
        """``{"agent", "model", "settings"}`` as in lock.json."""
        return {"agent": self.agent, "model": self.model or NO_MODEL, "settings": self.settings.as_record()}


def trial_dir(run_dir: Path, tid: str) -> Path:
    """``run_dir/trials/<trial_id>``."""
    return run_dir / TRIALS / tid
