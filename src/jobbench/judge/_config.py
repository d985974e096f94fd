"""Judge configuration: CLI flags > environment > TOML file > defaults.

Environment variables (ours win over the public JobBench judge's):

==========================  =========================  ==========================
field                       ours                       public judge's
==========================  =========================  ==========================
model                       JOBBENCH_JUDGE_MODEL       JUDGE_MODEL
api_base                    JOBBENCH_JUDGE_API_BASE    JUDGE_API_BASE
api_key                     JOBBENCH_JUDGE_API_KEY     JUDGE_API_KEY
mode, decide, concurrency,  JOBBENCH_JUDGE_<FIELD>     –
timeout, max_attempts,      (upper case)
seed, cache_path,
cache_share, prices_file,
label
TOML config file            JOBBENCH_JUDGE_CONFIG      –
==========================  =========================  ==========================

The TOML file holds the same field names at top level or in a ``[judge]`` table. The public
variable names come from Job-Bench/job-bench-eval ``eval/run_judge.sh`` and ``eval/judge.py``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..rundir import safe_name  # the run-directory rule; jobbench.judge re-exports it

PROMPT_VERSION = "jb-judge-5"
"""Version of the prompt templates, reply schema and reply reading; part of every cache key
(3: the fence is a digest of the deliverable text, hidden content and images left out are
stated; 4: the reply format is in the system message, the rubric part keeps only the call's
own text; 5: a pass is taken only from a reply that is one JSON object alone, conflicting
duplicate items or verdict keys give no verdict, the retry note asks for nothing but the
object)."""

Mode = Literal["rubric", "task", "criterion", "official"]
Decide = Literal["auto", "llm", "checks"]


class JudgeConfig(BaseModel):
    """How to judge. The default is checks only (no endpoint, no LLM call).

    Attributes:
        model: judge model name at the endpoint; None = no LLM.
        api_base: OpenAI-compatible base URL (``https://api.openai.com/v1``, a vLLM or
            llama.cpp server, ``https://openrouter.ai/api/v1``, …); None = SDK default.
        api_key: never written to any record; None = ``OPENAI_API_KEY`` or ``EMPTY``.
        mode: ``rubric`` (one call per rubric), ``task`` (one call per task), ``criterion``
            (one call per criterion) or ``official`` (one call per rubric, the model's
            overall rubric verdict decides, as in the public judge).
        decide: ``auto`` (checks decide where present, the LLM the rest), ``llm`` (the LLM
            decides all; checks are a recorded second opinion), ``checks`` (no LLM). None =
            ``auto`` with a model, ``checks`` without.
        temperature, seed: sampling settings sent with every call (None = not sent).
        response_format: first structured-output style tried; the client falls back
            json_schema → json_object → none when the endpoint rejects one.
        max_tokens: completion cap sent as ``max_tokens`` (None = not sent).
        timeout: seconds per HTTP request.
        max_attempts: tries per call on 429/5xx/time-outs, and tries per unit for replies
            that lack valid verdicts (≥ 1).
        backoff_base, backoff_max: seconds; wait before retry k (0-based) is
            ``min(backoff_max, backoff_base · 2**k)`` or the server's Retry-After if larger
            (still capped by ``backoff_max``).
        concurrency: parallel LLM calls across rubrics and trials.
        strict_evidence: a pass whose evidence quote is not found in the extracted text
            becomes a fail (not applied to calls that attached images).
        vision, max_images: attach images to rubrics that need them (≤ ``max_images``).
        cache, cache_path: the SQLite verdict cache (default
            ``$XDG_CACHE_HOME/jobbench/judge.sqlite``).
        cache_share: a name that replaces the endpoint's identity (base URL and the model
            id it reports) in every verdict-cache key, so endpoints serving the same
            weights share cached verdicts on purpose (see ``jobbench.judge._endpoint``);
            None = verdicts are cached per endpoint.
        prices_file: TOML merged over the default price table.
        label: free suffix of the judge key, to keep several configurations apart.
        max_chars_per_file: extraction cap per deliverable file (characters).
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    mode: Mode = "rubric"
    decide: Decide | None = None
    temperature: float | None = 0.0
    seed: int | None = 0
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    max_tokens: int | None = None
    timeout: float = Field(default=300.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=20)
    backoff_base: float = Field(default=2.0, ge=0)
    backoff_max: float = Field(default=60.0, ge=0)
    concurrency: int = Field(default=10, ge=1, le=512)
    strict_evidence: bool = False
    vision: bool = True
    max_images: int = Field(default=8, ge=0)
    cache: bool = True
    cache_path: Path | None = None
    cache_share: str | None = Field(default=None, min_length=1)
    prices_file: Path | None = None
    label: str | None = None
    max_chars_per_file: int = Field(default=200_000, ge=1000)

    @property
    def effective_decide(self) -> Decide:
        """``decide`` with its default resolved; ``official`` mode always lets the LLM
        decide (checks become a second opinion)."""
        if self.model is None:
            return "checks"
        if self.mode == "official":
            return "llm"
        return self.decide or "auto"

    @property
    def uses_llm(self) -> bool:
        """True when an LLM is called."""
        return self.effective_decide != "checks"

    @property
    def key(self) -> str:
        """Short filesystem-safe name of this configuration, e.g. ``checks``,
        ``gpt-4o-mini.rubric.auto``, ``grok-4.3.official``; grades live under
        ``grades/<key>/``."""
        if not self.uses_llm:
            parts = ["checks"]
        elif self.mode == "official":
            parts = [safe_name(self.model or "-"), "official"]
        else:
            parts = [safe_name(self.model or "-"), self.mode, self.effective_decide]
        if self.strict_evidence and self.uses_llm:
            parts.append("strict")
        if self.label:
            parts.append(safe_name(self.label))
        return ".".join(parts)

    def identity(self) -> dict[str, Any]:
        """The settings that define the verdicts (written into every grade record; no key)."""
        return {
            "key": self.key,
            "model": self.model if self.uses_llm else None,
            "api_base": _public_url(self.api_base) if self.uses_llm else None,
            "mode": self.mode if self.uses_llm else None,
            "decide": self.effective_decide,
            "prompt_version": PROMPT_VERSION,
            "temperature": self.temperature,
            "seed": self.seed,
            "response_format": self.response_format,
            "max_tokens": self.max_tokens,
            "strict_evidence": self.strict_evidence,
            "vision": self.vision,
            "max_images": self.max_images,
            "max_chars_per_file": self.max_chars_per_file,
        }

    def fingerprint(self) -> dict[str, Any]:
        """:meth:`identity` without the endpoint URL: what grades and cache keys depend on
        (the same model behind another URL or port gives the same verdicts)."""
        ident = self.identity()
        ident.pop("api_base")
        return ident

    def resolved_cache_path(self) -> Path:
        """Where the verdict cache lives."""
        if self.cache_path is not None:
            return Path(self.cache_path)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "jobbench" / "judge.sqlite"


def _public_url(url: str | None) -> str | None:
    """``url`` without user:password and query string (never record credentials)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


_ENV_FIELDS = {
    "model": ("JOBBENCH_JUDGE_MODEL", "JUDGE_MODEL"),
    "api_base": ("JOBBENCH_JUDGE_API_BASE", "JUDGE_API_BASE"),
    "api_key": ("JOBBENCH_JUDGE_API_KEY", "JUDGE_API_KEY"),
    "mode": ("JOBBENCH_JUDGE_MODE",),
    "decide": ("JOBBENCH_JUDGE_DECIDE",),
    "concurrency": ("JOBBENCH_JUDGE_CONCURRENCY",),
    "timeout": ("JOBBENCH_JUDGE_TIMEOUT",),
    "max_attempts": ("JOBBENCH_JUDGE_MAX_ATTEMPTS",),
    "seed": ("JOBBENCH_JUDGE_SEED",),
    "cache_path": ("JOBBENCH_JUDGE_CACHE",),
    "cache_share": ("JOBBENCH_JUDGE_CACHE_SHARE",),
    "prices_file": ("JOBBENCH_JUDGE_PRICES",),
    "label": ("JOBBENCH_JUDGE_LABEL",),
}


def load_judge_config(
    config_file: Path | str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> JudgeConfig:
    """Build a :class:`JudgeConfig` from a TOML file, the environment and explicit values.

    Args:
        config_file: TOML file (default: ``$JOBBENCH_JUDGE_CONFIG`` if set).
        env: environment mapping (default ``os.environ``).
        **overrides: explicit values (CLI flags); None values are ignored.

    Returns:
        The configuration; precedence overrides > our env > public env > file > defaults.

    Raises:
        ValueError: naming the file/variable and field when a value is invalid.
        FileNotFoundError: the config file does not exist.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    source: dict[str, str] = {}
    path = config_file or env.get("JOBBENCH_JUDGE_CONFIG")
    if path:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{p}: invalid TOML ({exc})") from exc
        table = data.get("judge", data)
        if not isinstance(table, dict):
            raise ValueError(f"{p}: [judge] must be a table")
        for k, v in table.items():
            values[k] = v
            source[k] = f"{p}: {k}"
    for field, names in _ENV_FIELDS.items():
        for name in reversed(names):  # public first, ours overwrite
            if env.get(name):
                values[field] = env[name]
                source[field] = f"environment variable {name}"
    for k, v in overrides.items():
        if v is not None:
            values[k] = v
            source[k] = f"option --{k.replace('_', '-')}"
    try:
        return JudgeConfig.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "?"
        where = source.get(field, field)
        raise ValueError(
            f"invalid judge setting from {where}: {err['msg']} (got {err.get('input')!r})"
        ) from exc
