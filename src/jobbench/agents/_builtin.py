"""``builtin``: a tool-calling agent over any OpenAI-compatible Chat Completions endpoint.

Tools (OpenAI function calling):

* ``bash(command)`` and ``python(code)``: run inside the sandbox, no network, a fresh
  process tree per call (files persist in the workspace), per-command timeout;
* ``read_file(path)``: text of any file via :func:`jobbench.extract.extract` (xlsx, pdf,
  docx, … as the extractor supports);
* ``write_file(path, content)``, ``list_files(path)``: confined to the workspace, symlinks
  are never followed at any path component (each refusal is listed in the trial record's
  ``details.refused_paths``);
* ``search(query)`` / ``search(download=id)``: offline keyword search over the task's
  ``files_required_to_search/``; a downloaded file is copied into
  ``task_folder/search_downloads/``. The directory's location is never shown;
* ``finish(summary)``: ends the run.

Budgets: turns (model calls), total tokens, wall-clock time and dollars (when prices are
known). Running out of any budget ends the run with ``agent_timeout`` and a message naming
the budget; deliverables already written are still collected.

Model calls are retried by the agent itself, never past the trial's deadline: transient
failures (connection errors, 408/409/429, 5xx; :func:`jobbench.endpoint.classify_failure`)
``client_retries`` times with backoff, then :class:`InfraError`; a deterministic rejection
(401/403, 404, an unknown model, a 5xx naming a request-validation error, any 4xx on the
first call) at once, as a permanent :class:`InfraError` saying what to change. An endpoint
that does not answer before the deadline is ``infra_error`` "model endpoint did not
answer". A later 400/422 (e.g. the context window overflowed) is ``agent_error``.

Messages follow what strict servers validate (llama-cpp-python, vLLM; see
:func:`jobbench.testing.strict_problems`): an assistant message never carries
``"content": null`` (no content key beside tool calls, ``""`` without either), every tool
call has an id and every tool message names it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..endpoint import token_cap_param
from ..records import Usage
from ..sandbox import Limits, SandboxError, UnsafePath, safefs
from ._base import Agent, AgentContext, AgentResult, InfraError
from ._search import SearchIndex

SYSTEM_PROMPT = (
    "You are a careful professional working on a desk task in a Linux workspace. You act only "
    "through the "
    "tools provided. Shell and Python commands run in an isolated sandbox without internet access, "
    "with the "
    "Python packages installed on the machine (such as openpyxl). Inspect the files, do the work, "
    "save the "
    "final deliverables in the output directory, then call finish."
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a bash command in the workspace (no network). Returns exit code, "
            "stdout and stderr.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout": {
                        "type": "integer",
                        "description": "Seconds before the command is killed (optional).",
                    },
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "python",
            "description": "Run a Python 3 program in the workspace (no network). Print what you "
            "need to see.",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "The program source."},
                    "timeout": {
                        "type": "integer",
                        "description": "Seconds before the program is killed (optional).",
                    },
                },
                "required": ["code"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file as text. Spreadsheets, PDFs, Word, PowerPoint, notebooks "
            "and databases are "
            "converted to text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path relative to the workspace, or absolute under it.",
                    },
                    "max_chars": {
                        "type": "integer",
                        "description": "Maximum characters returned (optional).",
                    },
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a text file (parent directories are created).",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_files",
            "description": "List files under a directory of the workspace, recursively, with sizes "
            "in bytes.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory (default: the workspace root).",
                    }
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search a document collection by keywords (offline web search). Give "
            "`query` to get "
            "results with ids and snippets; give `download` (a result id such as R2, or its name) "
            "to "
            "copy that document into task_folder/search_downloads/.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "download": {"type": "string"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "Call when the deliverables are saved in the output directory. Ends the "
            "task.",
            "parameters": {
                "type": "object",
                "properties": {
                    "summary": {
                        "type": "string",
                        "description": "One paragraph on what you delivered.",
                    }
                },
                "required": ["summary"],
            },
        },
    },
]

NUDGE = (
    "Continue with the task using the tools. When the deliverables are saved in the output "
    "directory, call finish."
)


class ToolError(Exception):
    """A tool call the model got wrong; the message goes back to the model."""


class WorkspaceTools:
    """Host-side implementation of the file tools, confined to the workspace.

    Every access walks from a descriptor of the workspace one component at a time with
    ``O_NOFOLLOW`` (:mod:`jobbench.sandbox.safefs`), so a symbolic link the agent planted
    anywhere on a path (a file, a directory, ``task_folder`` or ``search_downloads`` itself)
    is refused, never followed, and nothing outside the workspace is read, created or
    overwritten. Each refusal is appended to :attr:`refusals` (the trial record lists them
    in ``details.refused_paths``).

    Args:
        workspace: host path of the workspace.
        inside: the workspace path the agent sees (``/workspace``).
        search: the search index (may be empty).
        download_dir: host directory for downloaded search results; must be under
            ``workspace``.
        scratch: harness-only host directory for the private copy ``read_file`` extracts
            (default: the system temp directory).
    """

    max_read_bytes = 200 * 1024 * 1024

    def __init__(
        self,
        workspace: Path,
        inside: str,
        search: SearchIndex,
        download_dir: Path,
        scratch: Path | None = None,
    ) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self.inside = inside.rstrip("/") or "/"
        self.search_index = search
        self.download_rel = Path(os.path.abspath(download_dir)).relative_to(self.workspace)
        self.download_dir = self.workspace / self.download_rel
        self.scratch = scratch
        self.refusals: list[dict[str, str]] = []

    def resolve(self, path: str) -> Path:
        """Host path for an agent path (lexically; nothing is opened); refuses anything
        outside the workspace. Symbolic links are refused when the path is opened.

        Raises:
            ToolError: outside the workspace.
        """
        path = (path or ".").strip()
        if path == self.inside or path.startswith(self.inside + "/"):
            path = path[len(self.inside) :].lstrip("/") or "."
        elif path.startswith("/"):
            raise ToolError(f"{path}: outside the workspace ({self.inside})")
        norm = os.path.normpath(path)
        if norm.startswith("..") or os.path.isabs(norm):
            raise ToolError(f"{path}: outside the workspace ({self.inside})")
        return self.workspace if norm == "." else self.workspace / norm

    def _rel(self, path: str) -> str:
        host = self.resolve(path)
        rel = host.relative_to(self.workspace).as_posix()
        return "" if rel == "." else rel

    def _refuse(self, tool: str, path: str, exc: OSError) -> ToolError:
        reason = str(exc) if isinstance(exc, UnsafePath) else (exc.strerror or str(exc))
        self.refusals.append({"tool": tool, "path": path, "reason": reason})
        return ToolError(f"{path}: refused: {reason}")

    def shown(self, host: Path) -> str:
        rel = host.relative_to(self.workspace).as_posix()
        return self.inside if rel == "." else f"{self.inside.rstrip('/')}/{rel}"

    def read_file(self, path: str, max_chars: int = 50_000) -> str:
        from ..extract import extract

        rel = self._rel(path)
        if not rel:
            raise ToolError(f"{path}: not a regular file")
        try:
            fd = safefs.open_file(self.workspace, rel)
        except FileNotFoundError:
            raise ToolError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise ToolError(f"{path}: not a regular file") from None
        except UnsafePath as exc:
            raise self._refuse("read_file", path, exc) from None
        # the extractor reads a private copy of the verified bytes, never the agent's path
        with tempfile.TemporaryDirectory(prefix="jb-read-", dir=self.scratch) as tmp:
            with os.fdopen(fd, "rb") as src:
                size = os.fstat(src.fileno()).st_size
                if size > self.max_read_bytes:
                    raise ToolError(
                        f"{path}: {size} bytes is too large to read whole; inspect it with "
                        "bash or python"
                    )
                copy = Path(tmp) / ("f" + Path(rel).suffix[:16])
                with open(copy, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            ex = extract(copy, rel=rel, max_chars=max(1000, int(max_chars)))
        notes = "".join(f"\n[{d.level}: {d.message}]" for d in ex.diagnostics)
        more = f"\n[truncated to {max_chars} characters]" if ex.truncated else ""
        return ex.text + more + notes

    def write_file(self, path: str, content: str) -> str:
        rel = self._rel(path)
        if not rel:
            raise ToolError("path names the workspace itself")
        data = content.encode("utf-8")
        try:
            safefs.write_bytes(self.workspace, rel, data, create_parents=True)
        except IsADirectoryError:
            raise ToolError(f"{path}: is a directory") from None
        except UnsafePath as exc:
            raise self._refuse("write_file", path, exc) from None
        return f"wrote {len(data)} bytes to {self.shown(self.workspace / rel)}"

    def list_files(self, path: str = ".", max_entries: int = 500) -> str:
        rel = self._rel(path)
        lines = []
        base = self.workspace / rel if rel else self.workspace
        try:
            entries = list(safefs.walk(self.workspace, rel))
        except FileNotFoundError:
            raise ToolError(f"{path}: not a directory") from None
        except UnsafePath as exc:
            if "not a directory" in str(exc) and "symbolic link" not in str(exc):
                raise ToolError(f"{path}: not a directory") from None
            raise self._refuse("list_files", path, exc) from None
        children: set[str] = set()
        for p, _st, _problem in entries:
            if "/" in p:
                children.add(p.rsplit("/", 1)[0])
        for p, st, problem in entries:
            shown = self.shown(base / p)
            if st is None or problem:
                lines.append(f"{shown}\t{problem}")
            elif stat.S_ISDIR(st.st_mode):
                if p not in children:
                    lines.append(f"{shown}/\t(empty directory)")
                continue
            else:
                kind = (
                    "symlink"
                    if stat.S_ISLNK(st.st_mode)
                    else ("" if stat.S_ISREG(st.st_mode) else "special")
                )
                lines.append(f"{shown}\t{st.st_size}" + (f"\t{kind}" if kind else ""))
            if len(lines) >= max_entries:
                lines.append(f"[listing stopped at {max_entries} entries]")
                break
        return "\n".join(lines) or "(no files)"

    def search(self, query: str | None = None, download: str | None = None) -> str:
        if download:
            source = self.search_index.source(download)
            if source is None:
                raise ToolError(f"unknown result {download!r}; search first and use a result id")
            rel = (self.download_rel / source.name).as_posix()
            try:
                with open(source, "rb") as f:  # the dataset's own file (trusted)
                    safefs.write_bytes(self.workspace, rel, f.read(), create_parents=True)
            except IsADirectoryError:
                raise ToolError(f"{self.shown(self.workspace / rel)}: is a directory") from None
            except UnsafePath as exc:
                raise self._refuse("search", self.shown(self.workspace / rel), exc) from None
            return f"downloaded to {self.shown(self.workspace / rel)}"
        if not query:
            raise ToolError("give a query (or a result id to download)")
        hits = self.search_index.search(query)
        if not hits:
            return "No results."
        return "\n\n".join(f"[{h.id}] {h.name}\n{h.snippet}" for h in hits)


def _clip(text: str, n: int) -> str:
    if len(text) <= n:
        return text
    half = n // 2
    return text[:half] + f"\n[... {len(text) - 2 * half} characters omitted ...]\n" + text[-half:]


class BuiltinAgent(Agent):
    """The tool-calling API agent (see the module docstring).

    Args:
        tool_output_chars: cap on each tool result sent back to the model.
        client_retries: retries of the ``openai`` client for transient HTTP errors.
        request_timeout: seconds per model call (also bounded by the trial deadline).
    """

    name = "builtin"
    needs_model = True

    def __init__(
        self,
        *,
        tool_output_chars: int = 20_000,
        client_retries: int = 4,
        request_timeout: float = 600.0,
    ) -> None:
        self.tool_output_chars = tool_output_chars
        self.client_retries = client_retries
        self.request_timeout = request_timeout

    def describe(self) -> dict[str, Any]:
        return {
            "tools": [t["function"]["name"] for t in TOOLS],
            "tool_output_chars": self.tool_output_chars,
            "client_retries": self.client_retries,
        }

    def preflight_targets(self, model, endpoint) -> list:
        """Chat Completions with tools at the run's endpoint (else ``OPENAI_BASE_URL``, else
        api.openai.com, as the ``openai`` client resolves it)."""
        from ..endpoint import PreflightTarget

        if not model:
            return []
        base = (endpoint.base_url if endpoint else None) or os.environ.get("OPENAI_BASE_URL")
        key = (endpoint.api_key if endpoint else None) or os.environ.get("OPENAI_API_KEY")
        return [
            PreflightTarget(
                "chat",
                base or "https://api.openai.com/v1",
                model,
                api_key=key or "none",
                who=f"builtin@{model}",
            )
        ]

    # -- one model call -----------------------------------------------------------------
    def _call(
        self,
        client,
        ctx: AgentContext,
        messages: list[dict],
        deadline: float,
        first: bool,
        cap: _TokenCap,
    ):
        """One model call with our own retries (the client's are off): transient failures
        (:func:`jobbench.endpoint.classify_failure`) are retried ``client_retries`` times
        with backoff (``retry-after`` honoured), every attempt and wait bounded by the
        trial's ``deadline``; a permanent rejection is not retried.

        ``cap`` (one per trial) names the parameter that carries ``max_output_tokens``; a
        rejection naming it switches it once to the other name (a ``model_downgrade`` event)
        and the request is sent again at once.

        Raises:
            InfraError: the endpoint failed (``permanent`` for a deterministic rejection;
                cause ``no_answer`` when it did not answer before the deadline).
            _AgentStop: a later request rejected for the agent's own doing (the context
                window overflowed): ``agent_error``.
        """
        import openai

        from ..endpoint import classify_failure, other_token_cap_param, server_message

        s = ctx.settings
        kwargs: dict[str, Any] = {"model": ctx.model, "messages": messages, "tools": TOOLS}
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.reasoning_effort is not None:
            kwargs["reasoning_effort"] = s.reasoning_effort
        if s.max_output_tokens is not None:
            kwargs[cap.param] = s.max_output_tokens
        if s.extra:
            kwargs["extra_body"] = dict(s.extra)
        where = f"model endpoint {_shown_url(client.base_url)}"
        backoff = 1.0
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise InfraError(
                    f"model endpoint did not answer: no reply from {where} within the "
                    f"trial's time limit of {ctx.limits.timeout:g} s",
                    cause="no_answer",
                )
            timeout = min(self.request_timeout, remaining)
            try:
                resp = client.chat.completions.create(**kwargs, timeout=timeout)
            except openai.APITimeoutError as exc:
                if deadline - time.monotonic() <= 0.5:
                    raise InfraError(
                        f"model endpoint did not answer: {where} sent no reply within "
                        f"{timeout:g} s (APITimeoutError), the rest of the trial's time "
                        f"limit of {ctx.limits.timeout:g} s",
                        cause="no_answer",
                    ) from exc
                err = InfraError(
                    f"model endpoint did not answer: {where} sent no reply within "
                    f"{timeout:g} s (APITimeoutError; request timeout {self.request_timeout:g} s)",
                    cause="no_answer",
                )
            except openai.APIConnectionError as exc:
                err = InfraError(
                    f"model API error: APIConnectionError: {where}: {exc}", cause="connection"
                )
            except openai.APIStatusError as exc:
                body = exc.response.content if exc.response is not None else str(exc)
                other = (
                    other_token_cap_param(cap.param, exc.status_code, body)
                    if cap.param in kwargs and not cap.switched
                    else None
                )
                if other is not None:
                    ctx.trajectory.emit(
                        "model_downgrade",
                        change=f"{cap.param} sent as {other}",
                        error=server_message(body, 300),
                    )
                    kwargs[other] = kwargs.pop(cap.param)
                    cap.param, cap.switched = other, True  # once per trial, never back
                    continue
                failure = classify_failure(exc.status_code, body)
                what = f"model API error: {type(exc).__name__}: {where}: {failure.describe()}"
                if not failure.transient:
                    if failure.kind == "context_length" and not first:
                        raise _AgentStop(
                            "agent_error", f"model API rejected the request: {what}"
                        ) from exc
                    if failure.kind == "validation" and exc.status_code < 500 and not first:
                        raise _AgentStop(
                            "agent_error", f"model API rejected the request: {what}"
                        ) from exc
                    prefix = (
                        "endpoint rejected the first request (configuration?): " if first else ""
                    )
                    raise InfraError(prefix + what, permanent=True, cause=failure.kind) from exc
                err = InfraError(what, cause=failure.kind)
                retry_after = _retry_after(exc.response)
                if retry_after is not None:
                    backoff = retry_after
            except (openai.APIResponseValidationError, ValueError) as exc:
                raise InfraError(f"malformed model API response: {exc}", cause="malformed") from exc
            else:
                if not getattr(resp, "choices", None):
                    raise InfraError("model API returned no choices", cause="malformed")
                return resp
            attempt += 1
            if attempt > self.client_retries:
                raise err
            wait = min(backoff, max(deadline - time.monotonic() - 0.5, 0.0))
            ctx.trajectory.emit("model_retry", attempt=attempt, error=str(err), wait=wait)
            if wait > 0 and ctx.cancel.wait(wait):
                raise InfraError("run interrupted")
            backoff = min(max(backoff, 0.5) * 2, 30.0)

    def run(self, ctx: AgentContext) -> AgentResult:
        import openai

        if not ctx.model:
            return AgentResult(status="agent_error", error="builtin agent needs --model")
        endpoint = ctx.endpoint
        base_url = endpoint.base_url if endpoint else None
        api_key = (endpoint.api_key if endpoint else None) or "none"
        # retries are ours (_call): bounded by the trial's deadline, never blind on a
        # deterministic rejection
        client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        sandbox = ctx.make_sandbox(network=False, mounts=[])
        inside = sandbox.path_of(ctx.workspace.workspace)
        tools = WorkspaceTools(
            ctx.workspace.workspace,
            inside,
            SearchIndex(ctx.task.search_dir, ctx.task.search_files),
            ctx.workspace.task_folder / "search_downloads",
            scratch=ctx.workspace.private,
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": ctx.prompt},
        ]
        ctx.trajectory.emit(
            "messages", messages=messages, tools=[t["function"]["name"] for t in TOOLS]
        )
        lim = ctx.limits
        start = time.monotonic()
        deadline = start + lim.timeout
        cap = _TokenCap(token_cap_param(base_url or os.environ.get("OPENAI_BASE_URL")))
        usage = Usage()
        turns = 0
        nudges = 0
        result = AgentResult(status="ok")
        try:
            while True:
                if ctx.cancel.is_set():
                    raise InfraError("run interrupted")
                stop = self._budget_exceeded(ctx, turns, usage, deadline)
                if stop:
                    raise _AgentStop("agent_timeout", stop)
                resp = self._call(client, ctx, messages, deadline, turns == 0, cap)
                turns += 1
                u = resp.usage
                if u is not None:
                    details = getattr(u, "prompt_tokens_details", None)
                    cached = (
                        int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
                    )
                    call = Usage(
                        calls=1,
                        input_tokens=int(u.prompt_tokens or 0),
                        cached_input_tokens=cached,
                        output_tokens=int(u.completion_tokens or 0),
                    )
                else:
                    call = Usage(calls=1)
                if ctx.pricing is not None:
                    call.cost_usd = ctx.pricing.cost(call)
                usage = usage + call
                choice = resp.choices[0]
                msg = choice.message
                tool_calls = list(msg.tool_calls or [])
                for i, tc in enumerate(tool_calls):
                    if not tc.id:  # some local servers send none; tool messages need one
                        tc.id = f"call_{turns}_{i}"
                # strict servers refuse "content": null (llama-cpp-python's request model) and
                # a missing content key (its chatml-function-calling template reads
                # message.content under jinja's StrictUndefined): no text is an empty string
                assistant: dict[str, Any] = {
                    "role": "assistant",
                    "content": msg.content if isinstance(msg.content, str) else "",
                }
                if tool_calls:
                    assistant["tool_calls"] = [
                        {
                            "id": tc.id,
                            "type": "function",
                            "function": {
                                "name": tc.function.name,
                                "arguments": tc.function.arguments,
                            },
                        }
                        for tc in tool_calls
                    ]
                messages.append(assistant)
                extra = {}
                reasoning = getattr(msg, "reasoning_content", None) or getattr(
                    msg, "reasoning", None
                )
                if reasoning:
                    extra["reasoning"] = reasoning
                ctx.trajectory.emit(
                    "model_response",
                    turn=turns,
                    content=msg.content,
                    tool_calls=assistant.get("tool_calls", []),
                    finish_reason=choice.finish_reason,
                    usage=call.model_dump(),
                    **extra,
                )
                if not tool_calls:
                    if nudges < 1:
                        nudges += 1
                        messages.append({"role": "user", "content": NUDGE})
                        ctx.trajectory.emit("nudge", content=NUDGE)
                        continue
                    result.details["stop_reason"] = "no_tool_call"
                    break
                finished = False
                for tc in tool_calls:
                    output, finished_now = self._tool(ctx, sandbox, tools, tc, deadline)
                    finished = finished or finished_now
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": output})
                if finished:
                    result.details["stop_reason"] = "finish"
                    break
        except _AgentStop as stop:
            result.status = stop.status  # type: ignore[assignment]
            result.error = stop.message
            result.details["stop_reason"] = stop.status
            ctx.trajectory.emit("stop", status=stop.status, reason=stop.message)
        result.turns = turns
        if tools.refusals:  # host-side accesses refused (symbolic links, special files)
            result.details["refused_paths"] = list(tools.refusals)
        if ctx.pricing is None:
            usage.cost_usd = None
        result.usage = usage
        return result

    def _budget_exceeded(
        self, ctx: AgentContext, turns: int, usage: Usage, deadline: float
    ) -> str | None:
        lim = ctx.limits
        if time.monotonic() >= deadline:
            return f"time limit of {lim.timeout:g} s reached"
        if lim.max_turns is not None and turns >= lim.max_turns:
            return f"turn limit of {lim.max_turns} model calls reached"
        if (
            lim.max_total_tokens is not None
            and usage.input_tokens + usage.output_tokens >= lim.max_total_tokens
        ):
            return f"token budget of {lim.max_total_tokens} tokens reached"
        if (
            lim.max_cost_usd is not None
            and usage.cost_usd is not None
            and usage.cost_usd >= lim.max_cost_usd
        ):
            return f"cost budget of ${lim.max_cost_usd:g} reached"
        return None

    def _tool(
        self, ctx: AgentContext, sandbox, tools: WorkspaceTools, tc, deadline: float
    ) -> tuple[str, bool]:
        name = tc.function.name
        raw = tc.function.arguments or "{}"
        ctx.trajectory.emit("tool_call", id=tc.id, name=name, arguments=raw)
        t0 = time.monotonic()
        finished = False
        try:
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                raise ToolError(
                    f"arguments are not valid JSON ({exc.msg}); send a JSON object"
                ) from None
            if not isinstance(args, dict):
                raise ToolError("arguments must be a JSON object")
            if name in ("bash", "python"):
                output = self._command(ctx, sandbox, name, args, deadline)
            elif name == "read_file":
                output = tools.read_file(
                    _str_arg(args, "path"), int(args.get("max_chars") or 50_000)
                )
            elif name == "write_file":
                output = tools.write_file(
                    _str_arg(args, "path"), _str_arg(args, "content", allow_empty=True)
                )
            elif name == "list_files":
                output = tools.list_files(str(args.get("path") or "."))
            elif name == "search":
                output = tools.search(args.get("query"), args.get("download"))
            elif name == "finish":
                output = "Finished."
                finished = True
                ctx.trajectory.emit("finish", summary=args.get("summary", ""))
            else:
                raise ToolError(
                    f"unknown tool {name!r}; available: "
                    f"{', '.join(t['function']['name'] for t in TOOLS)}"
                )
        except ToolError as exc:
            output = f"ERROR: {exc}"
        except SandboxError as exc:
            raise InfraError(f"sandbox failure in tool {name}: {exc}") from exc
        except OSError as exc:
            output = f"ERROR: {exc.strerror or exc}"
        except ValueError as exc:  # e.g. a NUL byte in a path argument: the agent's mistake
            output = f"ERROR: {exc}"
        output = _clip(output, self.tool_output_chars)
        ctx.trajectory.emit(
            "tool_result",
            id=tc.id,
            name=name,
            output=output,
            seconds=round(time.monotonic() - t0, 3),
        )
        return output, finished

    def _command(self, ctx: AgentContext, sandbox, name: str, args: dict, deadline: float) -> str:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _AgentStop("agent_timeout", f"time limit of {ctx.limits.timeout:g} s reached")
        want = args.get("timeout")
        timeout = min(
            float(want)
            if isinstance(want, (int, float)) and want > 0
            else ctx.limits.command_timeout,
            ctx.limits.command_timeout,
            remaining,
        )
        limits = Limits(
            timeout=timeout, memory_mb=ctx.limits.memory_mb, max_processes=ctx.limits.max_processes
        )
        if name == "bash":
            res = sandbox.run(
                ["bash", "-c", _str_arg(args, "command")],
                limits=limits,
                cancel=ctx.cancel,
                max_output_chars=self.tool_output_chars,
            )
        else:
            res = sandbox.run(
                ["python3", "-"],
                stdin=_str_arg(args, "code").encode("utf-8"),
                limits=limits,
                cancel=ctx.cancel,
                max_output_chars=self.tool_output_chars,
            )
        parts = [
            f"exit code: {res.exit_code}"
            + (f" (killed after {timeout:g} s)" if res.timed_out else "")
        ]
        if res.stdout:
            parts.append("stdout:\n" + res.stdout)
        if res.stderr:
            parts.append("stderr:\n" + res.stderr)
        return "\n".join(parts)


def _shown_url(url: Any) -> str:
    """The endpoint URL without user-info or a trailing slash (for messages)."""
    from ..endpoint import public_url

    return public_url(str(url)).rstrip("/")


def _retry_after(response: Any) -> float | None:
    """Seconds of a ``retry-after`` / ``retry-after-ms`` header (at most 60), or None."""
    if response is None:
        return None
    headers = response.headers
    try:
        if headers.get("retry-after-ms"):
            return min(float(headers["retry-after-ms"]) / 1000.0, 60.0)
        if headers.get("retry-after"):
            return min(float(headers["retry-after"]), 60.0)
    except ValueError:
        return None
    return None


@dataclass
class _TokenCap:
    """Which Chat Completions parameter carries the trial's ``max_output_tokens``
    (:func:`jobbench.endpoint.token_cap_param`), and whether a rejection already switched it."""

    param: str
    switched: bool = False


class _AgentStop(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _str_arg(args: dict, key: str, *, allow_empty: bool = False) -> str:
    v = args.get(key)
    if not isinstance(v, str) or (not v and not allow_empty):
        raise ToolError(f"missing string argument {key!r}")
    return v
