"""Sanity-check agents: ``oracle`` (runs the task's reference solution) and ``null``
(writes nothing).

Oracle calling convention (documented in docs/runner.md)::

    python solution/solve.py --workspace <task folder copy> --output <output dir>

run inside the sandbox with no network, the working directory set to the workspace root,
``--workspace`` the directory holding TASK_INSTRUCTIONS.txt and the reference files, and
``--output`` the empty directory to write deliverables to. The solution directory is a
harness-made copy bound read-only at ``/solution`` for the oracle only.
"""

from __future__ import annotations

import shutil
import sys

from ..sandbox import Limits, Mount, SandboxError
from ._base import Agent, AgentContext, AgentResult, InfraError

SOLVE_SCRIPT = "solve.py"


class NullAgent(Agent):
    """Writes nothing: every rubric must fail (its trials end ``no_deliverable``)."""

    name = "null"

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.trajectory.emit("agent_note", text="null agent: no action")
        return AgentResult(status="ok", turns=0)


class OracleAgent(Agent):
    """Runs ``solution/solve.py`` of the task inside the sandbox (no network)."""

    name = "oracle"

    def run(self, ctx: AgentContext) -> AgentResult:
        sol = ctx.task.solution_dir
        if sol is None or not (sol / SOLVE_SCRIPT).is_file():
            return AgentResult(
                status="agent_error", error=f"task {ctx.task.id} has no solution/{SOLVE_SCRIPT}"
            )
        copy = ctx.workspace.private / "solution"
        shutil.copytree(sol, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for p in [copy, *copy.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        sandbox = ctx.make_sandbox(network=False, mounts=[Mount(copy, "/solution")])
        argv = [
            sys.executable,
            f"{sandbox.path_of(copy)}/{SOLVE_SCRIPT}",
            "--workspace",
            sandbox.path_of(ctx.workspace.task_folder),
            "--output",
            sandbox.path_of(ctx.workspace.output),
        ]
        ctx.trajectory.emit("command", argv=argv)
        limits = Limits(
            timeout=ctx.limits.timeout,
            memory_mb=ctx.limits.memory_mb,
            max_processes=ctx.limits.max_processes,
        )
        try:
            res = sandbox.run(argv, limits=limits, cancel=ctx.cancel)
        except SandboxError as exc:
            raise InfraError(str(exc)) from exc
        ctx.trajectory.command_result(res)
        if res.timed_out:
            return AgentResult(
                status="agent_timeout", error=f"solve.py exceeded {ctx.limits.timeout:g} s", turns=0
            )
        if res.exit_code != 0:
            return AgentResult(
                status="agent_error",
                turns=0,
                error=f"solve.py exited with {res.exit_code}: {res.stderr.strip()[-2000:]}",
            )
        return AgentResult(status="ok", turns=0, details={"exit_code": 0})
