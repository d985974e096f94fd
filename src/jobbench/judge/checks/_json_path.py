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
    agreeing,
    conflict_result,
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


class _Pairs(dict):
    """A JSON object that remembers every value of a key written more than once
    (``{"a": 1, "a": 2}``): ``repeats[key]`` holds all of them, in file order."""

    repeats: dict[str, list[Any]]


def _pairs(items: list[tuple[str, Any]]) -> dict:
    out = _Pairs(items)
    seen: dict[str, list[Any]] = {}
    for k, v in items:
        seen.setdefault(k, []).append(v)
    out.repeats = {k: vs for k, vs in seen.items() if len(vs) > 1}
    return out


def resolve(doc: Any, steps: list[str | int]) -> list[Any]:
    """Every value reached by following ``steps`` from ``doc`` (``*`` fans out over list
    elements or dict values); missing keys/indexes reach nothing. A key written several
    times in one object (as parsed with :func:`_pairs`) reaches each of its values."""
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
                nxt.extend(getattr(node, "repeats", {}).get(step, [node[step]]))
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
    when at least one value is reached and every value reached matches ``check.expect``
    (several files, or a key written twice, with values that disagree: fail with
    ``conflict=True``). A path with ``[*]`` is a membership test: a file passes when some
    element matches, and every file that holds the path must pass."""
    try:
        steps = parse_path(check.path)
    except ValueError as exc:
        return CheckResult(passed=False, error=True, detail=f"json_path: {exc}")
    files = select_files(root, check.file, JSON_EXTENSIONS)
    if not files:
        return no_file("json_path", check.file, "JSON file (*.json)")
    wildcard = "*" in steps
    reasons: list[str] = []
    statements: list[tuple[str, Any]] = []
    rels: dict[str, str] = {}
    for rel in files:
        p = Path(root) / rel
        try:
            if p.stat().st_size > MAX_JSON_BYTES:
                raise ValueError(f"larger than {MAX_JSON_BYTES} bytes")
            doc = json.loads(_json_text(p.read_bytes()), object_pairs_hook=_pairs)
        except DELIVERABLE_ERRORS as exc:  # this file only (RecursionError: nested too deeply)
            reasons.append(unreadable(rel, exc, "not valid JSON"))
            continue
        values = resolve(doc, steps)
        if not values:
            reasons.append(f"{rel}: nothing at {check.path!r}")
            continue
        scalars = [v for v in values if not isinstance(v, (dict, list))]
        if wildcard:
            # a wildcard asks whether SOME element holds the value: one statement per file
            hit = next((v for v in scalars if expect_matches(v, check.expect)), None)
            shown = ", ".join(
                repr(show(v)) if not isinstance(v, (dict, list)) else type(v).__name__
                for v in values[:5]
            )
            statements.append((f"{rel}: {check.path}", hit if hit is not None else f"[{shown}]"))
            rels[f"{rel}: {check.path}"] = rel
            continue
        for n, v in enumerate(values):
            where = f"{rel}: {check.path}" + (
                f" (value {n + 1} of {len(values)})" if len(values) > 1 else ""
            )
            statements.append((where, v if not isinstance(v, (dict, list)) else type(v).__name__))
            rels[where] = rel
    if not statements:
        return CheckResult(passed=False, detail="; ".join(reasons))
    ok, conflicting = agreeing(statements, check.expect, expect_matches)
    if ok:
        where, value = statements[0]
        more = f" (stated {len(statements)}×, all agree)" if len(statements) > 1 else ""
        return CheckResult(
            passed=True,
            detail=f"{where} = {show(value)!r}{more}",
            evidence=f"{check.path} = {json.dumps(value, ensure_ascii=False)}",
            file=rels[where],
        )
    if conflicting:
        good = [st for st in statements if expect_matches(st[1], check.expect)]
        return conflict_result("json_path", good, conflicting, check.expect, file=rels[good[0][0]])
    for where, value in statements:
        reasons.append(f"{where} = {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
