"""Running one trial: fresh workspace → agent in the sandbox → deliverables → trial.json.

Under the ``public`` protocol a published runner's budget applies
(:func:`jobbench.agents.effective_limits`) and, for OpenCode, an attempt that reaches its
time limit is followed by one more on a fresh copy of the task folder, the timed-out
attempt's files being kept where the retry wrote none (:func:`jobbench.agents.attempt_policy`;
the published ``eval/run_benchmark_opencode.sh`` does the same). Each attempt is recorded in
``trial.json`` ``details.agent_attempts`` and marked by ``agent_attempt`` events in the
trajectory.

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
    attempt_policy,
    effective_limits,
    standard_prompt,
)
from ..records import TrialAttempt, TrialRecord, TrialStatus, Usage
from ..rundir import RunDir, trial_id
from ..sandbox import (
    DEFAULT_DISK_QUOTA_MB,
    UID_POOL,
    Collected,
    DeliverableLimits,
    QuotaMonitor,
    ResolvedBackend,
    Sandbox,
    collect_deliverables,
    merge_rescued,
    prepare_workspace,
    reset_workspace,
)
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
        protocol: ``jobbench`` or ``public`` (see :mod:`jobbench.agents._protocol`).
        disk_quota_mb: per-trial quota on what the sandbox writes (workspace, HOME, /tmp),
            MiB, or None for none (:class:`jobbench.sandbox.DiskQuota`).
    """

    run_dir: Path
    dataset_root: Path
    limits: AgentLimits
    backend: ResolvedBackend
    scratch_root: Path
    keep_workspaces: bool = False
    deliverable_limits: DeliverableLimits = field(default_factory=DeliverableLimits)
    endpoint: Endpoint | None = None
    pricing: Pricing | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    protocol: str = "jobbench"
    disk_quota_mb: int | None = DEFAULT_DISK_QUOTA_MB


def _run_agent(agent: Agent, ctx: AgentContext) -> AgentResult:
    """``agent.run(ctx)`` with every exception turned into an ``infra_error`` result."""
    try:
        return agent.run(ctx)
    except InfraError as exc:
        details: dict = {}
        if exc.cause:
            details["infra_cause"] = exc.cause
        if exc.permanent:
            details["infra_permanent"] = True
        return AgentResult(status="infra_error", error=str(exc), details=details)
    except Exception as exc:  # a harness bug is never the agent's failure
        trace = traceback.format_exc(limit=8)
        return AgentResult(
            status="infra_error", error=f"harness error: {type(exc).__name__}: {exc}\n{trace}"
        )


def _timed_out(result: AgentResult) -> bool:
    """The attempt reached its wall-clock limit (not another budget)."""
    return result.status == "agent_timeout" and bool(result.details.get("timed_out"))


def _attempt_entry(
    n: int, result: AgentResult, limits: AgentLimits, started: str, seconds: float
) -> dict:
    """One ``details.agent_attempts`` entry (the fields of the public ``attempt_index.tsv``)."""
    status = "success" if result.status == "ok" else "failed"
    if _timed_out(result):
        status = "timeout"
    return {
        "attempt": n,
        "status": status,
        "agent_status": result.status,
        "error": result.error,
        "exit_code": result.details.get("exit_code"),
        "timeout_seconds": limits.timeout,
        "session_id": result.session_id,
        "started_at": started,
        "finished_at": now_iso(),
        "seconds": round(seconds, 3),
    }


def run_trial_once(
    task: Task,
    digest: str,
    spec: AgentSpec,
    agent: Agent,
    epoch: int,
    env: TrialEnv,
    attempts: list[TrialAttempt] | None = None,
) -> TrialRecord | None:
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
    limits = effective_limits(spec.agent, env.protocol, env.limits)
    retries, rescue = attempt_policy(spec.agent, env.protocol)
    agent_attempts: list[dict] = []
    rd = RunDir(env.run_dir)
    rd.reset_trial_dir(tid)
    rd.remove_trial_grades(tid)
    traj = Trajectory(rd.trajectory_file(tid))
    started = now_iso()
    t0 = time.monotonic()
    ws = None
    uid = None
    monitor: QuotaMonitor | None = None
    result: AgentResult
    deliverables: list = []
    refused: list[str] = []
    ignored: list[str] = []
    try:
        ws = prepare_workspace(
            task.workspace_dir,
            env.scratch_root,
            forbidden=[env.dataset_root, env.run_dir],
            disk_quota_bytes=env.disk_quota_mb * 2**20 if env.disk_quota_mb else None,
        )
        if env.backend == "bwrap" and os.geteuid() == 0:
            uid = UID_POOL.acquire()
        mask = [env.dataset_root, env.run_dir, env.scratch_root]

        backend = env.backend
        workspace = ws

        def make_sandbox(
            network: bool = False, mounts=None, env=None, path_prepend=None
        ) -> Sandbox:
            return Sandbox(
                workspace.workspace,
                home=workspace.home,
                mounts=list(mounts or []),
                network=network,
                env=env,
                mask=mask,
                backend=backend,
                uid=uid,
                path_prepend=path_prepend,
                tmp_root=workspace.private,
                tmp_dirs=workspace.tmp_dirs,
            )

        probe = make_sandbox()
        prompt = standard_prompt(
            probe.path_of(ws.task_folder),
            probe.path_of(ws.output),
            search_tool=spec.agent == "builtin",
            protocol=env.protocol,
        )
        traj.emit(
            "trial_start",
            trial_id=tid,
            task_id=task.id,
            task_digest=digest,
            agent=spec.agent,
            model=spec.model,
            settings=spec.settings.as_record(),
            sandbox=env.backend,
            limits=limits.model_dump(),
            prompt=prompt,
            attempt=len(attempts or []) + 1,
            protocol=env.protocol,
        )
        rescued: list[tuple[Collected, Path]] = []
        usage, turns = Usage(), None
        # the agent's cancel: the run's, or the quota watchdog's (see QuotaMonitor)
        cancel = env.cancel if ws.quota is None else threading.Event()
        monitor = QuotaMonitor(ws.quota, cancel, also=env.cancel) if ws.quota else None
        if monitor is not None:
            monitor.start()
        for n in range(1, retries + 2):
            if retries:
                traj.emit("agent_attempt", attempt=n, timeout=limits.timeout)
            ctx = AgentContext(
                task=task,
                workspace=ws,
                make_sandbox=make_sandbox,
                prompt=prompt,
                model=spec.model,
                settings=spec.settings,
                limits=limits,
                trajectory=traj,
                cancel=cancel,
                endpoint=env.endpoint,
                pricing=env.pricing,
                protocol=env.protocol,
                attempt=n,
            )
            a_started, a_t0 = now_iso(), time.monotonic()
            result = _run_agent(agent, ctx)
            if env.cancel.is_set():
                traj.emit("cancelled")
                traj.close()
                return None
            usage = usage + (result.usage or Usage())
            if result.turns is not None:
                turns = (turns or 0) + result.turns
            if retries:
                seconds = time.monotonic() - a_t0
                agent_attempts.append(_attempt_entry(n, result, limits, a_started, seconds))
            if n > retries or not _timed_out(result):
                break
            if rescue:  # keep the timed-out attempt's files (a harness-owned copy)
                where = ws.private / f"rescued-{n}"
                kept = collect_deliverables(ws.output, where, env.deliverable_limits)
                rescued.append((kept, where))
                agent_attempts[-1]["rescued_files"] = [f.path for f in kept.files]
            reset_workspace(ws, task.workspace_dir)
            traj.emit(
                "agent_attempt_end",
                attempt=n,
                status="timeout",
                retry=True,
                rescued=[f.path for f in rescued[-1][0].files] if rescue else [],
            )
        result.usage, result.turns = usage, turns
        if monitor is not None and ws.quota is not None:
            monitor.finish()  # a last measurement, before anything is collected
            quota = ws.quota.record()
            if ws.quota.reached:
                quota["note"] = ws.quota.note()
                traj.emit("disk_quota", **quota)
            result.details = {**result.details, "disk_quota": quota}
        if agent_attempts:
            result.details = {**result.details, "agent_attempts": agent_attempts}
        collected = collect_deliverables(
            ws.output, rd.deliverables_dir(tid), env.deliverable_limits
        )
        for kept, where in reversed(rescued):
            collected = merge_rescued(
                collected, rd.deliverables_dir(tid), kept, where, env.deliverable_limits
            )
        if agent_attempts and agent_attempts[-1]["status"] == "success" and not collected.files:
            agent_attempts[-1]["status"] = "failed"  # as the public runners count an empty output
        deliverables, refused, ignored = collected.files, collected.refused, collected.ignored
    except Exception as exc:
        result = AgentResult(
            status="infra_error", error=f"trial set-up failed: {type(exc).__name__}: {exc}"
        )
    finally:
        if monitor is not None:
            monitor.finish()
        if uid is not None:
            UID_POOL.release(uid)
        if ws is not None and not env.keep_workspaces:
            ws.cleanup()
    if env.cancel.is_set():
        traj.close()
        return None
    status = TrialStatus(result.status)
    blank = _blank_files(rd.deliverables_dir(tid), deliverables)
    if status == TrialStatus.ok and len(blank) == len(deliverables):
        status = TrialStatus.no_deliverable
    wall = time.monotonic() - t0
    error = result.error
    if status == TrialStatus.no_deliverable and error is None:

        def listed(items: list[str]) -> str:
            return ", ".join(items[:10]) + (" …" if len(items) > 10 else "")

        why = [f"only empty or whitespace-only files: {listed(blank)}"] if deliverables else []
        why += [f"{len(refused)} refused"] if refused else []
        names = [i.rsplit(": ", 1)[0] for i in ignored]
        if ignored:
            why.append(f"not deliverables (dotfiles, OS or editor junk): {listed(names)}")
        error = (
            "the agent finished without writing any "
            + ("gradeable " if deliverables or ignored else "")
            + "file to the output directory"
            + (f" ({'; '.join(why)})" if why else "")
        )
    traj.emit(
        "trial_end",
        status=status.value,
        error=error,
        deliverables=[d.path for d in deliverables],
        refused=refused,
        ignored=ignored,
        seconds=round(wall, 3),
    )
    traj.close()
    record = TrialRecord(
        trial_id=tid,
        task_id=task.id,
        task_digest=digest,
        agent=spec.agent,
        model=spec.model or "-",
        epoch=epoch,
        status=status,
        deliverables=deliverables,
        refused=refused,
        ignored=ignored,
        started_at=started,
        finished_at=now_iso(),
        wall_seconds=round(wall, 3),
        turns=result.turns,
        usage=result.usage or Usage(),
        settings=spec.settings.as_record(),
        error=error,
        session_id=result.session_id or None,
        details=dict(result.details or {}),
        attempts=list(attempts or []),
        sandbox=env.backend,
        protocol=env.protocol,
        limits=limits.model_dump(),
    )
    rd.write_trial(record)
    return record


def _blank_files(folder: Path, deliverables: list) -> list[str]:
    """Paths of the collected ``deliverables`` (in the run directory's ``folder``) that are
    empty or whitespace-only (:func:`jobbench.deliverable_policy.is_blank`)."""
    from ..deliverable_policy import is_blank

    out = []
    for d in deliverables:
        try:
            if d.size == 0 or is_blank(folder / d.path):
                out.append(d.path)
        except OSError:
            continue
    return out


__all__ = ["TrialEnv", "run_trial_once"]
