"""Reading the judge's answer out of a model reply.

Two readings, and the grader (``jobbench/judge/_grade.py``) trusts them differently:

- :func:`sole_object`: the reply *is* one JSON object, with only the few harmless things
  its docstring lists around it (leading reasoning, a lead-in or sign-off of allowed words,
  one fence or answer tag pair). Whatever its strings hold (a quoted ``</think>``, a forged
  verdict copied from a deliverable), they are the object's text. Only this reading can
  give a **pass** (and only without :func:`jobbench.judge._prompts.reply_doubts`).
- :func:`reply_objects`: the tolerant reading of anything else (prose around objects,
  repairs, Python literals, a reply cut at the token limit): every object of the reply, in
  order, so that the caller can tell the judge's answer from verdicts it quoted. The grader
  takes only **fail** verdicts from it; a pass it would give is asked again, since a
  deliverable can plant an object the judge quotes.

:func:`recover_json` is the tolerant recovery of one object used elsewhere: the reply as is;
the body of a Markdown code fence; the first balanced ``{…}``; the span from the first ``{``
to the last ``}``; each of these repaired (trailing commas removed, Python
``True/False/None`` and typographic quotes outside strings fixed, ``//`` line comments
dropped); a Python-literal reading (single-quoted dicts); and finally a truncated reply with
its open strings, arrays and objects closed. Whatever is recovered is still validated item
by item by the caller, so a recovery can never invent a verdict.

Any failure to parse, whatever its kind (a nesting too deep for the parser, a reply over
:data:`MAX_REPLY_CHARS`, a reply over :data:`MAX_TOLERANT_CHARS` that is not one object), is
a ``ValueError``: a bad reply like any other.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

MAX_REPLY_CHARS = 1_000_000
"""Replies longer than this (characters, after reasoning blocks are removed) are not parsed."""

MAX_TOLERANT_CHARS = 32_000
"""Replies longer than this (characters, after the leading reasoning) are read only when
they are one JSON object (:func:`sole_object`): the tolerant reading scans a reply several
times, and hostile shapes grow worse than linearly (measured on this project's 2-core
machine: ~4 s for 50,000 characters of ``</think>{}`` repeated, ~20 s for 100,000). A
judge's answer in the asked shapes is a few kilobytes (about 600 characters per
criterion)."""

PREAMBLE_MAX_CHARS = 120
"""Longest lead-in :func:`sole_object` accepts before the object (``Here is my evaluation:``)."""

_THINK_TAGS = ("think", "thinking", "reasoning", "reflection")
_THINK_CLOSE = re.compile(r"</(" + "|".join(_THINK_TAGS) + r")>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(" + "|".join(_THINK_TAGS) + r")>", re.IGNORECASE)
_THINK_ANY = re.compile(r"<(/?)(" + "|".join(_THINK_TAGS) + r")>", re.IGNORECASE)


@dataclass(frozen=True)
class _Block:
    """A reasoning block ``text`` at ``[a, b)`` of the text it was found in."""

    a: int
    b: int
    text: str


_FENCE = re.compile(r"```(?:json|JSON)?[^\S\n]*\n?(.*?)```", re.DOTALL)


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


_TOKENS = re.compile(r'\\.|[{}"]', re.DOTALL)


def _brace_pairs(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """The matched ``{…}`` pairs of ``text`` and the ``{`` that never close, in one pass.

    Inside a brace JSON string rules hold (a ``"`` opens a string, a backslash escapes the
    next character, braces in strings are text); outside every brace a ``"`` or a
    backslash is prose.

    Returns:
        ``(pairs, unclosed)``: pairs as ``(start, end)`` (end exclusive) sorted by start;
        the positions of the unclosed ``{`` in ascending order.
    """
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    in_str = False
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if in_str:
            if tok == '"':
                in_str = False
        elif tok == '"':
            in_str = bool(stack)
        elif tok == "{":
            stack.append(m.start())
        elif tok == "}" and stack:
            pairs.append((stack.pop(), m.end()))
    pairs.sort()
    return pairs, stack


def _outermost(pairs: list[tuple[int, int]], cut: int) -> list[tuple[int, int]]:
    """The pairs (sorted by start, properly nested) inside no other pair and starting
    before ``cut``."""
    out: list[tuple[int, int]] = []
    reach = -1
    for a, b in pairs:
        if a >= cut:
            break
        if a >= reach:
            out.append((a, b))
            reach = b
    return out


def _balanced_objects(text: str) -> list[str]:
    """Top-level balanced ``{…}`` spans, in order (string literals respected); none from
    the first ``{`` that never closes on (a truncated reply: the spans inside it are its
    members)."""
    pairs, unclosed = _brace_pairs(text)
    return [text[a:b] for a, b in _outermost(pairs, unclosed[0] if unclosed else len(text))]


def _repair(text: str, comments: bool = True) -> str:
    """Fix common near-JSON outside string literals: typographic quotes (when the text has
    no straight ones), raw line breaks inside strings, trailing commas, Python
    ``True/False/None`` and, with ``comments``, ``//`` line comments (dropped: the only
    step that deletes text)."""
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
        if comments and ch == "/" and text.startswith("//", i):
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


class RepeatedKeyError(ValueError):
    """A JSON object or Python dict literal of a reply gives one key twice: which value
    the judge meant cannot be told (``json`` and Python both keep the last silently)."""


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :func:`json.loads` that refuses repeated keys."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise RepeatedKeyError(f"a JSON object of the reply repeats the key {k!r}")
        out[k] = v
    return out


def _loads_object(text: str) -> dict[str, Any] | None:
    """``text`` parsed as one JSON object, or None when it is not one.

    Raises:
        RepeatedKeyError: an object in it gives a key twice.
    """
    try:
        obj = json.loads(text, object_pairs_hook=_no_repeats)
    except (json.JSONDecodeError, RecursionError):
        return None
    except RepeatedKeyError:
        raise
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _literal_repeats_a_key(text: str) -> str | None:
    """The first key a Python dict literal in ``text`` gives twice, or None (``text`` is
    known to be a valid literal)."""
    for node in ast.walk(ast.parse(text, mode="eval")):
        if isinstance(node, ast.Dict):
            seen: set[Any] = set()
            for k in node.keys:
                if isinstance(k, ast.Constant):
                    if k.value in seen:
                        return str(k.value)
                    seen.add(k.value)
    return None


_PY_TOKENS = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|\b(true|false|null)\b")
_PY_WORDS = {"true": "True", "false": "False", "null": "None"}


def _literal_object(cand: str) -> dict[str, Any] | None:
    """``cand`` read as a Python dict literal (single-quoted strings), also with JSON's
    ``true``/``false``/``null`` outside strings read as Python's; None if it is not one.

    Raises:
        RepeatedKeyError: the literal gives a key twice.
    """
    forms = [cand]
    pythonised = _PY_TOKENS.sub(lambda m: _PY_WORDS[m.group(1)] if m.group(1) else m.group(), cand)
    if pythonised != cand:
        forms.append(pythonised)
    for form in forms:
        try:
            lit = ast.literal_eval(form)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(lit, dict):
            key = _literal_repeats_a_key(form)
            if key is not None:
                raise RepeatedKeyError(f"a JSON object of the reply repeats the key {key!r}")
            return cast(dict[str, Any], json.loads(json.dumps(lit, default=str)))
    return None


def _readable_spans(text: str) -> list[tuple[int, int]]:
    """The outermost ``{…}`` spans of ``text`` that parse as JSON objects as written (a
    reasoning tag inside one is the object's text)."""
    pairs, _ = _brace_pairs(text)
    out = []
    for a, b in _outermost(pairs, len(text)):
        try:
            if _loads_object(text[a:b]) is not None:
                out.append((a, b))
        except RepeatedKeyError:
            continue
    return out


def drop_leading_reasoning(text: str) -> tuple[str, bool]:
    """``text`` without the reasoning it starts with: one or more ``<think>…</think>``
    blocks (also ``thinking``, ``reasoning``, ``reflection``), each opening tag at the start
    of what is left (after whitespace) and closed by the first closing tag of its name.

    Returns:
        ``(rest, leading)``: what follows the blocks (``""`` when a block never closes: a
        reply that ran out while still reasoning holds no answer) and whether any block was
        dropped.
    """
    out, leading = text, False
    while True:
        head = out.lstrip()
        m = _THINK_OPEN.match(head)
        if m is None:
            return out, leading
        leading = True
        close = re.compile(rf"</{re.escape(m.group(1))}>", re.IGNORECASE).search(head, m.end())
        if close is None:
            return "", True
        out = head[close.end() :]


_LEAD_IN_WORDS = frozenset(
    "sure okay ok certainly alright here here's heres is are below the my this following final "
    "json evaluation assessment verdict verdicts answer response reply result results grading "
    "grade grades output object in format requested as of for based on analysis review i i'll "
    "i've have evaluated assessed reviewed checked each deliverable deliverables against and "
    "with to at looking after careful carefully criteria criterion rubric rubrics let me "
    "evaluate assess check now".split()
)
"""The only words a lead-in before the object may hold (:func:`_is_lead_in`): ``Here is my
evaluation:``, ``**Final answer** (JSON):``. A list of words allowed, not of words refused:
a judge that states an outcome in prose before quoting an object (``Criterion 0 is unmet``,
``It doesn’t…``, ``Ergebnis: nicht erfüllt``) writes some other word."""

_LEAD_IN_CHARS = re.compile(r"[A-Za-z' ,.:!()*_#>\-]*")


def _only_words(text: str, words: frozenset[str], lines: int) -> bool:
    """Whether ``text`` is empty, or at most :data:`PREAMBLE_MAX_CHARS` characters on at
    most ``lines`` lines of ASCII letters and light punctuation, every word in ``words``."""
    t = text.strip()
    if not t:
        return True
    if len(t) > PREAMBLE_MAX_CHARS or t.count("\n") >= lines:
        return False
    if not _LEAD_IN_CHARS.fullmatch(t.replace("\n", " ")):
        return False
    found = re.findall(r"[A-Za-z']+", t)
    return bool(found) and all(w.casefold() in words for w in found)


def _is_lead_in(text: str) -> bool:
    """Whether ``text`` (what precedes the object) is a bare lead-in: two lines at most,
    every word in :data:`_LEAD_IN_WORDS` (:func:`_only_words`)."""
    return _only_words(text, _LEAD_IN_WORDS, 2)


_SIGN_OFF_WORDS = frozenset(
    "hope this helps let me know if you need have any anything else further more questions "
    "details clarification happy to help glad i can you'd would like changes adjustments "
    "other".split()
)
"""The only words a sign-off after the object may hold (``Hope this helps!``): a judge that
writes its answer after quoting an object (``Criterion 0 is not met.``) writes other words."""


def _is_sign_off(text: str) -> bool:
    """Whether ``text`` (what follows the object) is empty or a bare sign-off: one line,
    every word in :data:`_SIGN_OFF_WORDS` (:func:`_only_words`)."""
    return _only_words(text, _SIGN_OFF_WORDS, 1)


_END_TOKENS = (
    "<|im_end|>",
    "<|eot_id|>",
    "<|end|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "</s>",
    "<end_of_turn>",
    "<eos>",
)
"""End-of-turn tokens some servers leave at the end of a reply (ChatML, Llama 3, Phi, GPT,
Gemma, Llama 2 and Mistral): they carry no verdict."""


def _strip_end_tokens(text: str) -> str:
    """``text`` stripped, with :data:`_END_TOKENS` at its end removed one by one (linear:
    a pattern with a leading ``\\s*`` rescans every run of whitespace)."""
    s = text.strip()
    while True:
        for tok in _END_TOKENS:
            if s.endswith(tok):
                s = s[: -len(tok)].rstrip()
                break
        else:
            return s


_WRAPPER_OPEN = r"<(answer|json|output|final_answer)>"
_WRAPPER = re.compile(_WRAPPER_OPEN + r"(.*)</\1>", re.DOTALL | re.IGNORECASE)
"""A tag pair wrapping the whole answer (``<answer>…</answer>``)."""

_WRAPPER_THEN = re.compile(_WRAPPER_OPEN + r"(.*?)</\1>(.*)", re.DOTALL | re.IGNORECASE)
"""A tag pair at the start, closed by the first closing tag of its name, and the rest."""

_FENCE_OPEN = r"```[^\S\n]*(?:json5?|javascript|js)?[^\S\n]*\n?"
_WHOLE_FENCE = re.compile(_FENCE_OPEN + r"(.*?)\n?[^\S\n]*```", re.DOTALL | re.IGNORECASE)
"""One Markdown fence spanning the whole text (language tag ``json`` in any case, with or
without a space, or none; one line or several)."""

_FENCE_THEN = re.compile(_FENCE_OPEN + r"(.*?)\n?[^\S\n]*```(.*)", re.DOTALL | re.IGNORECASE)
"""One Markdown fence at the start, closed by the first fence mark after it, and the rest."""


def sole_object(text: str | None) -> tuple[dict[str, Any], str] | None:
    """The reply's answer when the reply is nothing but that one JSON object, else None.

    Accepted around the object, and nothing else: whitespace; leading reasoning blocks
    (:func:`drop_leading_reasoning`); a lead-in made only of the words of
    :data:`_LEAD_IN_WORDS` (:func:`_is_lead_in`: ``Here is my evaluation:``); one tag pair
    wrapping the rest (:data:`_WRAPPER`); one Markdown fence spanning the rest
    (:data:`_WHOLE_FENCE`), or a stray closing fence after the object; a sign-off after the
    object, fence or tag pair made only of the words of :data:`_SIGN_OFF_WORDS` (``Hope
    this helps!``); end-of-turn tokens at the very end (:data:`_END_TOKENS`); a byte-order
    mark. Control characters inside strings are accepted
    (``json.loads(strict=False)``): a raw line break copied into an evidence string is still
    the string's text. An object that is not JSON as written is mended without deleting any
    text (:func:`_repair` without comment removal: trailing commas, ``True``/``None``,
    typographic quotes): a ``//`` copied from a deliverable would otherwise cut the judge's
    own verdict away. Python literals are not read here.

    Any other text before or after the object, a second object, or a repeated key gives
    None: then the answer is a guess among parts of the reply, one of which a deliverable may
    have planted.

    Args:
        text: the reply content.

    Returns:
        ``(object, method)`` or None; method is ``direct`` for a reply that is the object
        as written, else ``sole`` followed by what was set aside or mended, in order:
        ``+reasoning``, ``+preamble``, ``+wrapper``, ``+sign_off``, ``+fence``, then
        ``+control_chars`` or ``+repair`` (a sign-off after a bare object is named after
        ``+fence``'s place).
    """
    if not text or len(text) > MAX_REPLY_CHARS:
        return None
    rest, leading = drop_leading_reasoning(text.lstrip("\ufeff"))
    how = "+reasoning" if leading else ""
    s = _strip_end_tokens(rest)
    starts = [i for i in (s.find("{"), s.find("```"), s.find("<")) if i >= 0]
    if not starts:
        return None
    first = min(starts)
    if first:
        if not _is_lead_in(s[:first]):
            return None
        how += "+preamble"
        s = s[first:]
    m = _WRAPPER.fullmatch(s) or _WRAPPER_THEN.fullmatch(s)
    if m is not None:
        if m.re is _WRAPPER_THEN:
            if not _is_sign_off(m.group(3)):
                return None
            how += "+sign_off"
        s = m.group(2).strip()
        how += "+wrapper"
    if s.startswith("```"):
        m = _WHOLE_FENCE.fullmatch(s)
        if m is None:  # a sign-off after the fence
            m = _FENCE_THEN.fullmatch(s)
            if m is None or not _is_sign_off(m.group(2)):
                return None
            how += "+sign_off"
        s = m.group(1).strip()
        how += "+fence"
    elif s.endswith("```"):
        s = s[:-3].rstrip()
    if s.startswith("{") and not s.endswith("}"):  # a sign-off after the object
        try:
            _, end = json.JSONDecoder(strict=False).raw_decode(s)
        except (ValueError, RecursionError):
            end = len(s)
        if end < len(s):
            if not _is_sign_off(s[end:]):
                return None
            s = s[:end]
            how += "+sign_off"
    try:
        obj = _loads_object(s)
        if obj is None:
            obj = json.loads(s, object_pairs_hook=_no_repeats, strict=False)
            how += "+control_chars"
    except RepeatedKeyError:
        return None
    except (ValueError, RecursionError):  # not JSON as written: mended without deleting
        try:
            obj = json.loads(
                _repair(s, comments=False), object_pairs_hook=_no_repeats, strict=False
            )
        except (ValueError, RecursionError):  # a repeated key included
            return None
        how += "+repair"
    if not isinstance(obj, dict):
        return None
    return obj, ("sole" + how if how else "direct")


def split_reasoning(text: str) -> tuple[str, bool, list[str]]:
    """Split a reply into the text that holds its answer and its reasoning.

    The model's own reasoning is what the reply *starts* with: one or more
    ``<think>…</think>`` blocks (also ``thinking``, ``reasoning``, ``reflection``) or a
    block cut off before its closing tag (a reply that ran out while still reasoning holds
    no answer). Any other tag is taken out as before (a block in the middle, text before a
    closing tag whose opening tag is missing as servers that put the opening tag in the
    prompt write, everything from an opening tag that never closes) but it may as well be a
    tag the judge *mentions* while quoting a deliverable, cutting away its own answer: those
    parts are returned so that the caller can compare the verdicts in them with the answer's.
    A tag inside a JSON object of the reply (a quoted line in an evidence string) is the
    object's text, never a cut.

    Returns:
        ``(body, leading, removed)``: the text left, whether leading reasoning was dropped,
        and the parts taken out other than the leading reasoning, in order.

    Raises:
        ValueError: more than :data:`MAX_TOLERANT_CHARS` characters follow the leading
            reasoning.
    """
    out, leading = drop_leading_reasoning(text)
    if not out:
        return "", leading, []
    if len(out) > MAX_TOLERANT_CHARS:
        raise ValueError(
            f"reply too large to read unless it is one JSON object ({len(out):,} characters "
            f"after its leading reasoning; limit {MAX_TOLERANT_CHARS:,})"
        )
    removed: list[str] = []

    def loose(rx: re.Pattern[str]) -> list[re.Match[str]]:
        kept = _readable_spans(out)
        return [m for m in rx.finditer(out) if not any(a <= m.start() < b for a, b in kept)]

    def loose_blocks() -> list[_Block]:
        """The ``<tag>…</tag>`` blocks of ``out`` as a non-greedy search finds them (each
        opening tag to the next closing tag of its name, then on after it), in one pass
        over the tags (the regex itself rescans to the end from every unclosed tag)."""
        kept = _readable_spans(out)
        found: list[_Block] = []
        start: re.Match[str] | None = None
        for m in _THINK_ANY.finditer(out):
            if start is None:
                if not m.group(1) and not any(a <= m.start() < b for a, b in kept):
                    start = m
            elif m.group(1) and m.group(2).lower() == start.group(2).lower():
                found.append(_Block(start.start(), m.end(), out[start.start() : m.end()]))
                start = None
        return found

    blocks = loose_blocks()
    for blk in reversed(blocks):
        removed.insert(0, blk.text)
        out = out[: blk.a] + out[blk.b :]
    closes = loose(_THINK_CLOSE)
    if closes:
        removed.append(out[: closes[-1].end()])
        out = out[closes[-1].end() :]
    opens = loose(_THINK_OPEN)
    if opens:
        removed.append(out[opens[0].start() :])
        out = out[: opens[0].start()]
    return out, leading, removed


def _parse_one(cand: str) -> tuple[dict[str, Any] | None, str]:
    """(object, repair step) of one candidate span: as is, repaired, or a Python literal.

    Raises:
        RepeatedKeyError: it gives a key twice.
    """
    obj = _loads_object(cand)
    if obj is not None:
        return obj, ""
    obj = _loads_object(_repair(cand))
    if obj is not None:
        return obj, "+repair"
    obj = _literal_object(cand)
    if obj is not None:
        return obj, "python_literal"
    return None, ""


_VERDICT_LIKE = re.compile(r"verdict|rubric|criteri|\bpass(?:ed)?\b|\bfail(?:ed)?\b", re.IGNORECASE)
"""Words of the reply shapes the judge is asked for (``jobbench/judge/_prompts.py``): an
unreadable or unclosed ``{…}`` holding one may be the judge's own answer."""


def _objects_of(
    text: str, cut: bool
) -> tuple[list[tuple[dict[str, Any], str]], list[str], int | None]:
    """The objects of ``text`` the grader can read, and why others may hide an answer.

    Objects are the outermost ``{…}`` spans that parse (as is, repaired or as a Python
    literal), except spans inside an unclosed ``{`` that starts an answer: one followed by
    words of a verdict before the next unclosed ``{`` (its members are closed spans), or,
    when the reply was ``cut`` at the token limit, any. An unclosed ``{`` in prose ("the
    set {A, B") is ignored.

    A span that gives a key twice (:class:`RepeatedKeyError`) counts as unreadable.

    Returns:
        ``([(object, method), …], doubts, open_at)``; each doubt names an unreadable
        verdict-like span or an unclosed answer; ``open_at`` is where that answer starts.
    """
    pairs, unclosed = _brace_pairs(text)
    starts = [a for a, _ in pairs]
    doubts: list[str] = []
    cut_at = len(text)
    open_at: int | None = None
    for n, u in enumerate(unclosed):
        nxt = unclosed[n + 1] if n + 1 < len(unclosed) else len(text)
        own, pos = [], u
        inside = pairs[bisect.bisect_right(starts, u) : bisect.bisect_left(starts, nxt)]
        for a, b in _outermost(inside, nxt):
            own.append(text[pos:a])
            pos = b
        own.append(text[pos:nxt])
        if cut or _VERDICT_LIKE.search("".join(own)):
            cut_at = open_at = u
            doubts.append(f"an unclosed object at character {u}: {text[u : u + 80]!r}")
            break
    out: list[tuple[dict[str, Any], str]] = []
    for a, b in _outermost(pairs, cut_at):
        why = ""
        try:
            obj, how = _parse_one(text[a:b])
        except RepeatedKeyError as exc:
            obj, how, why = None, "", f" ({exc})"
        if obj is not None:
            out.append((obj, "python_literal" if how == "python_literal" else "balanced" + how))
        elif _VERDICT_LIKE.search(text[a:b]):
            doubts.append(f"an unreadable object at character {a}{why}: {text[a : a + 80]!r}")
    return out, doubts, open_at


def reply_objects(text: str | None, cut: bool = False) -> list[tuple[dict[str, Any], str]]:
    """Every JSON object of a model reply the grader may read, in the order they appear.

    A reply that is one JSON object gives that object (``direct``). Otherwise the leading
    reasoning is dropped and other reasoning tags are split off (:func:`split_reasoning`);
    each outermost ``{…}`` of what is left that parses (as is, repaired or as a Python
    literal) is one entry (``balanced``, ``balanced+repair``, ``python_literal``), and the
    objects of the parts split off follow with method ``reasoning`` (they are compared with
    the answer, never taken as one). With no object, :func:`recover_json`'s remaining steps
    (fence, span, truncated reply) give at most one.

    A reply that holds a readable object *and* something that may be the judge's own
    answer the grader cannot read (:func:`_objects_of`'s doubts: an unreadable span in the
    words of a verdict, an unclosed answer, in the body or the parts split off) is refused:
    taking the readable one would take a verdict the judge may only have quoted.

    Args:
        text: the reply content.
        cut: the server stopped the reply at the token limit (``finish_reason`` ``length``):
            then only a reply that is one object, or a single object left open at the end
            (recovered as ``truncated``), is read; complete objects before the cut may be
            quoted ones, the answer being the part cut off.

    Returns:
        ``[(object, method), …]``, never empty.

    Raises:
        ValueError: no JSON object, a reply over :data:`MAX_REPLY_CHARS`, one the parser
            cannot read at all (e.g. nested too deep), a repeated key
            (:class:`RepeatedKeyError`), or a doubt as above; the message says which.
    """
    if not text or not text.strip():
        raise ValueError("empty reply")
    if len(text) <= MAX_REPLY_CHARS:
        whole = _loads_object(text.strip())
        if whole is not None:  # one JSON object as a whole: whatever its strings hold
            return [(whole, "direct")]
    body, _, removed = split_reasoning(text)
    if not body.strip():
        if any(_VERDICT_LIKE.search(part) for part in removed):
            raise ValueError("the reply's only verdicts are inside reasoning tags")
        raise ValueError("the reply holds only reasoning")
    if len(body) > MAX_REPLY_CHARS:
        raise ValueError(f"reply too large to parse ({len(body):,} characters)")
    try:
        s = body.strip()
        direct = _loads_object(s)
        if direct is not None and not removed:
            return [(direct, "direct")]
        out, doubts, open_at = _objects_of(s, cut)
        if direct is not None:
            out = [(direct, "direct")]
        for part in removed:
            got, part_doubts, _ = _objects_of(part, False)
            out += [(obj, "reasoning") for obj, _ in got]
            doubts += [f"{d} (after a reasoning tag)" for d in part_doubts]
        if cut and any(how != "reasoning" for _, how in out):
            raise ValueError(
                "the reply was cut off at the token limit after complete JSON objects: "
                "they may be quoted ones, the answer being the part cut off"
            )
        if doubts and any(how != "reasoning" for _, how in out):
            raise ValueError(
                "the reply holds a readable JSON object beside what may be the judge's own "
                f"answer, which cannot be read: {doubts[0]}"
            )
        if any(how != "reasoning" for _, how in out):
            return out
        if out:
            raise ValueError("the reply's only verdicts are inside reasoning tags")
        if not doubts:
            return [recover_json(s)]
        if len(doubts) == 1 and open_at is not None:  # one answer left open: only its own start
            for cand in _closings(s[open_at:]):
                obj = _loads_object(_repair(cand))
                if obj is not None:
                    return [(obj, "truncated")]
        raise ValueError(
            "no readable JSON object; what may be the judge's answer cannot be read (a fence "
            f"or object inside it may be a quoted one): {'; '.join(doubts)}"
        )
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
