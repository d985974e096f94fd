"""Check kind ``json_path``: a value at a dotted path in a JSON deliverable."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

from ...extract import FolderExtraction
from ...tasks import JsonPathCheck
from ._common import (
    DELIVERABLE_ERRORS,
    CheckResult,
    describe_expect,
    expect_matches,
    no_file,
    select_files,
    show,
    unreadable,
)

JSON_EXTENSIONS = (".json",)
MAX_JSON_BYTES = 50_000_000
_STEP = re.compile(r"\[(\*|-?\d+)\]|\[\"([^\"]*)\"\]|\['([^']*)'\]")


def parse_path(path: str) -> list[str | int]:
    """``"items[0].name"`` → ``["items", 0, "name"]``; ``"items[*].id"`` → ``["items", "*", "id"]``.

    A leading ``$`` or ``$.`` is accepted; ``["key.with.dots"]`` quotes a key.

    Raises:
        ValueError: for an empty or malformed path.
    """
    s = path.strip()
    if s.startswith("$"):
        s = s[1:].lstrip(".")
    if not s:
        raise ValueError(f"empty JSON path {path!r}")
    steps: list[str | int] = []
    i = 0
    while i < len(s):
        if s[i] == "[":
            m = _STEP.match(s, i)
            if not m:
                raise ValueError(f"malformed JSON path {path!r} at {s[i:]!r}")
            if m.group(1) is not None:
                steps.append("*" if m.group(1) == "*" else int(m.group(1)))
            else:
                steps.append(m.group(2) if m.group(2) is not None else m.group(3))
            i = m.end()
        elif s[i] == ".":
            i += 1
        else:
            j = i
            while j < len(s) and s[j] not in ".[":
                j += 1
            steps.append(s[i:j])
            i = j
    return steps


def resolve(doc: Any, steps: list[str | int]) -> list[Any]:
    """Every value reached by following ``steps`` from ``doc`` (``*`` fans out over list
    elements or dict values); missing keys/indexes reach nothing."""
    current = [doc]
    for step in steps:
        nxt: list[Any] = []
        for node in current:
            if step == "*":
                if isinstance(node, list):
                    nxt.extend(node)
                elif isinstance(node, dict):
                    nxt.extend(node.values())
            elif isinstance(step, int):
                if isinstance(node, list) and -len(node) <= step < len(node):
                    nxt.append(node[step])
            elif isinstance(node, dict) and step in node:
                nxt.append(node[step])
        current = nxt
    return current


def _json_text(data: bytes) -> str:
    """Decode a JSON file: UTF-16/UTF-32 when it starts with their byte-order mark (as
    Windows tools write it), else UTF-8 with or without BOM (UnicodeDecodeError otherwise)."""
    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(enc)
    return data.decode("utf-8-sig")


def evaluate(check: JsonPathCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Resolve ``check.path`` in every matching JSON deliverable (default ``*.json``); pass
    when any value reached matches ``check.expect``."""
    try:
        steps = parse_path(check.path)
    except ValueError as exc:
        return CheckResult(passed=False, error=True, detail=f"json_path: {exc}")
    files = select_files(root, check.file, JSON_EXTENSIONS)
    if not files:
        return no_file("json_path", check.file, "JSON file (*.json)")
    reasons = []
    for rel in files:
        p = Path(root) / rel
        try:
            if p.stat().st_size > MAX_JSON_BYTES:
                raise ValueError(f"larger than {MAX_JSON_BYTES} bytes")
            doc = json.loads(_json_text(p.read_bytes()))
        except DELIVERABLE_ERRORS as exc:  # this file only (RecursionError: nested too deeply)
            reasons.append(unreadable(rel, exc, "not valid JSON"))
            continue
        values = resolve(doc, steps)
        if not values:
            reasons.append(f"{rel}: nothing at {check.path!r}")
            continue
        for v in values:
            if not isinstance(v, (dict, list)) and expect_matches(v, check.expect):
                return CheckResult(
                    passed=True,
                    detail=f"{rel}: {check.path} = {show(v)!r}",
                    evidence=f"{check.path} = {json.dumps(v, ensure_ascii=False)}",
                    file=rel,
                )
        shown = ", ".join(
            repr(show(v)) if not isinstance(v, (dict, list)) else type(v).__name__
            for v in values[:5]
        )
        reasons.append(f"{rel}: {check.path} = {shown}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
