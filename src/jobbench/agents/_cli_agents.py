"""Adapters for coding-agent CLIs run headless inside the sandbox: ``claude-code``,
``codex`` and ``opencode``, and the machinery they share with ``openclaw`` (whose
adapter, in ``_openclaw.py``, reads a result envelope and a session export instead of an
event stream).

Each adapter builds the CLI's headless command line (model, permissions, turn limit where
the CLI has one), passes the standard prompt, streams the CLI's JSON events into the
trajectory (``cli_event`` events; other stdout lines as ``cli_output``) and parses session
id, turns, tokens and cost when the stream reports them. The CLI process gets the network
(it calls its model API) and a fresh per-trial HOME; credentials come from the environment
variables listed in ``env_passthrough`` (never written to disk by JobBench).

Event formats the parsers are based on (recorded-format fixtures in tests/runner/):

* Claude Code ``claude -p --output-format stream-json --verbose`` (Claude Code 2.1.x):
  ``{"type":"system","subtype":"init","session_id",…}``, ``{"type":"assistant",
  "message":{"id","usage":{…}}}``, ``{"type":"user",…}`` and a final ``{"type":"result",
  "subtype":"success"|"error_max_turns"|"error_during_execution","is_error","num_turns",
  "session_id","total_cost_usd","usage":{"input_tokens","cache_creation_input_tokens",
  "cache_read_input_tokens","output_tokens"},"api_error_status"?}`` — Claude Agent SDK
  result message as documented by Anthropic and mirrored by the ``claude-codes`` crate 2.1.x.
  Anthropic's ``input_tokens`` excludes cache reads and writes; we add them back so that
  ``Usage.input_tokens`` counts every prompt token.
* Codex CLI ``codex exec --json`` (0.101 era, unchanged in 0.171): ``thread.started``
(``thread_id``),
  ``turn.started``, ``item.started/updated/completed`` (``item.type`` ``agent_message``,
  ``reasoning``, ``command_execution``, ``file_change``, …), ``turn.completed``
  (``usage``: ``input_tokens`` incl. ``cached_input_tokens``, ``output_tokens``),
  ``turn.failed`` (``error.message``) and ``error`` (``message``) — per the ``codex-codes``
  crate 0.101 event types. Codex reports no cost.
* OpenCode ``opencode run --format json`` (1.14.18, the official JobBench reference pin,
  through 1.18.x): ``{"type":"step_start"|"text"|"tool_use"|"step_finish"|"error",
  "timestamp","sessionID","part":{…}}``; ``step_finish.part`` has ``cost`` and ``tokens``
  ``{input, output, reasoning, cache:{read, write}}``; one step = one model call.

These formats were first taken from the references above and then checked against the
live binaries @openai/codex 0.171.0, opencode-ai 1.18.33 and @anthropic-ai/claude-code
2.1.332 (2026-11-29) driven against a scripted local model server
(``tests/runner/test_cli_agents_real.py``, ``scripts/verify_cli_agents.sh``). What those
versions changed or revealed: Codex emits ``item.completed`` items of type ``error``
(warnings) and ``error`` events for retries it recovers from, adds
``cache_write_input_tokens`` / ``reasoning_output_tokens`` (a part of ``output_tokens``) to
``turn.completed.usage``, sums a turn's model calls into one ``turn.completed``, and keeps
its native binary in the sibling npm package ``@openai/codex-linux-x64``; Claude Code
reports API errors as an ``assistant`` message of model ``<synthetic>`` plus a ``result``
with ``subtype`` ``success``, ``is_error`` true and ``api_error_status``; OpenCode reports
``tokens.input`` without cache reads, cost 0 for unpriced models and ``error.data.statusCode``.
Each adapter is also unit-tested against a fake executable emitting these shapes.

A misconfigured endpoint, as those versions report it (recorded against a scripted server
in ``tests/runner/{codex,opencode,claude_code}_recorded/``, replayed by
``tests/runner/test_cli_recorded_failures.py``): Codex prints ``unexpected status 404 Not
Found: <body>, url: …`` in ``error`` events (``Reconnecting... N/5 (…)``) and a final
``turn.failed``, and for an unknown model only the server's text; OpenCode an ``error``
event with ``data.statusCode`` and ``data.responseBody``; Claude Code a ``<synthetic>``
assistant message and a ``result`` with ``api_error_status`` (the same text for a 404 on
the path and an unknown model), and for a 401 ``system``/``api_retry`` events with
``error_status`` until it is killed at the time limit. Each parser keeps the last such
failure seen before the model's first answer (``EventParser.endpoint_failure``, classified
by :func:`jobbench.endpoint.classify_failure`); a run that ends with one, or whose model
calls all had 0 tokens and left the output directory empty, is an ``infra_error``
(:meth:`CliAgent._raise_endpoint_failure`), never the agent's failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..endpoint import Failure, classify_failure
from ..records import Usage
from ..sandbox import Limits, Mount, Sandbox, SandboxError, safefs
from ._base import Agent, AgentContext, AgentResult, InfraError
from ._protocol import (
    OPENCODE_CHUNK_TIMEOUT_MS,
    OPENCODE_DEFAULT_CONTEXT,
    OPENCODE_OUTPUT_TOKEN_MAX,
    OPENCODE_PROVIDER_TIMEOUT,
    codex_public_effort,
)

_INFRA_RE = re.compile(
    r"\b(408|429|500|502|503|504|529)\b|rate.?limit|overloaded|too many requests|connection "
    r"(error|reset|refused|closed)"
    r"|connection failed|waiting for "
    r"network|ECONNRESET|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|getaddrinfo|stream disconnected|network "
    r"error|unauthori[sz]ed"
    r"|invalid (x-)?api.?key|authentication|credit balance|quota|service unavailable|internal "
    r"server error",
    re.IGNORECASE,
)


# a server's "no such model" text (OpenAI: "The model `x` does not exist or you do not have
# access to it."), the only evidence Codex 0.171 prints for an unknown model
_NO_MODEL_RE = re.compile(
    r"\bmodel\b[^.]{0,80}\b(?:does not exist|not found)\b|model_not_found|no such model",
    re.IGNORECASE,
)


def looks_like_infra(message: str | None) -> bool:
    """True when an error message describes the model API or the network rather than the
    agent's work (rate limits, 5xx, connection and authentication failures)."""
    return bool(message) and bool(_INFRA_RE.search(message or ""))


class EventParser:
    """Accumulates facts from a CLI's JSON event stream.

    Attributes:
        session_id, turns, usage (:class:`Usage`; ``cost_usd`` None when not reported),
        error (fatal error message or None), infra (error looks like an API/network
        failure), budget (a CLI-side budget such as max turns ended the run),
        final_text (last assistant text), notice (last non-fatal error notice, e.g. a
        retry the CLI recovered from; used only to explain a non-zero exit),
        model_answered (the model has answered: a response with tokens, text or a tool call),
        endpoint_failure (:class:`jobbench.endpoint.Failure` of the last failed model
        request the CLI reported before the model first answered, from its HTTP status
        and the server's text; None without such evidence).
    """

    def __init__(self) -> None:
        self.model_answered = False
        self.endpoint_failure: Failure | None = None
        self.session_id: str | None = None
        self.turns: int | None = None
        self.usage = Usage()
        self.error: str | None = None
        self.infra = False
        self.budget: str | None = None
        self.final_text: str | None = None
        self.notice: str | None = None
        self.events = 0

    def feed(self, event: dict[str, Any]) -> None:
        """Consume one decoded JSON event."""
        self.events += 1
        self._feed(event)

    @abstractmethod
    def _feed(self, event: dict[str, Any]) -> None: ...

    def _endpoint_evidence(self, status: int | None, body: Any, api: str) -> None:
        """Record a failed model request the CLI reported (``status``: its HTTP status, or
        None when the CLI printed only the server's text), classified by
        :func:`jobbench.endpoint.classify_failure`; ignored once the model has answered."""
        if self.model_answered:
            return
        if status is not None:
            self.endpoint_failure = classify_failure(status, body, api=api)
            return
        # no status: evidence only when the text says the model does not exist (classified
        # as if the server had answered 404, then the status is left unknown)
        failure = classify_failure(404, body, api=api)
        if failure.kind == "model" and _NO_MODEL_RE.search(failure.message):
            self.endpoint_failure = Failure(False, "model", None, failure.message, failure.hint)

    def _set_error(self, message: str | None, *, infra: bool | None = None) -> None:
        if not message:
            return
        self.error = str(message)[:4000]
        self.infra = looks_like_infra(self.error) if infra is None else infra


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


class ClaudeCodeParser(EventParser):
    """Claude Code ``stream-json`` events (see module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._msg_usage: dict[str, dict] = {}
        self._have_result = False

    def _feed(self, ev: dict[str, Any]) -> None:
        t = ev.get("type")
        if isinstance(ev.get("session_id"), str) and not self.session_id:
            self.session_id = ev["session_id"]
        if t == "assistant":
            msg = ev.get("message") or {}
            mid = msg.get("id") or f"_{len(self._msg_usage)}"
            # Claude Code 2.1.332 reports an API error as an assistant message of model
            # "<synthetic>" with zero usage: not a model call
            if isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
                self._msg_usage[mid] = msg["usage"]
                self.model_answered = True
            elif isinstance(ev.get("api_error_status"), int):
                self._claude_evidence(ev, msg.get("content"))
            for block in msg.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    self.final_text = block.get("text")
            if not self._have_result:
                self._usage_from_messages()
        elif t == "system" and ev.get("subtype") == "api_retry":
            # Claude Code 2.1.332 retries a failed request (even a 401) with backoff,
            # printing {"subtype":"api_retry","error_status":401,"error":"authentication_failed"}
            if isinstance(ev.get("error_status"), int):
                self._endpoint_evidence(ev["error_status"], str(ev.get("error") or ""), "messages")
        elif t == "result":
            self._have_result = True
            if isinstance(ev.get("session_id"), str):
                self.session_id = ev["session_id"]
            if ev.get("num_turns") is not None:
                self.turns = _int(ev.get("num_turns"))
            u = ev.get("usage") or {}
            cache_read = _int(u.get("cache_read_input_tokens"))
            cache_write = _int(u.get("cache_creation_input_tokens"))
            self.usage = Usage(
                calls=len(self._msg_usage) or self.turns or 0,
                input_tokens=_int(u.get("input_tokens")) + cache_read + cache_write,
                cached_input_tokens=cache_read,
                output_tokens=_int(u.get("output_tokens")),
                cost_usd=float(ev["total_cost_usd"])
                if isinstance(ev.get("total_cost_usd"), (int, float))
                else None,
            )
            if isinstance(ev.get("result"), str):
                self.final_text = ev["result"]
            subtype = str(ev.get("subtype") or "")
            if subtype == "error_max_turns":
                self.budget = "Claude Code stopped at its --max-turns limit"
            elif ev.get("is_error") or subtype.startswith("error"):
                status = ev.get("api_error_status")
                msg = ev.get("result") if isinstance(ev.get("result"), str) else None
                errors = ev.get("errors")
                if not msg and isinstance(errors, list) and errors:
                    msg = "; ".join(str(e) for e in errors)
                msg = msg or subtype or "error"
                known = self.endpoint_failure
                # the synthetic assistant message before it carries the error code as well
                if isinstance(status, int) and (known is None or known.status != status):
                    self._claude_evidence(ev, msg)
                infra = (
                    True
                    if isinstance(status, int) and (status in (401, 403, 408, 429) or status >= 500)
                    else None
                )
                # Claude Code 2.1.332 reports API errors as subtype "success" with is_error
                prefix = subtype if subtype.startswith("error") and subtype not in msg else ""
                self._set_error(f"{prefix}: {msg}" if prefix else msg, infra=infra)

    def _claude_evidence(self, ev: dict[str, Any], text: Any) -> None:
        """An API error Claude Code reported (``api_error_status``) with its text and
        error code (``error``: ``model_not_found``, ``authentication_failed``, …)."""
        if isinstance(text, list):
            text = " ".join(
                str(b.get("text")) for b in text if isinstance(b, dict) and b.get("text")
            )
        code = ev.get("error") if isinstance(ev.get("error"), str) else None
        body = f"{text} ({code})" if code and text else str(text or code or "")
        self._endpoint_evidence(ev["api_error_status"], body, "messages")

    def _usage_from_messages(self) -> None:
        inp = cached = out = 0
        for u in self._msg_usage.values():
            cr = _int(u.get("cache_read_input_tokens"))
            inp += _int(u.get("input_tokens")) + cr + _int(u.get("cache_creation_input_tokens"))
            cached += cr
            out += _int(u.get("output_tokens"))
        self.usage = Usage(
            calls=len(self._msg_usage),
            input_tokens=inp,
            cached_input_tokens=cached,
            output_tokens=out,
        )
        self.turns = len(self._msg_usage)


# "unexpected status 401 Unauthorized: <server text>, url: http://…/v1/responses"
_CODEX_STATUS_RE = re.compile(
    r"unexpected status (\d{3})(?: [A-Za-z' -]+?)?: (.*?)(?:, url: \S+)?$", re.DOTALL
)


class CodexParser(EventParser):
    """Codex ``exec --json`` events (see module docstring). ``turns`` counts model
    responses (completed agent messages, reasoning items excluded, and tool-call items)."""

    def __init__(self) -> None:
        super().__init__()
        self.turn_events = 0

    def _feed(self, ev: dict[str, Any]) -> None:
        t = ev.get("type")
        if t == "thread.started" and isinstance(ev.get("thread_id"), str):
            self.session_id = ev["thread_id"]
        elif t == "turn.completed":
            self.turn_events += 1
            self._add_usage(ev.get("usage"))
        elif t == "turn.failed":
            self._add_usage(ev.get("usage"))
            err = ev.get("error") or {}
            message = err.get("message") if isinstance(err, dict) else str(err)
            self._codex_evidence(message, status_only=False)
            self._set_error(message)
        elif t == "error":
            # Codex 0.171 also emits "error" events for retries it recovers from
            # ("Reconnecting... 1/5 (…)"); only turn.failed or a non-zero exit is fatal
            self.notice = str(ev.get("message") or json.dumps(ev)[:500])[:4000]
            self._codex_evidence(self.notice, status_only=True)
        elif t in ("item.started", "item.updated", "item.completed"):
            item = ev.get("item") or {}
            kind = item.get("type") or item.get("item_type")
            if kind != "error":  # "error" items are Codex's own warnings
                self.model_answered = True
            if t != "item.completed":
                return
            if kind == "agent_message" and isinstance(item.get("text"), str):
                self.final_text = item["text"]
            if kind in (
                "agent_message",
                "command_execution",
                "file_change",
                "mcp_tool_call",
                "web_search",
            ):
                self.turns = (self.turns or 0) + 1

    def _codex_evidence(self, message: Any, *, status_only: bool) -> None:
        """Codex 0.171 prints a failed request as ``unexpected status 404 Not Found: <body>,
        url: <url>`` (inside ``Reconnecting... N/5 (…)`` while it retries); a model the
        server does not know only as the server's text (``turn.failed``, no status)."""
        if not isinstance(message, str):
            return
        m = _CODEX_STATUS_RE.search(message)
        if m:
            body = m.group(2)
            if status_only:  # "Reconnecting... 1/5 (<failure>)"
                body = body.removesuffix(")")
            self._endpoint_evidence(int(m.group(1)), body, "responses")
        elif not status_only:
            self._endpoint_evidence(None, message, "responses")

    def _add_usage(self, u: Any) -> None:
        if not isinstance(u, dict):
            return
        if _int(u.get("input_tokens")) or _int(u.get("output_tokens")):
            self.model_answered = True
        self.usage = self.usage + Usage(
            calls=1,
            input_tokens=_int(u.get("input_tokens")),
            cached_input_tokens=_int(u.get("cached_input_tokens")),
            output_tokens=_int(u.get("output_tokens")),
        )


class OpenCodeParser(EventParser):
    """OpenCode ``run --format json`` events (see module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._cost = 0.0
        self._priced = False

    def _feed(self, ev: dict[str, Any]) -> None:
        t = ev.get("type")
        if isinstance(ev.get("sessionID"), str) and not self.session_id:
            self.session_id = ev["sessionID"]
        part = p if isinstance(p := ev.get("part"), dict) else {}
        if t == "step_finish":
            self.turns = (self.turns or 0) + 1
            tok = part.get("tokens") or {}
            cache = tok.get("cache") or {}
            cost = part.get("cost")
            if isinstance(cost, (int, float)) and cost > 0:
                self._cost += float(cost)
                self._priced = True
            step = Usage(
                calls=1,
                input_tokens=_int(tok.get("input"))
                + _int(cache.get("read"))
                + _int(cache.get("write")),
                cached_input_tokens=_int(cache.get("read")),
                output_tokens=_int(tok.get("output")) + _int(tok.get("reasoning")),
            )
            if step.input_tokens or step.output_tokens:
                self.model_answered = True
            self.usage = self.usage + step
            # OpenCode 1.18 reports cost 0 for a model without a price in its catalog (any
            # custom provider): that is "unknown", not "free", so --price-in/out can apply
            self.usage.cost_usd = self._cost if self._priced else None
        elif t == "text" and isinstance(part.get("text"), str):
            self.final_text = part["text"]
            self.model_answered = self.model_answered or bool(part["text"].strip())
        elif t == "tool_use":
            self.model_answered = True
        elif t == "error":
            err = ev.get("error") or {}
            msg = None
            if isinstance(err, dict):
                data = d if isinstance(d := err.get("data"), dict) else {}
                msg = data.get("message") or err.get("message") or err.get("name")
                if err.get("name") and msg and err["name"] not in msg:
                    msg = f"{err['name']}: {msg}"
                status = data.get("statusCode")
                if isinstance(status, int):
                    body = data.get("responseBody") or data.get("message") or ""
                    self._endpoint_evidence(status, body, "chat")
                    msg = f"{msg} (HTTP {status})"
                    if status in (401, 403, 408, 429) or status >= 500:
                        self._set_error(msg, infra=True)
                        return
            self._set_error(msg or json.dumps(ev)[:500])


def install_mounts(
    executable: Path, agent: str | None = None
) -> tuple[Path, list[Mount], list[str]]:
    """Read-only mounts a CLI needs inside the sandbox: its install directory (for an npm
    package, the whole ``node_modules`` directory holding it, because the native binary
    lives in a sibling platform package) and, for a script, its interpreter's installation;
    all at their host paths so shebangs work.

    Args:
        executable: the CLI (a path or a name on the host PATH).
        agent: the adapter's name, for the hint in the error (``--agent-bin NAME=PATH``).

    Returns:
        ``(real executable path, mounts, PATH entries to prepend)``.

    Raises:
        InfraError: the executable is not found.
    """
    found = shutil.which(str(executable))
    if found is None:
        raise InfraError(
            f"agent executable {executable} not found on PATH "
            f"({missing_executable_hint(agent or str(executable))})"
        )
    real = Path(os.path.realpath(found))
    mounts: list[Mount] = []
    path_dirs: list[str] = []

    def add(p: Path) -> None:
        if p.parts[:2] == ("/", "usr") or any(m.source == p for m in mounts):
            return
        mounts.append(Mount(p, str(p)))

    parts = real.parts
    if "node_modules" in parts:
        # the whole node_modules directory: npm packages of native CLIs keep the binary in a
        # sibling platform package (@openai/codex -> @openai/codex-linux-x64, opencode-ai ->
        # opencode-linux-x64), which the launcher resolves at run time
        i = len(parts) - 1 - parts[::-1].index("node_modules")
        add(Path(*parts[: i + 1]))
    else:
        add(real.parent)
    try:
        with open(real, "rb") as f:
            head = f.read(256)
    except OSError:
        head = b""
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        interp = None
        if words and os.path.basename(words[0]) == "env":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest:
                interp = shutil.which(rest[0])
        elif words:
            interp = words[0]
        if interp:
            ireal = Path(os.path.realpath(interp))
            home = ireal.parent.parent if ireal.parent.name == "bin" else ireal.parent
            add(home)
            path_dirs.append(str(Path(interp).parent))
            if str(ireal.parent) not in path_dirs:
                path_dirs.append(str(ireal.parent))
    return real, mounts, path_dirs


def missing_executable_hint(agent: str) -> str:
    """How to name the CLI of adapter ``agent`` when it is not found (part of the
    ``infra_error`` message)."""
    var = f"JOBBENCH_{agent.upper().replace('-', '_')}_BIN"
    return (
        f"name it with --agent-bin {agent}=PATH or {var}, or set JOBBENCH_CLI_PREFIX to "
        "the npm prefix holding node_modules/.bin/ (scripts/verify_cli_agents.sh installs "
        "there)"
    )


def default_cli_executable(agent: str, default: str) -> str:
    """The executable of adapter ``agent`` when none is given: ``$JOBBENCH_<AGENT>_BIN``,
    else ``$JOBBENCH_CLI_PREFIX/node_modules/.bin/<default>`` when that file is executable
    (the npm prefix scripts/verify_cli_agents.sh installs into), else ``default`` (looked up
    on PATH when the trial starts)."""
    env_var = f"JOBBENCH_{agent.upper().replace('-', '_')}_BIN"
    if os.environ.get(env_var):
        return os.environ[env_var]
    prefix = os.environ.get("JOBBENCH_CLI_PREFIX")
    if prefix:
        candidate = Path(prefix, "node_modules", ".bin", default)
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return default


def npm_package(executable: Path) -> tuple[Path, dict[str, Any]] | None:
    """The npm package that holds ``executable`` (a real path, symlinks resolved): the
    nearest ancestor directory inside a ``node_modules`` tree with a ``package.json``.

    Returns:
        ``(package directory, parsed package.json)``, or None for an executable that is not
        inside a ``node_modules`` tree or whose ``package.json`` is unreadable.
    """
    parts = executable.parts
    if "node_modules" not in parts:
        return None
    top = len(parts) - 1 - parts[::-1].index("node_modules")
    for i in range(len(parts) - 1, top, -1):
        candidate = Path(*parts[:i]) / "package.json"
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return (candidate.parent, data) if isinstance(data, dict) else None
    return None


def cli_version(executable: str | Path) -> str | None:
    """Version of an npm-installed CLI (``version`` of its package's ``package.json``,
    e.g. ``"0.171.0"``), or None when the executable is not found or not an npm install."""
    found = shutil.which(str(executable))
    if found is None:
        return None
    pkg = npm_package(Path(os.path.realpath(found)))
    version = pkg[1].get("version") if pkg else None
    return str(version) if isinstance(version, str) else None


class CliAgent(Agent):
    """Common machinery of the CLI adapters.

    Args:
        executable: CLI path or name (default: :func:`default_cli_executable`: the
            ``JOBBENCH_<NAME>_BIN`` environment variable, else the CLI under
            ``$JOBBENCH_CLI_PREFIX/node_modules/.bin/``, else ``default_executable`` on PATH).
        mounts: extra host paths to bind read-only (at the same path) inside the sandbox.
        env: extra environment variable names to pass through from the harness.
        home_seed: a directory copied into the trial's HOME before each attempt (e.g. a
            config directory; its directories and regular files, symbolic links skipped);
            whatever an earlier attempt left in the way is replaced, never followed; never
            written back.
        api_base: a model endpoint to use instead of the CLI's default provider (codex and
            opencode: an OpenAI-compatible base URL such as ``http://host:8000/v1``;
            claude-code: an Anthropic Messages API base URL, set as ``ANTHROPIC_BASE_URL``).
            Its key is taken from ``JOBBENCH_API_KEY`` (else the CLI's usual variable) and
            passed to the CLI as the environment variable ``JOBBENCH_API_KEY``.
    """

    uses_network = True
    needs_model = True
    default_executable: ClassVar[str]
    env_passthrough: ClassVar[tuple[str, ...]] = ()
    parser_class: ClassVar[type[EventParser]]

    def __init__(
        self,
        *,
        executable: str | Path | None = None,
        mounts: list[Path] | None = None,
        env: list[str] | None = None,
        home_seed: Path | None = None,
        api_base: str | None = None,
    ) -> None:
        self.executable = str(
            executable or default_cli_executable(self.name, self.default_executable)
        )
        self.extra_mounts = [Path(p) for p in (mounts or [])]
        self.extra_env = list(env or [])
        self.home_seed = home_seed
        self.api_base = str(api_base).rstrip("/") if api_base else None
        self._version: str | None | Literal[False] = False  # False: not probed yet

    def version(self, sandbox: Sandbox | None = None, executable: str | None = None) -> str | None:
        """The CLI's version: the first ``X.Y.Z`` printed by ``<executable> --version`` run
        in ``sandbox`` (without network, 20 s), probed once per adapter instance; None
        when not probed yet or it cannot be told. The executable is never run outside the
        sandbox."""
        if self._version is False and sandbox is not None:
            self._version = _probe_version(sandbox, executable or self.executable)
        return self._version or None

    @property
    def endpoint(self) -> str | None:
        """The custom model endpoint in effect (``api_base``), or None."""
        return self.api_base

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "executable": self.executable,
            "version": cli_version(self.executable),
            "env_passthrough": list(self.env_passthrough) + self.extra_env,
        }
        if self.endpoint:
            from urllib.parse import urlsplit, urlunsplit

            parts = urlsplit(self.endpoint)  # recorded without user-info (credentials)
            netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
            d["api_base"] = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
        return d

    def preflight_targets(self, model, endpoint) -> list:
        """With ``api_base``: Chat Completions with tools there (OpenCode's
        ``@ai-sdk/openai-compatible`` provider, OpenClaw's ``openai-completions``); without
        one the CLI's own provider is not probed (its credentials may live in a seeded
        HOME)."""
        from ..endpoint import PreflightTarget

        if not model or not self.api_base:
            return []
        key = self._endpoint_key("OPENAI_API_KEY")
        return [PreflightTarget("chat", self.api_base, str(model), api_key=key, who=self.name)]

    def _endpoint_key(self, *fallbacks: str) -> str:
        """The key for :attr:`api_base` (``JOBBENCH_API_KEY``, else the first of
        ``fallbacks`` set in the harness environment, else a placeholder for keyless local
        servers)."""
        for name in ("JOBBENCH_API_KEY", *fallbacks):
            if os.environ.get(name):
                return os.environ[name]
        return "none"

    @abstractmethod
    def build_argv(self, exe: str, ctx: AgentContext, workspace: str) -> list[str]:
        """The headless command line."""

    def build_env(self, ctx: AgentContext) -> dict[str, str]:
        """Environment inside the sandbox (credentials passed through by name)."""
        env = {}
        for name in list(self.env_passthrough) + self.extra_env:
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    def ignored_settings(self, ctx: AgentContext) -> list[str]:
        """Model settings this CLI cannot take (recorded in the trajectory)."""
        return []

    def run(self, ctx: AgentContext) -> AgentResult:
        if not ctx.model:
            return AgentResult(status="agent_error", error=f"{self.name} needs --model")
        real, mounts, path_dirs = install_mounts(Path(self.executable), self.name)
        mounts += [Mount(Path(os.path.abspath(p)), os.path.abspath(p)) for p in self.extra_mounts]
        if self.home_seed is not None:
            # HOME may hold what an earlier attempt planted: nothing in it is followed
            safefs.copy_tree_into(Path(self.home_seed), ctx.workspace.home)
        env = self.build_env(ctx)
        self.version(ctx.make_sandbox(mounts=mounts, path_prepend=path_dirs), str(real))
        sandbox = ctx.make_sandbox(network=True, mounts=mounts, env=env, path_prepend=path_dirs)
        argv = self.build_argv(str(real), ctx, sandbox.path_of(ctx.workspace.workspace))
        ignored = self.ignored_settings(ctx)
        ctx.trajectory.emit(
            "command",
            argv=[a if len(a) < 2000 else a[:2000] + "…" for a in argv],
            env_names=sorted(env),
            ignored_settings=ignored,
            protocol=ctx.protocol,
            cli_version=self.version(),
        )
        parser = self.parser_class()

        def on_line(line: str) -> None:
            if not line.strip():
                return
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                ctx.trajectory.emit("cli_output", text=line[:20000])
                return
            if isinstance(ev, dict):
                parser.feed(ev)
                ctx.trajectory.emit("cli_event", event=ev)
            else:
                ctx.trajectory.emit("cli_output", text=line[:20000])

        limits = Limits(
            timeout=ctx.limits.timeout,
            memory_mb=None,
            max_processes=ctx.limits.max_processes,
            max_open_files=4096,
        )
        try:
            res = sandbox.run(argv, limits=limits, cancel=ctx.cancel, on_stdout_line=on_line)
        except SandboxError as exc:
            raise InfraError(str(exc)) from exc
        ctx.trajectory.emit(
            "cli_exit",
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            seconds=round(res.wall_seconds, 3),
            stderr=res.stderr[-20000:],
        )
        usage = parser.usage
        ctx.price(usage)
        result = AgentResult(
            turns=parser.turns,
            usage=usage,
            session_id=parser.session_id,
            details={
                "exit_code": res.exit_code,
                "events": parser.events,
                "timed_out": res.timed_out,
                "cli_version": self.version(),
            },
        )
        self._raise_endpoint_failure(ctx, parser, res.timed_out)
        if (
            res.timed_out
            and not (usage.input_tokens or usage.output_tokens)
            and looks_like_infra(parser.notice)
        ):
            # never got a model response, and the CLI said why (Codex 0.171 waits for the
            # network indefinitely: "Reconnecting... waiting for network")
            raise InfraError(
                f"{self.name}: no model response within {ctx.limits.timeout:g} s: {parser.notice}"
            )
        if res.timed_out:
            result.status = "agent_timeout"
            result.error = f"time limit of {ctx.limits.timeout:g} s reached"
        elif parser.budget:
            result.status = "agent_timeout"
            result.error = parser.budget
        elif parser.error or res.exit_code != 0:
            detail = parser.notice or res.stderr.strip()[-2000:]
            msg = parser.error or f"{self.name} exited with {res.exit_code}: {detail}"
            if parser.infra or (
                parser.error is None
                and looks_like_infra(f"{parser.notice or ''}\n{res.stderr[-4000:]}")
            ):
                raise InfraError(f"{self.name}: {msg}")
            result.status = "agent_error"
            result.error = msg
        return result

    def _raise_endpoint_failure(
        self, ctx: AgentContext, parser: EventParser, timed_out: bool
    ) -> None:
        """Raise :class:`InfraError` when the model endpoint, not the agent, ended the run.

        Two cases, both before the model's first answer (``parser.model_answered`` False): the
        CLI reported a failed model request (``parser.endpoint_failure``: HTTP status and
        server text; the error is permanent unless the status is transient, cause = the
        failure's kind), whatever the exit (a non-zero exit, a ``turn.failed``, or a time
        limit reached while the CLI kept retrying); or every model call the CLI reported
        had 0 tokens and the output directory is empty (cause ``zero_tokens``, permanent).
        """
        if parser.model_answered:
            return
        failure = parser.endpoint_failure
        if failure is not None:
            where = f"HTTP {failure.status}" if failure.status is not None else "the server said"
            limit = f" until the time limit of {ctx.limits.timeout:g} s" if timed_out else ""
            raise InfraError(
                f"{self.name}: the model endpoint failed before the model answered{limit}: "
                f"{where}: {failure.message or '(empty body)'} ({failure.hint})",
                permanent=not failure.transient,
                cause=failure.kind,
            )
        usage = parser.usage
        if usage.calls and not (usage.input_tokens or usage.output_tokens):
            try:
                produced = any(ctx.workspace.output.iterdir())
            except OSError:
                produced = False
            if not produced:
                raise InfraError(
                    f"{self.name}: the endpoint answered with 0 tokens ({usage.calls} model "
                    f"call(s) with 0 input and 0 output tokens) and the agent produced "
                    "nothing: check that the server at the base URL speaks the API this CLI "
                    "uses and reports usage",
                    permanent=True,
                    cause="zero_tokens",
                )


class ClaudeCodeAgent(CliAgent):
    """Claude Code: ``claude -p PROMPT --output-format stream-json --verbose --model M
    --permission-mode bypassPermissions --max-turns N [--effort E]``; under the ``public``
    protocol, as the published runner: no ``--max-turns`` unless a cap is set explicitly,
    ``--add-dir WORKSPACE`` and ``CLAUDE_NONINTERACTIVE=1``.

    ``reasoning_effort`` maps to ``--effort`` (Claude Code 2.1+, levels low/medium/high/
    xhigh/max)
    and ``max_output_tokens`` to ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``; ``temperature`` is not
    settable and is recorded as ignored. ``IS_SANDBOX=1`` lets the permission bypass run
    in our sandbox. Credentials: ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``,
    ``ANTHROPIC_BASE_URL``, Bedrock/Vertex variables); ``api_base`` sets
    ``ANTHROPIC_BASE_URL`` (an Anthropic Messages API endpoint)."""

    name = "claude-code"
    default_executable = "claude"
    parser_class = ClaudeCodeParser
    env_passthrough = (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "AWS_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "CLOUD_ML_REGION",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "HTTPS_PROXY",
        "HTTP_PROXY",
    )

    def build_argv(self, exe: str, ctx: AgentContext, workspace: str) -> list[str]:
        argv = [
            exe,
            "-p",
            ctx.prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            str(ctx.model),
            "--permission-mode",
            "bypassPermissions",
        ]
        if ctx.limits.max_turns is not None:
            argv += ["--max-turns", str(ctx.limits.max_turns)]
        if ctx.protocol == "public":
            argv += ["--add-dir", workspace]
        if ctx.settings.reasoning_effort:
            argv += ["--effort", ctx.settings.reasoning_effort]
        return argv

    def build_env(self, ctx: AgentContext) -> dict[str, str]:
        env = super().build_env(ctx)
        env.update(
            {
                "IS_SANDBOX": "1",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
        )
        if ctx.protocol == "public":
            env["CLAUDE_NONINTERACTIVE"] = "1"
        if self.api_base:
            env["ANTHROPIC_BASE_URL"] = self.api_base
            if "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env:
                env["ANTHROPIC_API_KEY"] = self._endpoint_key()
        if ctx.settings.max_output_tokens:
            env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(ctx.settings.max_output_tokens)
        return env

    def ignored_settings(self, ctx: AgentContext) -> list[str]:
        return ["temperature"] if ctx.settings.temperature is not None else []

    def preflight_targets(self, model, endpoint) -> list:
        """The Anthropic Messages API at ``api_base`` (else ``ANTHROPIC_BASE_URL``, else
        api.anthropic.com when ``ANTHROPIC_API_KEY`` is set)."""
        from ..endpoint import PreflightTarget

        base = self.api_base or os.environ.get("ANTHROPIC_BASE_URL")
        key = os.environ.get("ANTHROPIC_API_KEY")
        if not model or not (base or key):
            return []
        if self.api_base and not key:
            key = self._endpoint_key()
        return [
            PreflightTarget(
                "messages",
                (base or "https://api.anthropic.com").rstrip("/"),
                str(model),
                api_key=key,
                who=self.name,
            )
        ]


class CodexAgent(CliAgent):
    """Codex CLI: ``codex exec --json --model M --skip-git-repo-check
    --dangerously-bypass-approvals-and-sandbox --ephemeral -C WORKSPACE [-c
    model_reasoning_effort="E"] PROMPT`` (the flags of the
    public JobBench Codex runner; Codex's own sandbox is bypassed because ours applies).
    Under the ``public`` protocol also ``--add-dir WORKSPACE``, and without an explicit
    ``reasoning_effort`` the published runner's (``xhigh``; ``high`` for gpt-5, gpt-5.1 and
    their codex variants).
    ``temperature`` and ``max_output_tokens`` are not settable and are recorded as ignored;
    there is no turn limit (the wall-clock limit applies). Credentials: ``CODEX_API_KEY`` or
    ``OPENAI_API_KEY``. Another endpoint (``api_base``, else ``OPENAI_BASE_URL``) becomes a
    custom model provider ``-c model_provider="jobbench" -c model_providers.jobbench={…,
    wire_api="responses"}``: it must speak the OpenAI Responses API (streamed)."""

    name = "codex"
    default_executable = "codex"
    parser_class = CodexParser
    env_passthrough = (
        "CODEX_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "HTTPS_PROXY",
        "HTTP_PROXY",
    )

    @property
    def endpoint(self) -> str | None:
        """``api_base``, else the harness's ``OPENAI_BASE_URL``: Codex 0.171 ignores that
        variable (it calls api.openai.com, and without a network waits indefinitely), so
        it becomes a custom provider too."""
        return self.api_base or (os.environ.get("OPENAI_BASE_URL") or "").rstrip("/") or None

    def build_argv(self, exe: str, ctx: AgentContext, workspace: str) -> list[str]:
        argv = [
            exe,
            "exec",
            "--json",
            "--model",
            str(ctx.model),
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--ephemeral",
            "-C",
            workspace,
        ]
        if self.endpoint:
            # a custom model provider (Codex 0.171 speaks only the Responses API to it;
            # wire_api="chat" was removed)
            argv += [
                "-c",
                'model_provider="jobbench"',
                "-c",
                f'model_providers.jobbench={{name="JobBench endpoint", '
                f"base_url={json.dumps(self.endpoint)}, "
                'env_key="JOBBENCH_API_KEY", wire_api="responses"}',
            ]
        effort = ctx.settings.reasoning_effort
        if not effort and ctx.protocol == "public":
            effort = codex_public_effort(ctx.model)
        if effort:
            argv += ["-c", f'model_reasoning_effort="{effort}"']
        if ctx.protocol == "public":
            argv += ["--add-dir", workspace]
        return argv + [ctx.prompt]

    def build_env(self, ctx: AgentContext) -> dict[str, str]:
        env = super().build_env(ctx)
        if "CODEX_API_KEY" not in env and "OPENAI_API_KEY" in env:
            env["CODEX_API_KEY"] = env["OPENAI_API_KEY"]
        if self.endpoint:
            env["JOBBENCH_API_KEY"] = self._endpoint_key("CODEX_API_KEY", "OPENAI_API_KEY")
        return env

    def preflight_targets(self, model, endpoint) -> list:
        """The Responses API at the custom endpoint (``api_base`` / ``OPENAI_BASE_URL``),
        else at api.openai.com when ``CODEX_API_KEY`` or ``OPENAI_API_KEY`` is set."""
        from ..endpoint import PreflightTarget

        key = os.environ.get("CODEX_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not model or not (self.endpoint or key):
            return []
        if self.endpoint:
            key = self._endpoint_key("CODEX_API_KEY", "OPENAI_API_KEY")
        return [
            PreflightTarget(
                "responses",
                self.endpoint or "https://api.openai.com/v1",
                str(model),
                api_key=key,
                who=self.name,
            )
        ]

    def ignored_settings(self, ctx: AgentContext) -> list[str]:
        # Codex 0.171 has no per-response output cap: `-c model_max_output_tokens=N` was
        # silently ignored (--strict-config: "unknown configuration field")
        return [
            k
            for k, v in (
                ("temperature", ctx.settings.temperature),
                ("max_output_tokens", ctx.settings.max_output_tokens),
            )
            if v is not None
        ]


class OpenCodeAgent(CliAgent):
    """OpenCode: ``opencode run --format json --pure --title "jobbench trial" --model
    PROVIDER/MODEL PROMPT`` with ``OPENCODE_PERMISSION`` allowing every tool (the sandbox
    confines it) and ``OPENCODE_CONFIG_CONTENT`` carrying ``temperature`` and
    ``reasoningEffort`` for the ``build`` agent (OpenCode passes agent options through to the
    provider). ``--pure`` skips external plugins (OpenCode 1.18.33 otherwise installs plugin
    packages from npm into the fresh HOME); ``--title`` skips the title-generation model
    call, whose tokens are never reported in the events. With ``api_base`` the config also
    defines an OpenAI-compatible provider ``jobbench`` and the model becomes
    ``jobbench/MODEL``. There is no turn limit (the wall-clock limit applies). Under the
    ``public`` protocol, as the published runner: no ``--pure``, a title naming the task and
    attempt, ``OPENCODE_PERMISSION`` denying external directories except ``/tmp`` and the
    workspace, ``OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX=131072``, the model's provider with
    ``timeout`` off and a 300 s ``chunkTimeout``, and a custom model's context declared as
    1,000,000 tokens (so OpenCode compacts). Credentials:
    the provider's usual variables (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
    ``OPENROUTER_API_KEY``, …)."""

    name = "opencode"
    default_executable = "opencode"
    parser_class = OpenCodeParser
    env_passthrough = (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "OPENROUTER_API_KEY",
        "XAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GROQ_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENCODE_CONFIG",
        "HTTPS_PROXY",
        "HTTP_PROXY",
    )

    def build_argv(self, exe: str, ctx: AgentContext, workspace: str) -> list[str]:
        model = self._model_id(ctx)
        if ctx.protocol == "public":
            parts = ctx.task.id.split("/")
            title = f"{'_'.join(parts[-2:])} | {ctx.model} | attempt {ctx.attempt}"
            return [exe, "run", "--format", "json", "--title", title, "--model", model, ctx.prompt]
        return [
            exe,
            "run",
            "--format",
            "json",
            "--pure",
            "--title",
            "jobbench trial",
            "--model",
            model,
            ctx.prompt,
        ]

    def _model_id(self, ctx: AgentContext) -> str:
        return f"jobbench/{ctx.model}" if self.api_base else str(ctx.model)

    @staticmethod
    def public_permission(workspace: str) -> dict[str, Any]:
        """The published runner's ``OPENCODE_PERMISSION``: every external directory denied
        except ``/tmp`` and the workspace (``workspace`` as the agent sees it). The runner
        also allows its workspaces' parent directory, needed there because OpenCode ran
        from its own checkout; ours runs in the workspace, whose parent is ``/``, so that
        entry is left out (it would allow everything)."""
        allowed = ["/tmp", "/tmp/*", "/tmp/**", workspace, f"{workspace}/**"]
        return {"external_directory": {"*": "deny", **{p: "allow" for p in allowed}}}

    def build_env(self, ctx: AgentContext) -> dict[str, str]:
        env = super().build_env(ctx)
        public = ctx.protocol == "public"
        if public:
            workspace = ctx.make_sandbox().path_of(ctx.workspace.workspace)
            env["OPENCODE_PERMISSION"] = json.dumps(self.public_permission(workspace))
            env["OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"] = str(OPENCODE_OUTPUT_TOKEN_MAX)
        else:
            everything = ("edit", "bash", "webfetch", "external_directory")
            env["OPENCODE_PERMISSION"] = json.dumps({k: "allow" for k in everything})
        build: dict[str, Any] = {}
        if ctx.settings.temperature is not None:
            build["temperature"] = ctx.settings.temperature
        if ctx.settings.reasoning_effort:
            build["reasoningEffort"] = ctx.settings.reasoning_effort
        config: dict[str, Any] = {}
        if build:
            config["agent"] = {"build": build}
        if self.api_base:
            # "temperature": true, or OpenCode 1.18.33 drops the temperature for a custom
            # model; limit.output sets max_tokens (context 0 = unknown, no auto-compaction)
            model: dict[str, Any] = {"name": str(ctx.model), "temperature": True}
            if public:  # the published runner assumes 1M tokens so that OpenCode compacts
                out = ctx.settings.max_output_tokens or OPENCODE_OUTPUT_TOKEN_MAX
                model["limit"] = {"context": OPENCODE_DEFAULT_CONTEXT, "output": int(out)}
            elif ctx.settings.max_output_tokens:
                model["limit"] = {"context": 0, "output": int(ctx.settings.max_output_tokens)}
            config["provider"] = {
                "jobbench": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "JobBench endpoint",
                    "options": {"baseURL": self.api_base, "apiKey": "{env:JOBBENCH_API_KEY}"},
                    "models": {str(ctx.model): model},
                }
            }
            env["JOBBENCH_API_KEY"] = self._endpoint_key("OPENAI_API_KEY")
        if public:  # the model's provider: no request timeout, abort a stream silent for 300 s
            provider = self._model_id(ctx).split("/", 1)[0]
            entry = config.setdefault("provider", {}).setdefault(provider, {})
            options = entry.setdefault("options", {})
            options["timeout"] = OPENCODE_PROVIDER_TIMEOUT
            options["chunkTimeout"] = OPENCODE_CHUNK_TIMEOUT_MS
        if config:
            env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
        env["OPENCODE_DISABLE_AUTOUPDATE"] = "1"
        return env

    def ignored_settings(self, ctx: AgentContext) -> list[str]:
        return ["max_output_tokens"] if ctx.settings.max_output_tokens and not self.api_base else []


_VERSION_RE = re.compile(r"\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)")


def _probe_version(sandbox: Sandbox, executable: str) -> str | None:
    """``executable --version`` in ``sandbox`` (20 s): the first ``X.Y.Z`` of its standard
    output when it exits 0, else None."""
    try:
        limits = Limits(timeout=20, memory_mb=None, max_open_files=4096)
        res = sandbox.run([executable, "--version"], limits=limits)
    except SandboxError:
        return None
    if res.exit_code != 0 or res.timed_out:
        return None
    m = _VERSION_RE.search(res.stdout or "")
    return m.group(1) if m else None
