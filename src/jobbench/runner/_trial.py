"""Running one trial: fresh workspace → agent in the sandbox → deliverables → trial.json.

``trial.json`` is written last and atomically; its presence means the trial finished.
A trial interrupted at any point (SIGKILL, power loss) leaves no ``trial.json`` and is
redone from scratch by the next invocation.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from ..agents import (
    Agent,
    AgentContext,
    AgentLimits,
    AgentResult,
    Endpoint,
    InfraError,
    Pricing,
    Trajectory,
    standard_prompt,
)
from ..records import TrialAttempt, TrialRecord, TrialStatus, Usage
from ..rundir import RunDir, trial_id
from ..sandbox import (
    DeliverableLimits,
    Sandbox,
    collect_deliverables,
    prepare_workspace,
)
from ..sandbox._sandbox import UID_POOL
from ..tasks import Task
from ._lock import now_iso
from ._spec import AgentSpec


@dataclass
class TrialEnv:
    """What every trial of a run shares.

    Attributes:
        run_dir: the run directory.
        dataset_root: the dataset (masked from sandboxes, never written).
        limits: trial budget.
        backend: sandbox backend actually used (``bwrap`` or ``none``).
        scratch_root: where workspaces are made.
        keep_workspaces: keep scratch directories after the trial (debugging).
        deliverable_limits: caps on collection.
        endpoint, pricing: for API agents.
        cancel: set when the run is interrupted.
    """

    run_dir: Path
    dataset_root: Path
    limits: AgentLimits
    backend: str
    scratch_root: Path
    keep_workspaces: bool = False
    deliverable_limits: DeliverableLimits = field(default_factory=DeliverableLimits)
    endpoint: Endpoint | None = None
    pricing: Pricing | None = None
    cancel: threading.Event = field(default_factory=threading.Event)


def run_trial_once(task: Task, digest: str, spec: AgentSpec, agent: Agent, epoch: int, env: TrialEnv,
                   attempts: list[TrialAttempt] | None = None) -> TrialRecord | None:
    """Run one attempt of a trial and write its record.

    Args:
        task, digest: the task and its current digest.
        spec, agent: the agent configuration and instance.
        epoch: 1-based.
        env: shared settings.
        attempts: errors of earlier infra-failed attempts (recorded in trial.json).

    Returns:
        The written :class:`TrialRecord`, or None when the run was interrupted (nothing is
        written then; the trial will be redone).
    """
    tid = trial_id(task.id, spec.agent, spec.model, epoch)
    rd = RunDir(env.run_dir)
    rd.reset_trial_dir(tid)
    rd.remove_trial_grades(tid)
    traj = Trajectory(rd.trajectory_file(tid))
    started = now_iso()
    t0 = time.monotonic()
    ws = None
    uid = None
    result: AgentResult
    deliverables: list = []
    refused: list[str] = []
    try:
        ws = prepare_workspace(task.workspace_dir, env.scratch_root, forbidden=[env.dataset_root, env.run_dir])
        if env.backend == "bwrap" and os.geteuid() == 0:
            uid = UID_POOL.acquire()
        mask = [env.dataset_root, env.run_dir, env.scratch_root]

        backend = env.backend
        workspace = ws

        def make_sandbox(network: bool = False, mounts=None, env=None, path_prepend=None) -> Sandbox:
            return Sandbox(workspace.workspace, home=workspace.home, mounts=list(mounts or []), network=network,
                           env=env, mask=mask, backend=backend, uid=uid, path_prepend=path_prepend,  # type: ignore[arg-type]
                           tmp_root=workspace.private)

        probe = make_sandbox()
        prompt = standard_prompt(probe.path_of(ws.task_folder), probe.path_of(ws.output),
                                 search_tool=spec.agent == "builtin")
        traj.emit("trial_start", trial_id=tid, task_id=task.id, task_digest=digest, agent=spec.agent,
                  model=spec.model, settings=spec.settings.as_record(), sandbox=env.backend,
                  limits=env.limits.model_dump(), prompt=prompt, attempt=len(attempts or []) + 1)
        ctx = AgentContext(task=task, workspace=ws, make_sandbox=make_sandbox, prompt=prompt, model=spec.model,
                           settings=spec.settings, limits=env.limits, trajectory=traj, cancel=env.cancel,
                           endpoint=env.endpoint, pricing=env.pricing)
        try:
            result = agent.run(ctx)
        except InfraError as exc:
            result = AgentResult(status="infra_error", error=str(exc))
        except Exception as exc:  # a harness bug is never the agent's failure
            result = AgentResult(status="infra_error",
                                 error=f"harness error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}")
        if env.cancel.is_set():
            traj.emit("cancelled")
            traj.close()
            return None
        collected = collect_deliverables(ws.output, rd.deliverables_dir(tid),
                                         env.deliverable_limits)
        deliverables, refused = collected.files, collected.refused
    except Exception as exc:
        result = AgentResult(status="infra_error", error=f"trial set-up failed: {type(exc).__name__}: {exc}")
    finally:
        if uid is not None:
            UID_POOL.release(uid)
        if ws is not None and not env.keep_workspaces:
            ws.cleanup()
    if env.cancel.is_set():
        traj.close()
        return None
    status = TrialStatus(result.status)
    if status == TrialStatus.ok and not deliverables:
        status = TrialStatus.no_deliverable
    wall = time.monotonic() - t0
    error = result.error
    if status == TrialStatus.no_deliverable and error is None:
        error = "the agent finished without writing any file to the output directory" + (
            f" ({len(refused)} refused)" if refused else "")
    traj.emit("trial_end", status=status.value, error=error, deliverables=[d.path for d in deliverables],
              refused=refused, seconds=round(wall, 3))
    traj.close()
    record = TrialRecord(
        trial_id=tid, task_id=task.id, task_digest=digest, agent=spec.agent, model=spec.model or "-", epoch=epoch,
        status=status, deliverables=deliverables, refused=refused, started_at=started, finished_at=now_iso(),
        wall_seconds=round(wall, 3), turns=result.turns, usage=result.usage or Usage(),
        settings=spec.settings.as_record(), error=error, session_id=result.session_id or None,
        details=dict(result.details or {}), attempts=list(attempts or []), sandbox=env.backend,
    )
    rd.write_trial(record)
    return record


__all__ = ["TrialEnv", "run_trial_once"]
