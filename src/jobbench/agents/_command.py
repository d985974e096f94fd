"""``--agent command:CMD``: any executable run inside the trial's sandbox under a documented
contract (docs/runner.md, "Your own agent: command:CMD").

Contract (all paths as the command sees them):

* **command line**: ``CMD`` split like a shell would (:func:`shlex.split`), nothing appended;
  its first word is a path or a name on the harness's PATH. The executable's directory is
  bound read-only at its host path (with a script's interpreter installation), so files
  beside it are visible; the dataset, the run directory and other trials stay masked.
* **working directory**: the task folder (``/workspace/task_folder``).
* **environment** (nothing else of the harness's environment is passed, except names given
  with ``--agent-env``):

  ========================== ===================================================
  ``JOBBENCH_TASK_DIR``       the task folder (holds ``TASK_INSTRUCTIONS.txt``)
  ``JOBBENCH_OUTPUT_DIR``     the empty directory to write deliverables to
  ``JOBBENCH_PROMPT``         the standard prompt (text)
  ``JOBBENCH_PROMPT_FILE``    the same prompt in a file
  ``JOBBENCH_EVENTS_FILE``    where the command may append JSONL events (below)
  ``JOBBENCH_MODEL``          the model (``command:CMD@MODEL`` or ``--model``), when given
  ``JOBBENCH_API_BASE``       OpenAI-compatible endpoint (``--api-base``), when given
  ``JOBBENCH_API_KEY``        its key, when set (also ``OPENAI_BASE_URL``/``OPENAI_API_KEY``)
  ``JOBBENCH_TIMEOUT``        the trial's time limit in seconds
  ``JOBBENCH_MAX_TURNS``      the turn cap, when set
  ``JOBBENCH_SETTINGS``       the model settings as a JSON object
  ``JOBBENCH_ATTEMPT``        1-based attempt within the trial
  ========================== ===================================================

* **exit status**: 0 = finished (the trial is ``ok``, or ``no_deliverable`` without output);
  :data:`EXIT_INFRA` (75, ``EX_TEMPFAIL``) = an infrastructure failure such as the model API
  being unreachable (``infra_error``, retried, never scored); any other status =
  ``agent_error``; killed at the time limit = ``agent_timeout``.
* **events** (optional): one JSON object per line in ``$JOBBENCH_EVENTS_FILE``; each becomes
  an ``agent_event`` of the trajectory. Understood types: ``message`` (``role`` ``user`` /
  ``assistant`` / ``tool``, ``content``; an assistant's ``tool_calls`` =
  ``[{"id", "name", "arguments"}]``, a tool's ``tool_call_id``), ``usage`` (one model call:
  ``input_tokens``, ``cached_input_tokens``, ``output_tokens``, optional ``cost_usd``; summed
  into the trial's usage, each one a turn), ``session`` (``id``) and ``error`` (``message``).
  Lines that are not JSON objects are counted and skipped; at most :data:`MAX_EVENTS_BYTES`.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

from ..records import Usage
from ..sandbox import Limits, Mount, SandboxError
from ._base import Agent, AgentContext, AgentResult, InfraError

PREFIX = "command:"
"""The ``--agent`` prefix naming a command agent: ``command:./my_agent.sh``."""
EXIT_INFRA = 75
"""Exit status by which a command reports an infrastructure failure (``EX_TEMPFAIL``)."""
MAX_EVENTS_BYTES = 50 * 1024 * 1024
"""Bytes of the events file read at most (the rest is ignored, and counted)."""


def _int(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else 0


def read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON-object lines of an events file written by the command (hostile input).

    The file is opened without following a symbolic link and read up to
    :data:`MAX_EVENTS_BYTES`.

    Returns:
        ``(events, skipped)``: the objects in order, and how many lines were not JSON
        objects (or lay past the size cap). A missing or unreadable file gives ``([], 0)``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return [], 0
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # a FIFO or device: not read
            return [], 0
        data = f.read(MAX_EVENTS_BYTES + 1)
    truncated = len(data) > MAX_EVENTS_BYTES
    events: list[dict[str, Any]] = []
    skipped = 0
    lines = data[:MAX_EVENTS_BYTES].decode("utf-8", "replace").splitlines()
    if truncated and lines:
        lines.pop()
        skipped += 1
    for line in lines:
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            skipped += 1
            continue
        if isinstance(ev, dict):
            events.append(ev)
        else:
            skipped += 1
    return events, skipped


class CommandAgent(Agent):
    """Runs ``command`` in the trial's sandbox under the contract of this module.

    Args:
        command: the command line (``CMD`` of ``command:CMD``).
        mounts: extra host paths bound read-only at the same path (``--agent-mount``).
        env: names of harness environment variables passed through (``--agent-env``).
        network: whether the command has the host network (default True: it calls its
            model API; bubblewrap cannot restrict destinations).
    """

    name = "command"
    takes_model = True
    uses_network = True

    def __init__(
        self,
        command: str = "",
        *,
        mounts: list[Path] | None = None,
        env: list[str] | None = None,
        network: bool = True,
    ) -> None:
        if command.startswith(PREFIX):
            command = command[len(PREFIX) :]
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise KeyError(f"agent command:{command}: cannot split the command ({exc})") from None
        if not self.argv:
            raise KeyError("agent command: needs a command, e.g. command:./my_agent.sh")
        self.command = command
        first = self.argv[0]
        # a relative path is taken from the directory the run starts in
        self.executable = os.path.abspath(first) if os.sep in first else first
        self.extra_mounts = [Path(p) for p in (mounts or [])]
        self.extra_env = list(env or [])
        self.network = network

    def describe(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "executable": self.executable,
            "env_passthrough": self.extra_env,
            "network": self.network,
        }

    def _env(self, ctx: AgentContext, sandbox, prompt_file: Path, events: Path) -> dict[str, str]:
        env = {n: os.environ[n] for n in self.extra_env if n in os.environ}
        env.update(
            JOBBENCH_TASK_DIR=sandbox.path_of(ctx.workspace.task_folder),
            JOBBENCH_OUTPUT_DIR=sandbox.path_of(ctx.workspace.output),
            JOBBENCH_PROMPT=ctx.prompt,
            JOBBENCH_PROMPT_FILE=sandbox.path_of(prompt_file),
            JOBBENCH_EVENTS_FILE=sandbox.path_of(events),
            JOBBENCH_TIMEOUT=f"{ctx.limits.timeout:g}",
            JOBBENCH_SETTINGS=json.dumps(ctx.settings.as_record(), sort_keys=True),
            JOBBENCH_ATTEMPT=str(ctx.attempt),
        )
        if ctx.limits.max_turns is not None:
            env["JOBBENCH_MAX_TURNS"] = str(ctx.limits.max_turns)
        if ctx.model:
            env["JOBBENCH_MODEL"] = ctx.model
        ep = ctx.endpoint
        if ep is not None and ep.base_url:
            env["JOBBENCH_API_BASE"] = env["OPENAI_BASE_URL"] = ep.base_url
        if ep is not None and ep.api_key:
            env["JOBBENCH_API_KEY"] = env["OPENAI_API_KEY"] = ep.api_key
        return env

    def run(self, ctx: AgentContext) -> AgentResult:
        from ._cli_agents import install_mounts

        real, mounts, path_dirs = install_mounts(Path(self.executable), "command")
        mounts += [Mount(Path(os.path.abspath(p)), os.path.abspath(p)) for p in self.extra_mounts]
        meta = ctx.workspace.home / ".jobbench"
        meta.mkdir(parents=True, exist_ok=True)
        prompt_file = meta / "prompt.txt"
        prompt_file.write_text(ctx.prompt, encoding="utf-8")
        events_file = meta / "events.jsonl"
        events_file.unlink(missing_ok=True)
        probe = ctx.make_sandbox(mounts=mounts)
        env = self._env(ctx, probe, prompt_file, events_file)
        sandbox = ctx.make_sandbox(
            network=self.network, mounts=mounts, env=env, path_prepend=path_dirs
        )
        argv = [str(real), *self.argv[1:]]
        ctx.trajectory.emit(
            "command",
            argv=argv,
            env_names=sorted(env),
            cwd=sandbox.path_of(ctx.workspace.task_folder),
        )
        limits = Limits(
            timeout=ctx.limits.timeout,
            memory_mb=ctx.limits.memory_mb,
            max_processes=ctx.limits.max_processes,
        )
        try:
            res = sandbox.run(
                argv,
                limits=limits,
                cwd=sandbox.path_of(ctx.workspace.task_folder),
                cancel=ctx.cancel,
            )
        except SandboxError as exc:
            raise InfraError(str(exc)) from exc
        ctx.trajectory.command_result(res)
        events, skipped = read_events(events_file)
        usage, turns, assistant_msgs = Usage(), 0, 0
        session_id: str | None = None
        reported_error: str | None = None
        for ev in events:
            ctx.trajectory.emit("agent_event", event=ev)
            kind = ev.get("type")
            if kind == "usage":
                turns += 1
                cost = ev.get("cost_usd")
                usage = usage + Usage(
                    calls=1,
                    input_tokens=_int(ev.get("input_tokens")),
                    cached_input_tokens=_int(ev.get("cached_input_tokens")),
                    output_tokens=_int(ev.get("output_tokens")),
                    cost_usd=float(cost)
                    if isinstance(cost, int | float) and not isinstance(cost, bool)
                    else None,
                )
            elif kind == "message" and ev.get("role") == "assistant":
                assistant_msgs += 1
            elif kind == "session" and isinstance(ev.get("id"), str):
                session_id = ev["id"][:200]
            elif kind == "error" and isinstance(ev.get("message"), str):
                reported_error = ev["message"][:2000]
        if skipped:
            ctx.trajectory.emit("agent_events_skipped", lines=skipped)
        ctx.price(usage)
        result = AgentResult(
            turns=turns or assistant_msgs,
            usage=usage,
            session_id=session_id,
            details={"exit_code": res.exit_code, "events": len(events)},
        )
        detail = reported_error or res.stderr.strip()[-2000:]
        if res.timed_out:
            result.status = "agent_timeout"
            result.error = f"time limit of {ctx.limits.timeout:g} s reached"
        elif res.exit_code == EXIT_INFRA:
            raise InfraError(f"command reported an infrastructure failure (exit 75): {detail}")
        elif res.exit_code != 0:
            result.status = "agent_error"
            result.error = f"command exited with {res.exit_code}: {detail}"
        return result
