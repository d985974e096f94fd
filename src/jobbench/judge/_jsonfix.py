"""Tolerant recovery of JSON objects from near-JSON model replies.

Tried in order, stopping at the first that parses to a JSON object:
the reply as is; the body of a Markdown code fence; the first balanced ``{…}``; the span from
the first ``{`` to the last ``}``; each of these repaired (trailing commas removed, Python
``True/False/None`` and typographic quotes outside strings fixed, ``//`` line comments
dropped); a Python-literal reading (single-quoted dicts); and finally a truncated reply with
its open strings, arrays and objects closed. Whatever is recovered is still validated item
by item by the caller, so a recovery can never invent a verdict.

:func:`reply_objects` is what the grader reads: every JSON object of a reply in the order
they appear (reasoning blocks removed first, :func:`strip_reasoning`), so that the caller can
tell the judge's answer from verdicts it quoted (the grader takes none when the objects of
the requested shape disagree, ``jobbench/judge/_grade.py``). Any failure to parse, whatever its
kind (a nesting too deep for the parser, a reply over :data:`MAX_REPLY_CHARS`), is a
``ValueError``: a bad reply like any other.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

MAX_REPLY_CHARS = 1_000_000
"""Replies longer than this (characters, after reasoning blocks are removed) are not parsed."""

_THINK_TAGS = ("think", "thinking", "reasoning", "reflection")
_THINK_BLOCK = re.compile(r"<(" + "|".join(_THINK_TAGS) + r")>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(" + "|".join(_THINK_TAGS) + r")>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(" + "|".join(_THINK_TAGS) + r")>", re.IGNORECASE)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(index, char, in_string)`` for ``text[start:]`` under JSON string rules
    (backslash escapes); ``in_string`` is the state *after* the character, so an opening
    quote yields True and a closing quote False, and the last value tells whether the text
    ends inside a string."""
    in_str, esc = False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        yield i, ch, in_str


def _balanced_objects(text: str) -> list[str]:
    """Top-level balanced ``{…}`` spans, in order (string literals respected); stops at an
    object that never closes (a truncated reply)."""
    return [text[a:b] for a, b in _balanced_spans(text)]


def _balanced_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the spans :func:`_balanced_objects` returns."""
    out: list[tuple[int, int]] = []
    start = text.find("{")
    while start != -1:
        depth, end = 0, -1
        for i, ch, quoted in _scan(text, start):
            if quoted:
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end == -1:
            break
        out.append((start, end + 1))
        start = text.find("{", end + 1)
    return out


def _repair(text: str) -> str:
    """Fix common near-JSON outside string literals."""
    text = text.replace("\u201c", '"').replace("\u201d", '"') if text.count('"') == 0 else text
    out: list[str] = []
    i, n = 0, len(text)
    in_str, esc = False, False
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            elif ch == "\n":
                out[-1] = "\\n"  # raw newline inside a string
            i += 1
            continue
        if ch == '"':
            in_str = True
            out.append(ch)
            i += 1
            continue
        if ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
            continue
        if ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1
                continue
        for word, repl in (("True", "true"), ("False", "false"), ("None", "null")):
            if (
                text.startswith(word, i)
                and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))
                and not (
                    i + len(word) < n
                    and (text[i + len(word)].isalnum() or text[i + len(word)] == "_")
                )
            ):
                out.append(repl)
                i += len(word)
                break
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _closings(text: str) -> list[str]:
    """Candidate completions of a reply cut off mid-way: the text (and the text cut back to
    each of its last 50 top-level-or-nested commas) with open strings, arrays and objects
    closed."""
    start = text.find("{")
    if start == -1:
        return []
    body = text[start:]
    commas = [i for i, ch, quoted in _scan(body) if ch == "," and not quoted]
    out = []
    for cut in [len(body)] + commas[::-1][:50]:
        part = body[:cut]
        stack: list[str] = []
        in_str = False
        for _, ch, in_str in _scan(part):
            if in_str:
                continue
            if ch in "{[":
                stack.append("}" if ch == "{" else "]")
            elif ch in "}]" and stack:
                stack.pop()
        closed = part + ('"' if in_str else "")
        closed = re.sub(r"[,:]\s*$", "", closed.rstrip())
        out.append(closed + "".join(reversed(stack)))
    return out


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def strip_reasoning(text: str) -> tuple[str, bool]:
    """``text`` without its reasoning blocks, and whether it had any.

    Removed: every ``<think>…</think>`` block (also ``thinking``, ``reasoning``,
    ``reflection``); text before a closing tag whose opening tag is missing (servers that
    put the opening tag in the prompt); and everything from an opening tag that is never
    closed (a reply cut off while still reasoning holds no answer). A tag inside a JSON
    object of the reply (a quoted deliverable line in an evidence string) is the object's
    text, not a reasoning mark: it is never a cut.
    """

    def loose(found: list[re.Match[str]], within: str) -> list[re.Match[str]]:
        kept = [
            (a, b) for a, b in _balanced_spans(within) if _loads_object(within[a:b]) is not None
        ]
        return [m for m in found if not any(a <= m.start() < b for a, b in kept)]

    out = text
    blocks = loose(list(_THINK_BLOCK.finditer(out)), out)
    for m in reversed(blocks):
        out = out[: m.start()] + out[m.end() :]
    found = bool(blocks)
    closes = loose(list(_THINK_CLOSE.finditer(out)), out)
    if closes:
        out = out[closes[-1].end() :]
        found = True
    opens = loose(list(_THINK_OPEN.finditer(out)), out)
    if opens:
        out = out[: opens[0].start()]
        found = True
    return out, found


def _parse_one(cand: str) -> tuple[dict[str, Any] | None, str]:
    """(object, repair step) of one candidate span: as is, repaired, or a Python literal."""
    obj = _loads_object(cand)
    if obj is not None:
        return obj, ""
    obj = _loads_object(_repair(cand))
    if obj is not None:
        return obj, "+repair"
    try:
        lit = ast.literal_eval(cand)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None, ""
    if isinstance(lit, dict):
        return json.loads(json.dumps(lit, default=str)), "python_literal"
    return None, ""


def reply_objects(text: str | None) -> list[tuple[dict[str, Any], str]]:
    """Every JSON object of a model reply, in the order they appear.

    Reasoning blocks are removed first (:func:`strip_reasoning`). A reply that is one JSON
    object gives that object (``direct``); otherwise each top-level balanced ``{…}`` that
    parses (as is, repaired or as a Python literal) is one entry (``balanced``,
    ``balanced+repair``, ``python_literal``); with none, :func:`recover_json`'s remaining
    steps (fence, span, truncated reply) give at most one.

    Returns:
        ``[(object, method), …]``, never empty.

    Raises:
        ValueError: no JSON object, a reply over :data:`MAX_REPLY_CHARS`, or one the parser
            cannot read at all (e.g. nested too deep); the message says which.
    """
    if not text or not text.strip():
        raise ValueError("empty reply")
    if len(text) <= MAX_REPLY_CHARS:
        whole = _loads_object(text.strip())
        if whole is not None:  # one JSON object as a whole: whatever its strings hold
            return [(whole, "direct")]
    body, _ = strip_reasoning(text)
    if not body.strip():
        raise ValueError("the reply holds only a reasoning block")
    if len(body) > MAX_REPLY_CHARS:
        raise ValueError(f"reply too large to parse ({len(body):,} characters)")
    try:
        s = body.strip()
        direct = _loads_object(s)
        if direct is not None:
            return [(direct, "direct")]
        out: list[tuple[dict[str, Any], str]] = []
        for span in _balanced_objects(s):
            obj, how = _parse_one(span)
            if obj is not None:
                out.append((obj, "python_literal" if how == "python_literal" else "balanced" + how))
        if out:
            return out
        return [recover_json(s)]
    except (RecursionError, MemoryError) as exc:
        raise ValueError(f"reply cannot be parsed ({type(exc).__name__}: nested too deep)") from exc


def recover_json(text: str | None) -> tuple[dict[str, Any], str]:
    """Parse a JSON object out of a model reply.

    Args:
        text: the reply content.

    Returns:
        ``(object, method)`` where method names the step that worked (``direct``,
        ``fence``, ``balanced``, ``span``, ``…+repair``, ``python_literal``, ``truncated``).

    Raises:
        ValueError: no JSON object could be recovered (message quotes the reply's start).
    """
    if not text or not text.strip():
        raise ValueError("empty reply")
    s = text.strip()
    candidates: list[tuple[str, str]] = [(s, "direct")]
    for m in _FENCE.finditer(s):
        candidates.append((m.group(1).strip(), "fence"))
    for bal in _balanced_objects(s):
        candidates.append((bal, "balanced"))
    a, b = s.find("{"), s.rfind("}")
    if a != -1 and b > a:
        candidates.append((s[a : b + 1], "span"))
    for cand, method in candidates:
        obj = _loads_object(cand)
        if obj is not None:
            return obj, method
    for cand, method in candidates:
        obj = _loads_object(_repair(cand))
        if obj is not None:
            return obj, method + "+repair"
    for cand, _ in candidates:
        try:
            obj = ast.literal_eval(cand)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(obj, dict):
            return json.loads(json.dumps(obj, default=str)), "python_literal"
    for cand in _closings(s):
        obj = _loads_object(_repair(cand))
        if obj is not None:
            return obj, "truncated"
    raise ValueError(f"no JSON object in reply: {s[:200]!r}")
