"""The JobBench scorer and metrics for Inspect AI (``jobbench/jobbench``'s scorer).

:func:`jobbench_scorer` grades what the agent left in the sandbox's output directory
(``output/`` in its working directory) with JobBench's own grader
(:class:`jobbench.judge.Grader`: extraction, programmatic checks, the LLM judge, the
chain rule; nothing about grading is redone here):

1. the deliverables are copied out of the sandbox into a temporary folder on the host
   (:func:`read_deliverables`): regular files only, listed with ``find`` in the sandbox and
   read with ``sandbox().read_file``; symbolic links, special files, dotfiles and OS junk
   are left in the sandbox and reported, and the caps of ``jobbench run``
   (:class:`jobbench.sandbox.DeliverableLimits`) apply in the same order;
2. the task is loaded from the host folder named in the sample's metadata
   (:data:`TASK_DIR_KEY`); it must still have the digest recorded in the sample;
3. the grader runs on that folder: programmatic checks always, and the LLM judge through
   the eval's ``grader`` model role (:class:`._judge.InspectJudgeClient`) when ``judge`` is
   ``grader``, or ``auto`` and the eval has that role;
4. the trial is classified as ``jobbench report`` classifies it
   (:func:`jobbench.scoring.trial_result`).

The score's value is the task score s_t in [0, 1]. A trial with no gradeable deliverable
scores 0. A grade with an undecided criterion (``judge_error``, or ``unjudged``: a
criterion without a check and no LLM judge) is never a pass: it scores 0, as a missing
task counts in micro and macro, with ``reason`` ``grader_failed`` and ``metadata.scored``
false. The metadata holds every rubric's and criterion's verdict, source, reasoning and
evidence (as ``jobbench export inspect`` writes them), the grade status, points and
maximum, the deliverables and what was refused or ignored.

Metrics (:func:`micro`, :func:`macro`) use :func:`jobbench.scoring.task_results` and
:func:`jobbench.scoring.aggregate` over the scored samples: micro = Σ points / Σ maxima,
macro = the mean of task scores (fractions in [0, 1]); Inspect's ``grouped`` gives them per
SOC major group (``micro/<code>``, ``macro/<code>``). A sample that ended in an Inspect
error has no score and is not in them (``jobbench report`` would count such a task 0).
"""

from __future__ import annotations

import asyncio
import contextvars
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from inspect_ai.model import get_model, model_roles
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    grouped,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox as sandbox_env

from ...deliverable_policy import excluded
from ...records import GradeRecord, TrialRecord, TrialStatus
from ...sandbox import (
    CapTally,
    Collected,
    DeliverableLimits,
    cap_order,
    collect_deliverables,
    safefs,
)
from ...scoring import (
    TaskMeta,
    TrialResult,
    aggregate,
    split_task_id,
    task_results,
    trial_result,
)
from ._export import GRADER_ROLE, SCORER, _rubrics_detail

OUTPUT_DIR = "output"
"""The output directory, relative to the sandbox's working directory."""
TASK_DIR_KEY = "jobbench_task_dir"
"""Sample metadata key: the task's folder on the host (rubrics and checks are read there)."""
SCORER_NAME = SCORER
"""The scorer's registry name (``jobbench``, the score's key in each sample's ``scores``, as in
the logs ``jobbench export inspect`` writes)."""
CONFIG = "inspect"
"""Configuration label of the trials the scorer and metrics build (one per eval)."""
AGENT = "inspect"
"""Agent name of those trials (the solver is Inspect's)."""

JudgeChoice = Literal["auto", "checks", "grader"]


class DeliverableReadError(RuntimeError):
    """The output directory could not be listed in the sandbox (the message has why)."""


@dataclass
class _Entry:
    kind: str  # find's %y: f, d, l, p, s, b, c, D
    size: int
    rel: str


@dataclass
class ReadBack:
    """What :func:`read_deliverables` copied: ``collected`` (files, sizes, sha256; refused
    and ignored entries) and ``missing_output`` (the output directory does not exist or is
    not a directory)."""

    collected: Collected = field(default_factory=Collected)
    missing_output: bool = False


_KINDS = {"p": "named pipe", "s": "socket", "b": "device", "c": "device", "D": "door"}

# lists the output directory without following links: type, size and path of each entry
# (NUL-terminated); exit 3 when it is missing, 4 when it is not a plain directory
_LIST = (
    "if [ -L {out} ] || {{ [ -e {out} ] && [ ! -d {out} ]; }}; then exit 4; fi; "
    "[ -d {out} ] || exit 3; "
    "find {out} -mindepth 1 -printf '%y\\t%s\\t%P\\0'"
)


def _parse_listing(stdout: str) -> list[_Entry]:
    entries = []
    for record in stdout.split("\0"):
        if not record:
            continue
        kind, size, rel = record.split("\t", 2)
        entries.append(_Entry(kind=kind, size=int(size), rel=rel))
    return entries


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)


async def read_deliverables(
    dest: Path, limits: DeliverableLimits | None = None, output_dir: str = OUTPUT_DIR
) -> ReadBack:
    """Copy the deliverables of the current sample's sandbox into ``dest``.

    Args:
        dest: an empty host folder (made when missing).
        limits: the caps of ``jobbench run`` (default :class:`DeliverableLimits`): files
            over ``max_file_bytes`` are not read; past ``max_files`` files or
            ``max_total_bytes`` bytes the rest is refused, nearer the top first, then by
            path.
        output_dir: the output directory in the sandbox (relative to its working
            directory).

    Returns:
        :class:`ReadBack`; refused entries (symbolic links, special files, names that are
        not plain relative paths, files over the caps) and ignored ones (dotfiles, OS and
        editor junk) are named with the reason.

    Raises:
        DeliverableReadError: the sandbox could not list the directory (no ``sh`` or GNU
            ``find``).
    """
    limits = limits or DeliverableLimits()
    sb = sandbox_env()
    quoted = shlex.quote(output_dir)
    res = await sb.exec(["sh", "-c", _LIST.format(out=quoted)])
    if res.returncode in (3, 4):
        out = ReadBack(missing_output=True)
        if res.returncode == 4:
            out.collected.refused.append(f"{output_dir}: not a directory")
        return out
    if not res.success:
        raise DeliverableReadError(
            f"cannot list {output_dir} in the sandbox (exit {res.returncode}): "
            f"{res.stderr.strip()[:500]}"
        )
    pre = Collected()
    files: list[_Entry] = []
    for e in _parse_listing(res.stdout):
        if e.kind == "d":
            continue
        if not _safe_rel(e.rel) or any(ord(c) < 32 for c in e.rel):
            pre.refused.append(f"{e.rel!r}: file name is not a plain printable path")
        elif (why := excluded(e.rel)) is not None:
            pre.ignored.append(f"{e.rel}: {why}")
        elif e.kind == "l":
            pre.refused.append(f"{e.rel}: symlink refused")
        elif e.kind != "f":
            pre.refused.append(f"{e.rel}: {_KINDS.get(e.kind, 'special file')} refused")
        else:
            files.append(e)
    staging = dest.parent / (dest.name + ".staging")
    staging.mkdir(parents=True, exist_ok=False)
    caps = CapTally(limits)
    for e in sorted(files, key=lambda e: cap_order(e.rel)):
        why = caps.refusal(e.rel, e.size)
        if why is not None:
            pre.refused.append(why)
            continue
        try:
            data = await sb.read_file(f"{output_dir}/{e.rel}", text=False)
        except (OSError, UnicodeDecodeError) as exc:
            pre.refused.append(f"{e.rel}: cannot be read ({exc})")
            continue
        except Exception as exc:  # noqa: BLE001 - e.g. Inspect's OutputLimitExceededError
            pre.refused.append(f"{e.rel}: cannot be read ({type(exc).__name__}: {exc})")
            continue
        safefs.put_file(staging, e.rel, data)
        caps.take(len(data))
    # the same policy and caps as jobbench run, on the host copy (sizes may have changed)
    got = collect_deliverables(staging, dest, limits)
    got.refused = sorted(pre.refused + got.refused)
    got.ignored = sorted(pre.ignored + got.ignored)
    return ReadBack(collected=got)


def _judge_model(judge: JudgeChoice) -> Any | None:
    """The Inspect model of the ``grader`` role, or None for checks only.

    Raises:
        ValueError: ``judge`` is ``grader`` and the eval has no such role.
    """
    if judge == "checks":
        return None
    has_role = GRADER_ROLE in model_roles()
    if judge == "grader" and not has_role:
        raise ValueError(
            "judge=grader needs the grader model role: inspect eval … "
            "--model-role grader=<provider/model>"
        )
    return get_model(role=GRADER_ROLE) if has_role else None


def _grade(task: Any, folder: Path, epoch: int, config: Any, client: Any) -> Any:
    from ...judge import grade_trial
    from ...rundir import trial_id

    return grade_trial(
        task,
        folder,
        config,
        trial_id=trial_id(task.id, AGENT, None, epoch),
        epoch=epoch,
        client=client,
    )


_TASKS: dict[tuple[str, str], Any] = {}


def _load_task(metadata: dict[str, Any]) -> Any:
    """The JobBench task of a sample's metadata, loaded once per (folder, digest).

    Raises:
        ValueError: the metadata has no task folder, or the task changed since the
            dataset was made (its digest differs).
        jobbench.tasks.TaskLoadError: the task no longer loads.
    """
    from ...tasks import load_task, task_digest

    folder = metadata.get(TASK_DIR_KEY)
    digest = metadata.get("task_digest")
    if not isinstance(folder, str) or not isinstance(digest, str):
        raise ValueError(f"sample metadata lacks {TASK_DIR_KEY!r} or 'task_digest'")
    key = (folder, digest)
    if key not in _TASKS:
        t = load_task(Path(folder), metadata.get("split"), metadata.get("occupation"))
        now = task_digest(t)
        if now != digest:
            raise ValueError(f"{t.id} changed since the dataset was loaded (digest {now[:12]})")
        _TASKS[key] = t
    return _TASKS[key]


def _score(grade: GradeRecord, result: TrialResult, read: ReadBack) -> Score:
    scored = result.scored
    value = float(result.score or 0.0) if scored else 0.0
    delivered = [d.path for d in read.collected.files]
    passed = sum(1 for r in grade.rubrics if r.passed)
    explanation = (
        f"{result.points or 0.0:g} of {grade.max_score:g} points; "
        f"{passed} of {len(grade.rubrics)} rubrics passed ({result.state})"
    )
    if not scored:
        explanation = (
            f"not scored ({result.state}: {result.criteria_judge_error} judge errors, "
            f"{result.criteria_unjudged} unjudged criteria); counts 0"
        )
    return Score(
        value=value,
        answer=", ".join(delivered) or None,
        explanation=explanation,
        reason=None if scored else "grader_failed",
        metadata={
            "state": result.state,
            "scored": scored,
            "grade_status": grade.status,
            "status_reason": grade.status_reason,
            "passed_weight": grade.passed_weight,
            "max_score": grade.max_score,
            "points": result.points,
            "judge": grade.judge,
            "flags": list(grade.flags),
            "deliverables": delivered,
            "output_missing": read.missing_output,
            "refused": read.collected.refused,
            "ignored": read.collected.ignored,
            "rubrics": _rubrics_detail(grade),
        },
    )


def _meta(metadata: dict[str, Any]) -> TaskMeta:
    return TaskMeta(
        task_id=str(metadata["task_id"]),
        max_points=metadata.get("max_points"),
        rubrics=metadata.get("rubrics"),
        criteria=metadata.get("criteria"),
    )


def _results(scores: list[SampleScore]) -> list[Any]:
    """One :class:`jobbench.scoring.TaskResult` per task of ``scores`` (several scores of
    one task, when epochs are not reduced, are its epochs)."""
    from ...rundir import trial_id
    from ...tasks import occupation_for

    rows: list[TrialResult] = []
    metas: dict[str, TaskMeta] = {}
    epochs: dict[str, int] = {}
    for s in scores:
        md = s.sample_metadata or {}
        task_id = str(md.get("task_id") or s.sample_id)
        metas.setdefault(task_id, _meta({**md, "task_id": task_id}))
        epochs[task_id] = epochs.get(task_id, 0) + 1
        split, occupation, _ = split_task_id(task_id)
        occ = occupation_for(occupation)
        value = s.score.as_float()
        max_points = metas[task_id].max_points
        rows.append(
            TrialResult(
                run=CONFIG,
                config=CONFIG,
                agent=AGENT,
                model="-",
                trial_id=trial_id(task_id, AGENT, None, epochs[task_id]),
                task_id=task_id,
                split=split,
                occupation=occupation,
                soc_major_code=occ.soc_major_code,
                soc_major_title=occ.soc_major_title,
                paper_category=occ.paper_category,
                epoch=epochs[task_id],
                trial_status="ok",
                state="complete",
                scored=True,
                score=value,
                points=None if max_points is None else value * max_points,
                max_points=max_points,
            )
        )
    return task_results(rows, list(metas.values()), config=CONFIG, run=CONFIG)


def _estimate(scores: list[SampleScore], which: Literal["micro", "macro"]) -> float:
    """The ``which`` score of :func:`jobbench.scoring.aggregate` over the scored samples'
    tasks (a fraction in [0, 1]; NaN for no task)."""
    est = getattr(aggregate(_results(scores), config=CONFIG, with_ci=False), which).estimate
    return float("nan") if est is None else est


@metric
def micro() -> Metric:
    """Σ points / Σ maxima over the scored samples' tasks (a fraction in [0, 1]), as
    :func:`jobbench.scoring.aggregate` computes it (NaN for no task)."""

    def compute(scores: list[SampleScore]) -> float:  # Inspect reads this annotation
        return _estimate(scores, "micro")

    return compute


@metric
def macro() -> Metric:
    """The mean of the task scores of the scored samples (a fraction in [0, 1]), as
    :func:`jobbench.scoring.aggregate` computes it (NaN for no task)."""

    def compute(scores: list[SampleScore]) -> float:  # Inspect reads this annotation
        return _estimate(scores, "macro")

    return compute


def metrics() -> list[Any]:
    """The task's metrics: ``micro``, ``macro``, and both per SOC major group (sample
    metadata ``soc_major_code``; named ``micro/<code>``, ``macro/<code>``)."""
    return [
        micro(),
        macro(),
        grouped(micro(), "soc_major_code", all=False, name_template="micro/{group_name}"),
        grouped(macro(), "soc_major_code", all=False, name_template="macro/{group_name}"),
    ]


@scorer(metrics=metrics(), name=SCORER_NAME)
def jobbench_scorer(
    judge: JudgeChoice = "auto",
    judge_mode: Literal["rubric", "task", "criterion", "official"] = "rubric",
) -> Scorer:
    """JobBench's chained-rubric grader on the sandbox's ``output/`` (module docstring).

    Args:
        judge: ``checks`` (programmatic checks only; criteria without one stay unjudged,
            and such a task scores 0 with reason ``grader_failed``), ``grader`` (checks,
            and the LLM judge through the ``grader`` model role, which must be given),
            ``auto`` (``grader`` when the eval has the role, else ``checks``).
        judge_mode: how the LLM judge is asked (:class:`jobbench.judge.JudgeConfig`
            ``mode``).

    Returns:
        An Inspect scorer. Each sample needs the metadata :func:`._task.sample_for` writes.
    """
    from ...judge import JudgeConfig

    async def score(state: TaskState, target: Target) -> Score:
        model = _judge_model(judge)
        task = _load_task(state.metadata)
        with tempfile.TemporaryDirectory(prefix="jobbench-inspect-") as tmp:
            folder = Path(tmp) / "output"
            read = await read_deliverables(folder)
            client = None
            if model is not None:
                from ._judge import InspectJudgeClient

                config = JudgeConfig(model=str(model), mode=judge_mode, cache=False)
                client = InspectJudgeClient(
                    model,
                    asyncio.get_running_loop(),
                    contextvars.copy_context(),
                    temperature=config.temperature,
                    seed=config.seed,
                    max_tokens=config.max_tokens,
                )
            else:
                config = JudgeConfig()
            grade = await anyio.to_thread.run_sync(
                _grade, task, folder, state.epoch, config, client
            )
        trial = TrialRecord(
            trial_id=grade.trial_id,
            task_id=task.id,
            task_digest=state.metadata["task_digest"],
            agent=AGENT,
            model="-",
            epoch=state.epoch,
            status=TrialStatus.ok if read.collected.files else TrialStatus.no_deliverable,
            deliverables=read.collected.files,
            refused=read.collected.refused,
            ignored=read.collected.ignored,
        )
        result = trial_result(trial, grade, run=CONFIG, config=CONFIG, task=_meta(state.metadata))
        return _score(grade, result, read)

    return score
