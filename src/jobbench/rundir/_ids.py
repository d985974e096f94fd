"""Ids that name paths inside a run directory, and their validation.

``trial_id`` = ``<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>``; it is also the
trial's path under ``trials/`` and its grade's path under ``grades/<judge-key>/``. ``<model>``
is ``-`` for agents without a model; characters outside ``[A-Za-z0-9._-]`` are replaced by
``_`` in ids (``trial.json`` keeps the real model name).

Every id or path component taken from a record, a lock or a caller is checked by
:func:`check_component` before it becomes part of a path: not empty, not ``.`` or ``..``, no
``/`` or ``\\``, no NUL or other control character, at most 255 bytes. An absolute path or one
with ``..`` therefore never passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

NO_MODEL = "-"
"""The model part of the id of an agent without a model."""

EPOCH_PREFIX = "epoch-"
_EPOCH = re.compile(r"epoch-([1-9][0-9]*)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_COMPONENT_BYTES = 255


class UnsafeIdError(ValueError):
    """An id or path component would not name exactly one entry inside its folder of the run
    directory (empty, ``.``/``..``, a separator, a control character, too long) or does not
    have the shape of its kind of id. The message names the value and the rule."""


def check_component(value: object, what: str = "path component") -> str:
    """``value`` if it is a safe single path component (see the module docstring).

    Raises:
        UnsafeIdError: naming ``what``, the value and the rule it breaks.
    """
    if type(value) is str and _is_safe_component(value):
        return value
    return _check_component(value, what)


@lru_cache(maxsize=16384)
def _is_safe_component(value: str) -> bool:
    """Whether :func:`check_component` accepts ``value`` (cached: a run directory's scan
    checks the same few hundred names tens of thousands of times)."""
    try:
        _check_component(value, "")
    except UnsafeIdError:
        return False
    return True


def _check_component(value: object, what: str) -> str:
    """:func:`check_component` without its cache."""
    if not isinstance(value, str):
        raise UnsafeIdError(f"{what} must be a string, got {type(value).__name__}")
    if not value:
        raise UnsafeIdError(f"{what} is empty")
    if value in (".", ".."):
        raise UnsafeIdError(f"{what} {value!r} is not a name")
    for ch in value:
        if ch in "/\\":
            raise UnsafeIdError(f"{what} {value!r} contains a path separator {ch!r}")
        if ord(ch) < 32 or 127 <= ord(ch) < 160:
            raise UnsafeIdError(f"{what} {value!r} contains a control character")
    if len(value.encode("utf-8", "surrogatepass")) > _MAX_COMPONENT_BYTES:
        raise UnsafeIdError(f"{what} is longer than {_MAX_COMPONENT_BYTES} bytes")
    return value


def safe_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``_``; ``.``
    and ``..`` (which would be path components) become ``_`` and ``__``."""
    s = _UNSAFE.sub("_", name) or "_"
    return "_" * len(s) if set(s) == {"."} else s


def model_label(model: str | None) -> str:
    """The model as it appears in ids and paths (``-`` when none)."""
    return NO_MODEL if not model else safe_name(model)


_SEPARATOR_OR_CONTROL = re.compile(r"[/\\\x00-\x1f\x7f-\x9f]")


def config_label(agent: str, model: str | None) -> str:
    """``<agent>@<model>`` as used in trial ids. Path separators and control characters of
    the agent reference (the ``/`` of ``command:./my_agent.sh``) become ``_``; every other
    character is kept, so ``module:Class`` references keep their ids."""
    return f"{_SEPARATOR_OR_CONTROL.sub('_', agent)}@{model_label(model)}"


@dataclass(frozen=True)
class TrialKey:
    """A validated trial id, split into its parts.

    Attributes:
        split, occupation, task: the task id's components.
        agent: the agent name; model: the model part of the id (``-`` or a safe name).
        epoch: 1-based epoch.
    """

    split: str
    occupation: str
    task: str
    agent: str
    model: str
    epoch: int

    @property
    def task_id(self) -> str:
        return f"{self.split}/{self.occupation}/{self.task}"

    @property
    def config(self) -> str:
        """``<agent>@<model>``."""
        return f"{self.agent}@{self.model}"

    @property
    def epoch_name(self) -> str:
        """``epoch-<N>``."""
        return f"{EPOCH_PREFIX}{self.epoch}"

    @property
    def trial_id(self) -> str:
        return f"{self.task_id}/{self.config}/{self.epoch_name}"

    @property
    def parts(self) -> tuple[str, str, str, str, str]:
        """The five path components of the trial id."""
        return self.split, self.occupation, self.task, self.config, self.epoch_name


def check_task_id(task_id: object) -> str:
    """``task_id`` if it is ``<split>/<occupation>/taskN`` with three safe components.

    Raises:
        UnsafeIdError: otherwise.
    """
    if not isinstance(task_id, str):
        raise UnsafeIdError(f"task id must be a string, got {type(task_id).__name__}")
    parts = task_id.split("/")
    if len(parts) != 3:
        raise UnsafeIdError(f"task id {task_id!r} is not split/occupation/taskN")
    for p, what in zip(parts, ("split", "occupation", "task"), strict=True):
        check_component(p, f"{what} of task id {task_id!r}")
    return task_id


def epoch_of(name: str) -> int | None:
    """N of a canonical ``epoch-<N>`` (N ≥ 1, no leading zero), else None."""
    m = _EPOCH.fullmatch(name)
    return int(m.group(1)) if m else None


def parse_config(config: str) -> tuple[str, str] | None:
    """``(agent, model)`` of a safe ``<agent>@<model>`` component, else None."""
    try:
        check_component(config)
    except UnsafeIdError:
        return None
    agent, at, model = config.rpartition("@")
    return (agent, model) if at and agent and model else None


def parse_trial_id(tid: object) -> TrialKey:
    """The parts of a trial id.

    Raises:
        UnsafeIdError: ``tid`` is not ``<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>``
            with safe components (the message says which part is wrong).
    """
    if type(tid) is str:
        return _parse_trial_id_cached(tid)
    return _parse_trial_id(tid)


@lru_cache(maxsize=65536)
def _parse_trial_id_cached(tid: str) -> TrialKey:
    """:func:`parse_trial_id` of a string, cached (a report parses each id several times;
    errors are not cached)."""
    return _parse_trial_id(tid)


def _parse_trial_id(tid: object) -> TrialKey:
    """:func:`parse_trial_id` without its cache."""
    if not isinstance(tid, str):
        raise UnsafeIdError(f"trial id must be a string, got {type(tid).__name__}")
    parts = tid.split("/")
    if len(parts) != 5:
        raise UnsafeIdError(
            f"trial id {tid!r} is not <split>/<occupation>/taskN/<agent>@<model>/epoch-<N>"
        )
    check_task_id("/".join(parts[:3]))
    pair = parse_config(parts[3])
    if pair is None:
        raise UnsafeIdError(f"trial id {tid!r}: {parts[3]!r} is not a safe <agent>@<model>")
    epoch = epoch_of(parts[4])
    if epoch is None:
        raise UnsafeIdError(f"trial id {tid!r}: {parts[4]!r} is not epoch-<N> (N ≥ 1)")
    return TrialKey(parts[0], parts[1], parts[2], pair[0], pair[1], epoch)


def trial_id(task_id: str, agent: str, model: str | None, epoch: int) -> str:
    """The trial id (and relative path under ``trials/``) of a trial.

    Raises:
        UnsafeIdError: the parts do not make a valid trial id (e.g. an agent name with a
            ``/``, an epoch below 1).
    """
    tid = f"{task_id}/{config_label(agent, model)}/{EPOCH_PREFIX}{epoch}"
    parse_trial_id(tid)
    return tid
