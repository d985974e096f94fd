"""Run protocols: ``jobbench`` (our default) and ``public`` (the published JobBench runners'
settings), and the published facts both the CLI adapters and the report's comparability
section rely on.

Source of every fact below: the public repository Job-Bench/job-bench-eval (2026
versions), read, not copied: ``eval/run_benchmark_claude_code_cli.sh``,
``eval/run_benchmark_codex_cli.sh``, ``eval/run_benchmark_opencode.sh`` (the version with
``OPENCODE_PROVIDER_TIMEOUT``), ``eval/README.md`` ("Models outside OpenCode's catalog …
``OPENCODE_DEFAULT_CONTEXT`` (1,000,000)"), ``eval/run_judge.sh``, ``harbor/README.md``
("65 main + 63 easy" tasks, OpenCode v1.14.18 as the official reference agent, judge
``grok-4.3``) and ``harbor/configs/opencode.yaml`` (``version: "1.14.18"``).

What the published runners do, per agent (each one attempt unless said otherwise):

* **Claude Code**: ``claude -p PROMPT --model M --add-dir WORKSPACE --permission-mode
  bypassPermissions --output-format stream-json --verbose`` run in the workspace with
  ``CLAUDE_NONINTERACTIVE=1``; no turn cap, no effort flag; 3,600 s.
* **Codex CLI**: ``npx @openai/codex exec PROMPT --model M -c model_reasoning_effort="E"
  --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --ephemeral --json -C
  WORKSPACE --add-dir WORKSPACE``; ``E`` is ``high`` for gpt-5, gpt-5.1, gpt-5-codex,
  gpt-5.1-codex and gpt-5.1-codex-mini and ``xhigh`` for every other model; 3,600 s. The
  Codex version is whatever ``npx`` resolved on the run date (not recorded).
* **OpenCode** (the leaderboard's reference agent, v1.14.18): ``opencode run PROMPT --model
  PROVIDER/MODEL --title TITLE --format json`` with ``OPENCODE_PERMISSION`` denying every
  external directory except ``/tmp`` (and the workspace),
  ``OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX=131072`` (OpenCode's own default caps output,
  reasoning included, at 32K), the provider's ``timeout`` off and a ``chunkTimeout`` of
  300,000 ms (abort only a stream silent for five minutes), and a context of 1,000,000
  tokens assumed for a model declared outside the catalog (0 disables auto-compaction);
  7,200 s per attempt and one retry after a timeout, the timed-out attempt's partial output
  being kept (the retry's files win on a name clash).
* **Every runner**: the prompt allows working only inside the workspace **or searching
  online for new reference files**; the agent process has the network.

Claude Code's run-date version is not stated anywhere in the public repository (the runner
calls whatever ``claude`` is installed): unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._base import AgentLimits

Protocol = Literal["jobbench", "public"]
PROTOCOLS: tuple[str, ...] = ("jobbench", "public")
DEFAULT_PROTOCOL: Protocol = "jobbench"

NetworkPolicy = Literal["none", "host"]
"""What an agent's own process can reach: ``none`` (loopback only) or ``host`` (the host's
network, unfiltered: bubblewrap cannot restrict destinations)."""

OPENCODE_OUTPUT_TOKEN_MAX = 131072
"""``OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`` of the published OpenCode runner (tokens)."""
OPENCODE_PROVIDER_TIMEOUT: bool = False
"""The provider's total request ``timeout`` in the published runner: off."""
OPENCODE_CHUNK_TIMEOUT_MS = 300_000
"""The provider's ``chunkTimeout`` in the published runner (ms without stream data)."""
OPENCODE_DEFAULT_CONTEXT = 1_000_000
"""Context (tokens) the published runner assumes for a model declared outside the catalog."""
OPENCODE_PUBLIC_OUTPUT_DEFAULT = 32_000
"""OpenCode's own output cap when the variable above is unset (tokens)."""

CODEX_HIGH_EFFORT_MODELS = frozenset(
    {"gpt-5", "gpt-5.1", "gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-mini"}
)
"""Models the published Codex runner gives ``high`` instead of ``xhigh``."""

LEADERBOARD_JUDGE_MODEL = "grok-4.3"
"""The published judge model (``eval/run_judge.sh`` default; report ``grok-4-3_judge.json``)."""
LEADERBOARD_JUDGE_MODE = "official"
"""Our judge mode that follows the public rule (the judge's ``rubric_passed`` decides)."""
LEADERBOARD_SPLIT = "main"
"""The leaderboard split."""
LEADERBOARD_MAIN_TASKS = 65
"""Tasks of the main split on the leaderboard (harbor/README.md; 4,500 points, 569 rubrics)."""


@dataclass(frozen=True)
class PublishedRunner:
    """The published runner of one CLI agent (see the module docstring).

    Attributes:
        agent: our agent name.
        script: the public runner script.
        timeout: seconds per attempt.
        max_turns: turn cap, or None (no cap).
        timeout_retries: further attempts after an attempt that timed out.
        rescue_partial_output: a timed-out attempt's output files are kept.
        version: the CLI version the leaderboard used, or None when not published.
        version_note: where the version comes from, or why it is unknown.
    """

    agent: str
    script: str
    timeout: float
    max_turns: int | None
    timeout_retries: int = 0
    rescue_partial_output: bool = False
    version: str | None = None
    version_note: str = ""


PUBLISHED_RUNNERS: dict[str, PublishedRunner] = {
    "claude-code": PublishedRunner(
        "claude-code",
        "eval/run_benchmark_claude_code_cli.sh",
        timeout=3600.0,
        max_turns=None,
        version_note="not published (the runner calls whatever `claude` is installed)",
    ),
    "codex": PublishedRunner(
        "codex",
        "eval/run_benchmark_codex_cli.sh",
        timeout=3600.0,
        max_turns=None,
        version_note=(
            "not published (`npx @openai/codex` resolved the latest release on the run date)"
        ),
    ),
    "opencode": PublishedRunner(
        "opencode",
        "eval/run_benchmark_opencode.sh",
        timeout=7200.0,
        max_turns=None,
        timeout_retries=1,
        rescue_partial_output=True,
        version="1.14.18",
        version_note="v1.14.18 (commit 23fb5e05), the leaderboard's reference agent",
    ),
}


def check_protocol(protocol: str) -> Protocol:
    """``protocol`` if it is one of :data:`PROTOCOLS`.

    Raises:
        ValueError: any other value (the message lists the known ones).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    return protocol  # type: ignore[return-value]


def codex_public_effort(model: str | None) -> str:
    """The reasoning effort the published Codex runner gives ``model``."""
    name = (model or "").rsplit("/", 1)[-1]
    return "high" if name in CODEX_HIGH_EFFORT_MODELS else "xhigh"


def network_policy(uses_network: bool) -> NetworkPolicy:
    """The network an agent's own process gets (the same under both protocols: what
    differs is whether the prompt allows web search)."""
    return "host" if uses_network else "none"


def effective_limits(agent: str, protocol: str, limits: AgentLimits) -> AgentLimits:
    """The budget a trial of ``agent`` runs with under ``protocol``.

    Under ``public`` a published runner's time limit and turn cap replace the defaults,
    except for the fields set explicitly in ``limits`` (``limits.model_fields_set``): an
    explicit ``--timeout`` or ``--max-turns`` wins, and the report names it as a deviation.
    Under ``jobbench`` (or for an agent without a published runner) ``limits`` is returned.
    """
    runner = PUBLISHED_RUNNERS.get(agent)
    if protocol != "public" or runner is None:
        return limits
    update: dict[str, Any] = {}
    if "timeout" not in limits.model_fields_set:
        update["timeout"] = runner.timeout
    if "max_turns" not in limits.model_fields_set:
        update["max_turns"] = runner.max_turns
    out = limits.model_copy(update=update)
    out.__pydantic_fields_set__ = set(limits.model_fields_set)
    return out


def attempt_policy(agent: str, protocol: str) -> tuple[int, bool]:
    """``(timeout_retries, rescue_partial_output)`` of a trial of ``agent`` under ``protocol``
    (``(0, False)`` unless the published runner retries)."""
    runner = PUBLISHED_RUNNERS.get(agent)
    if protocol != "public" or runner is None:
        return 0, False
    return runner.timeout_retries, runner.rescue_partial_output


def _seconds(x: float) -> str:
    return f"{x:,.0f} s"


def protocol_deviations(
    agent: str,
    model: str | None,
    protocol: str | None,
    settings: dict[str, Any],
    limits: dict[str, Any] | None,
    *,
    custom_endpoint: bool = False,
    cli_version: str | None = None,
) -> list[str]:
    """Every way a trial's agent setup differs from the published runner's (see the module
    docstring), one sentence each; empty when it matches.

    Args:
        agent, model: the configuration.
        protocol: the trial's protocol (None: a record older than protocols, i.e.
            ``jobbench``).
        settings: the model settings the trial recorded (``temperature``,
            ``reasoning_effort``, ``max_output_tokens``, ``extra``).
        limits: the trial's budget (:class:`AgentLimits` as a dict), or None when unknown.
        custom_endpoint: the CLI was pointed at a custom OpenAI-compatible endpoint.
        cli_version: the CLI's version as the trial recorded it, or None.
    """
    protocol = protocol or DEFAULT_PROTOCOL
    runner = PUBLISHED_RUNNERS.get(agent)
    if runner is None:
        return [f"agent {agent} is not one of the published runners (claude-code, codex, opencode)"]
    out: list[str] = []
    public = protocol == "public"
    if not public:
        out.append(
            "prompt: the agent is confined to the task folder and output directory and not allowed "
            "to "
            "search online (the published prompt allows searching online for reference files)"
        )
    timeout = (limits or {}).get("timeout")
    if timeout is not None and float(timeout) != runner.timeout:
        out.append(
            f"time limit: {_seconds(float(timeout))} per attempt (published: "
            f"{_seconds(runner.timeout)})"
        )
    retries = attempt_policy(agent, protocol)[0]
    if retries != runner.timeout_retries:
        out.append(
            f"retries: {retries} after a timeout (published: {runner.timeout_retries}, partial "
            "output kept)"
        )
    effort = settings.get("reasoning_effort")
    temperature = settings.get("temperature")
    max_out = settings.get("max_output_tokens")
    if temperature is not None and agent == "opencode":
        out.append(f"temperature: {temperature} (published: none sent)")
    if agent == "claude-code":
        turns = (limits or {}).get("max_turns", 100 if not public else None)
        if turns is not None:
            out.append(f"turn cap: --max-turns {turns} (published: no cap)")
        if effort:
            out.append(f"reasoning effort: --effort {effort} (published: none, the CLI's default)")
        if max_out:
            out.append(
                f"output cap: CLAUDE_CODE_MAX_OUTPUT_TOKENS={max_out} (published: the CLI's "
                "default)"
            )
    elif agent == "codex":
        want = codex_public_effort(model)
        have = effort or (want if public else None)
        if have != want:
            out.append(
                f"reasoning effort: {have or 'the CLI default'} (published: {want} for this model)"
            )
    elif agent == "opencode":
        cap = (
            max_out
            if (max_out and custom_endpoint)
            else (OPENCODE_OUTPUT_TOKEN_MAX if public else OPENCODE_PUBLIC_OUTPUT_DEFAULT)
        )
        if cap != OPENCODE_OUTPUT_TOKEN_MAX:
            out.append(
                f"output cap: {cap:,} tokens (published: OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX="
                f"{OPENCODE_OUTPUT_TOKEN_MAX})"
            )
        if not public:
            out.append(
                "provider timeouts: OpenCode's defaults (published: request timeout off, chunk "
                "timeout "
                f"{OPENCODE_CHUNK_TIMEOUT_MS // 1000} s)"
            )
            if custom_endpoint:
                out.append(
                    "context: 0 declared for the custom model, so OpenCode never compacts "
                    "(published: "
                    f"{OPENCODE_DEFAULT_CONTEXT:,} tokens assumed)"
                )
            out.append(
                "permissions: every tool and every external directory allowed, plugins skipped "
                "(--pure) "
                "(published: external directories denied except /tmp; plugins load)"
            )
    if runner.version is not None:
        if cli_version is None:
            out.append(f"CLI version: unknown (published: {runner.version})")
        elif cli_version != runner.version:
            out.append(f"CLI version: {cli_version} (published: {runner.version})")
    return out


__all__ = [
    "CODEX_HIGH_EFFORT_MODELS",
    "DEFAULT_PROTOCOL",
    "LEADERBOARD_JUDGE_MODE",
    "LEADERBOARD_JUDGE_MODEL",
    "LEADERBOARD_MAIN_TASKS",
    "LEADERBOARD_SPLIT",
    "NetworkPolicy",
    "OPENCODE_CHUNK_TIMEOUT_MS",
    "OPENCODE_DEFAULT_CONTEXT",
    "OPENCODE_OUTPUT_TOKEN_MAX",
    "OPENCODE_PROVIDER_TIMEOUT",
    "PROTOCOLS",
    "PUBLISHED_RUNNERS",
    "Protocol",
    "PublishedRunner",
    "attempt_policy",
    "check_protocol",
    "codex_public_effort",
    "effective_limits",
    "network_policy",
    "protocol_deviations",
]
