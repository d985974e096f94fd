"""``inspect eval jobbench/jobbench``: JobBench tasks as one Inspect AI task.

Imported only by Inspect (through the ``inspect_ai`` entry point, :mod:`._registry`) or by
code that asks for :func:`jobbench`; it imports ``inspect_ai`` at module level.

One :class:`inspect_ai.dataset.Sample` per JobBench task (id = task id):

* ``input``: the standard prompt (:func:`jobbench.agents.standard_prompt`) with paths
  relative to the sandbox's working directory; the setup step :func:`jobbench_setup`
  replaces them by absolute ones once the sandbox exists;
* ``files``: every file of the task's ``task_folder/`` under ``task_folder/`` in the
  sandbox's working directory, and nothing else: the rubrics, the task card, the solution
  and the search references stay on the host;
* ``metadata``: task id, split, occupation, SOC major group (code and title), the paper's
  category, the maximum points, rubric and criterion counts, the task digest, and the host
  folder of the task (:data:`TASK_DIR_KEY`, read by the scorer, never by the sandbox).

The default solver is Inspect's ReAct agent (:func:`inspect_ai.agent.react`, without a
submit tool: the agent stops when it answers without calling a tool) with the ``bash``,
``python`` and ``text_editor`` tools; ``--solver`` replaces it. The scorer is
:func:`jobbench.interop.inspect._scorer.jobbench_scorer` (registered as ``jobbench/jobbench``;
its score is ``jobbench`` in each sample's ``scores``).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.agent import Agent, AgentPrompt, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import bash, python, text_editor
from inspect_ai.util import sandbox as sandbox_env

from ...agents import AgentLimits, standard_prompt
from ...tasks import (
    WORKSPACE,
    InvalidDatasetError,
    find_invalid,
    invalid_message,
    load_dataset,
    task_digest,
)
from ...tasks import Task as JobTask
from ._scorer import (
    OUTPUT_DIR,
    TASK_DIR_KEY,
    JudgeChoice,
    jobbench_scorer,
)

TASK_FOLDER = WORKSPACE
"""Folder of the task's files in the sandbox's working directory (``task_folder``)."""

SYSTEM_PROMPT = (
    "You are a careful professional working on a desk task in a Linux workspace. You act "
    "only through the tools provided: bash, python and a text editor. Inspect the files, do "
    "the work and save the final deliverables in the output directory. When they are "
    "saved, reply with a short summary without calling a tool: that ends the task."
)
"""Instructions of the default ReAct agent (its system message, before the prompt)."""

_LIMITS = AgentLimits()


def _files(t: JobTask) -> dict[str, str]:
    """``{sandbox path: host path}`` of every workspace file of ``t``.

    Raises:
        ValueError: a workspace file is not a regular file any more (a symbolic link, a
            folder or gone since the task was loaded): Inspect would copy a path that
            does not exist as its text, so it is refused here.
    """
    out: dict[str, str] = {}
    for rel in t.workspace_files:
        host = t.workspace_dir / rel
        try:
            mode = os.lstat(host).st_mode
        except OSError as exc:
            raise ValueError(f"{t.id}: {WORKSPACE}/{rel} cannot be read ({exc})") from exc
        if not stat.S_ISREG(mode):
            raise ValueError(f"{t.id}: {WORKSPACE}/{rel} is not a regular file")
        out[f"{TASK_FOLDER}/{rel}"] = str(host)
    return out


def relative_prompt(protocol: str = "jobbench") -> str:
    """The standard prompt with the paths relative to the sandbox's working directory
    (``task_folder``, ``output``): every sample's ``input``."""
    return standard_prompt(TASK_FOLDER, OUTPUT_DIR, protocol=protocol)


def sample_for(t: JobTask, protocol: str = "jobbench") -> Sample:
    """The Inspect sample of one JobBench task (see the module docstring).

    Raises:
        ValueError: see :func:`_files`.
        OSError: a file of the task cannot be read for its digest.
    """
    occ = t.occupation_info
    metadata: dict[str, Any] = {
        "task_id": t.id,
        "split": t.split,
        "occupation": t.occupation,
        "occupation_title": occ.display_name,
        "soc_major_code": occ.soc_major_code,
        "soc_major_title": occ.soc_major_title,
        "paper_category": occ.paper_category,
        "max_points": t.total_weight,
        "rubrics": len(t.rubrics),
        "criteria": t.criterion_count,
        "task_digest": task_digest(t),
        "protocol": protocol,
        TASK_DIR_KEY: str(t.root),
    }
    return Sample(
        id=t.id,
        input=relative_prompt(protocol),
        files=_files(t),
        metadata=metadata,
        description=f"{occ.display_name}: {t.id}",
    )


def _globs(tasks: str | Sequence[str] | None) -> list[str]:
    if tasks is None:
        return []
    if isinstance(tasks, str):
        return [tasks]
    return [str(g) for g in tasks]


def load_samples(
    dataset: str | os.PathLike[str] | None = None,
    split: str | Sequence[str] | None = "main",
    tasks: str | Sequence[str] | None = None,
    *,
    skip_invalid: bool = False,
    protocol: str = "jobbench",
) -> list[Sample]:
    """The samples of the selected JobBench tasks, in task order.

    Args:
        dataset: dataset root, split, occupation or task folder (default: the bundled
            sample, :func:`jobbench.tasks.default_dataset`).
        split: only these splits (None: every split).
        tasks: only task ids matching this glob (``jobbench run --tasks``), or any glob of
            a list.
        skip_invalid: leave invalid tasks out instead of refusing the dataset.
        protocol: the prompt's protocol (``jobbench`` or ``public``).

    Raises:
        FileNotFoundError: the dataset does not exist or holds no task.
        jobbench.tasks.InvalidDatasetError: the selection has invalid tasks (and not
            ``skip_invalid``).
        ValueError: no task matches the selection, or see :func:`sample_for`.
    """
    from ...tasks import default_dataset

    root = Path(dataset) if dataset is not None else default_dataset()
    splits = [split] if isinstance(split, str) else (list(split) if split else None)
    globs = _globs(tasks)
    # one glob is the loader's own selection; several are applied after loading
    ds = load_dataset(root, splits=splits, task_glob=globs[0] if len(globs) == 1 else None)

    def wanted(task_id: str) -> bool:
        return not globs or any(fnmatch.fnmatchcase(task_id, g) for g in globs)

    if not skip_invalid:
        invalid = find_invalid(ds, splits=splits, task_glob=globs[0] if len(globs) == 1 else None)
        invalid.tasks = {tid: p for tid, p in invalid.tasks.items() if wanted(tid)}
        if invalid:
            raise InvalidDatasetError(invalid_message(invalid, str(root)), invalid)
    chosen = [t for t in ds.tasks if wanted(t.id)]
    if not chosen:
        raise ValueError(f"{root}: no task matches split={splits or 'any'} tasks={globs or 'any'}")
    return [sample_for(t, protocol) for t in chosen]


@solver
def jobbench_setup(protocol: str = "jobbench") -> Solver:
    """Setup step of every sample (run even when ``--solver`` replaces the agent).

    Makes the empty output directory (``output/`` in the sandbox's working directory) and
    replaces the relative paths of the standard prompt in the sample's user message by
    absolute ones (the working directory as ``pwd`` prints it in the sandbox).

    Raises:
        RuntimeError: the sandbox cannot run ``sh`` (the message has its stderr).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        res = await sandbox_env().exec(["sh", "-c", f"mkdir -p {OUTPUT_DIR} && pwd"])
        if not res.success:
            raise RuntimeError(f"sandbox setup failed: {res.stderr.strip()}")
        cwd = res.stdout.strip().rstrip("/")  # "" for the root folder
        prompt = standard_prompt(f"{cwd}/{TASK_FOLDER}", f"{cwd}/{OUTPUT_DIR}", protocol=protocol)
        relative = relative_prompt(protocol)
        for i, message in enumerate(state.messages):
            if isinstance(message, ChatMessageUser) and message.text == relative:
                state.messages[i] = ChatMessageUser(content=prompt, source=message.source)
        return state

    return solve


def default_agent(tool_timeout: int = int(_LIMITS.command_timeout)) -> Agent:
    """Inspect's ReAct agent with ``bash``, ``python`` and ``text_editor`` (each command
    limited to ``tool_timeout`` seconds), :data:`SYSTEM_PROMPT` as its instructions and no
    submit tool."""
    return react(
        prompt=AgentPrompt(instructions=SYSTEM_PROMPT, submit_prompt=None),
        tools=[
            bash(timeout=tool_timeout),
            python(timeout=tool_timeout),
            text_editor(timeout=tool_timeout),
        ],
        submit=False,
    )


@task
def jobbench(
    dataset: str | None = None,
    split: str | list[str] | None = "main",
    tasks: str | list[str] | None = None,
    judge: JudgeChoice = "auto",
    judge_mode: Literal["rubric", "task", "criterion", "official"] = "rubric",
    sandbox: str = "local",
    protocol: Literal["jobbench", "public"] = "jobbench",
    skip_invalid: bool = False,
    tool_timeout: int = int(_LIMITS.command_timeout),
    turn_limit: int | None = _LIMITS.max_turns,
    time_limit: int | None = int(_LIMITS.timeout),
) -> Task:
    """JobBench as an Inspect task (``inspect eval jobbench/jobbench -T dataset=…``).

    Args:
        dataset: dataset root, split, occupation or task folder (default: the bundled
            sample).
        split: only these splits (default ``main``; None: every split).
        tasks: only task ids matching this glob, or any glob of a list.
        judge: ``auto`` (the LLM judge through the ``grader`` model role when the eval
            has one, else checks only), ``checks`` (programmatic checks only) or
            ``grader`` (the ``grader`` role is required). See :func:`jobbench_scorer`.
        judge_mode: how the LLM judge is asked (:class:`jobbench.judge.JudgeConfig`
            ``mode``).
        sandbox: Inspect sandbox type (``local``: a temporary folder on this machine, no
            isolation; ``docker`` when installed).
        protocol: the standard prompt's protocol (``jobbench`` or ``public``).
        skip_invalid: leave invalid tasks out instead of refusing the dataset.
        tool_timeout: seconds per tool call of the default agent.
        turn_limit: model generations per sample (default: the builtin agent's 100).
        time_limit: wall-clock seconds per sample (default: 3600).

    Returns:
        The :class:`inspect_ai.Task`; samples as :func:`load_samples` makes them.

    Raises:
        See :func:`load_samples`.
    """
    from ...tasks import default_dataset

    root = Path(dataset) if dataset is not None else default_dataset()
    samples = load_samples(root, split, tasks, skip_invalid=skip_invalid, protocol=protocol)
    return Task(
        dataset=MemoryDataset(samples, name="jobbench", location=str(root.resolve())),
        setup=jobbench_setup(protocol=protocol),
        solver=default_agent(tool_timeout),
        scorer=jobbench_scorer(judge=judge, judge_mode=judge_mode),
        sandbox=sandbox,
        turn_limit=turn_limit,
        time_limit=time_limit,
    )


jobbench_task = jobbench
"""The task function under the name the package exports
(``jobbench.interop.inspect.jobbench_task``)."""
