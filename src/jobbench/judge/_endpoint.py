"""The judge endpoint's identity: the part of every verdict-cache key that tells endpoints apart.

A unit's key (``JudgeUnit.key``, recorded in grades; a resumed grade keeps the verdicts an
earlier grade of the same inputs obtained, whatever the URL) is combined with the endpoint
identity only where the verdict cache is read and written (:func:`cache_key`).

Two servers that both call their model ``llama-3`` (or a scripted test server and a real one)
must not share verdicts, so a cache key holds, besides the model name, the endpoint's base URL
(without credentials or query string) and the model id the server reports for that name in
``GET <base>/models`` — for vLLM, the ``root`` of the matching entry (the weights it loaded),
else its ``id``. When the listing cannot be read (no such route, a time-out, an error) the
base URL alone identifies the endpoint. ``JudgeConfig.cache_share`` (``--judge-cache-share
NAME``, ``JOBBENCH_JUDGE_CACHE_SHARE``, TOML ``cache_share``) replaces all of that by the
name, so endpoints that serve the same weights share one cache scope on purpose.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ._cache import unit_key
from ._config import JudgeConfig, _public_url

DEFAULT_BASE = "https://api.openai.com/v1"
"""The base URL the ``openai`` SDK uses when none is set (``OPENAI_BASE_URL`` aside)."""

_LOCK = threading.Lock()
_SEEN: dict[tuple[str, str], str | None] = {}


def served_model_id(config: JudgeConfig, timeout: float = 10.0) -> str | None:
    """The model id the endpoint reports for ``config.model``, or None when it cannot tell.

    Reads ``GET <api_base>/models`` once per (base URL, model) in this process (at most
    ``timeout`` seconds, no retry) and returns the matching entry's ``root`` (vLLM: the
    weights path) or ``id``; with no entry named ``config.model``, a listing of exactly one
    model gives that one's. Never raises.
    """
    base = endpoint_base(config)
    key = (base, config.model or "")
    with _LOCK:
        if key in _SEEN:
            return _SEEN[key]
    found: str | None = None
    try:
        import openai

        api_key = config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        client = openai.OpenAI(
            base_url=config.api_base,
            api_key=api_key,
            max_retries=0,
            timeout=min(timeout, config.timeout),
        )
        entries: list[Any] = list(client.models.list().data)
        match = [e for e in entries if getattr(e, "id", None) == config.model]
        if not match and len(entries) == 1:
            match = entries
        if match:
            extra = getattr(match[0], "model_extra", None) or {}
            root = extra.get("root")
            found = str(root) if isinstance(root, str) and root else str(match[0].id)
    except Exception:  # noqa: BLE001 - an endpoint without a usable listing: base URL only
        found = None
    with _LOCK:
        _SEEN[key] = found
    return found


def endpoint_base(config: JudgeConfig) -> str:
    """The base URL the judge client calls, credentials and query string removed."""
    base = config.api_base or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE
    return (_public_url(base) or base).rstrip("/")


def endpoint_identity(config: JudgeConfig) -> dict[str, Any]:
    """The endpoint part of a verdict-cache key.

    Returns:
        ``{"shared": NAME}`` when ``config.cache_share`` is set, else ``{"api_base": URL,
        "served_model": ID or None}`` (see the module docstring).
    """
    if config.cache_share:
        return {"shared": config.cache_share}
    return {"api_base": endpoint_base(config), "served_model": served_model_id(config)}


def cache_key(key: str, config: JudgeConfig) -> str:
    """The verdict-cache key of a judge unit whose key (recorded in the grade, and matched
    when a grade resumes) is ``key``: hex sha256 of the unit key and
    :func:`endpoint_identity`."""
    return unit_key({"unit": key, "endpoint": endpoint_identity(config)})
