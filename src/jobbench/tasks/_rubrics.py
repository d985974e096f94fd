"""Parsing and validation of ``RUBRICS.json`` (public format plus extensions).

The public format (DESIGN §2): ``{"rubrics": [{"rubric": str, "weight": number >= 0,
"criterion": [str, ...]}]}``. A rubric's identity is its 0-based position; unknown keys are
ignored. The top-level key is chosen as the public judge does
(``data.get("rubrics") or data.get("evaluation_rubrics")``, ``eval/judge.py`` of
``Job-Bench/job-bench-eval``): ``rubrics`` unless it is absent or empty, then
``evaluation_rubrics``. The validity rules are those of the public dataset validator
(``scripts/sync_dataset.py`` of the same repository): a non-empty list of objects with a
non-blank ``rubric`` string, a non-empty ``criterion`` list of non-blank strings, a finite,
non-boolean ``weight`` >= 0, and a positive weight total.

Extensions (DESIGN §3, all optional): ``id``, ``requires``, ``checks``, ``files``,
``vision``.

Every problem is collected (never stop at the first) and reported with a JSON path such as
``rubrics[3].weight``.

Strict and tolerant parsing. The public tools ignore every key but ``rubric``, ``weight``
and ``criterion``, so a dataset made for them may hold keys that share a name with our
extensions but not their shape (``"id": 7``, ``"vision": "yes"``, a string ``checks``).
Strict parsing reports such a key as an error (the task is invalid). Tolerant parsing reports
it as a warning naming the file and JSON path, and the rubric loses that extension: a bad
``id`` (blank, not a string, shared by several rubrics, or the digits of another rubric's
position) leaves identity by position, a bad ``requires`` (or one in a cycle) leaves no
cross-rubric chain, a bad ``checks`` entry drops the rubric's ``checks``, and a bad ``files``
or ``vision`` is dropped, so the rubric is judged as the public tools judge it. Problems
with the public keys are errors either way.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._checks import CHECK_KINDS, Check
from ._model import Rubric
from ._problems import Problem

_CHECK_ADAPTER: TypeAdapter[Any] = TypeAdapter(Check)

PRIMARY_KEY = "rubrics"
FALLBACK_KEY = "evaluation_rubrics"


def _show(value: Any) -> str:
    """Render a JSON value the way it appears in the file (``true``, ``"x"``, ``NaN``)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return number if math.isfinite(number) else None


def escapes(pattern: str) -> bool:
    """True when a deliverable glob could name a file outside the deliverable folder.

    Rejected: absolute paths (``/x``, ``\\\\x``, ``C:x``, ``~/x``), and any ``..`` path
    segment (either separator). Globs are otherwise matched relative to the folder.
    """
    parts = pattern.replace("\\", "/").split("/")
    return (
        pattern.startswith(("/", "\\", "~"))
        or ".." in parts
        or (len(pattern) > 1 and pattern[1] == ":")
    )


_bad_glob = escapes  # former private name


@lru_cache(maxsize=1)
def rubrics_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the extended ``RUBRICS.json`` format.

    Shipped as ``jobbench/tasks/rubrics.schema.json``. It accepts what
    :func:`parse_rubrics` accepts except for the rules JSON Schema cannot state (NaN or
    Infinity weights, unique ids, existing acyclic ``requires`` targets, ``checks`` as long
    as ``criterion``); those only :func:`parse_rubrics` enforces. Regex patterns carry
    ``"format": "regex"``, which only validators that assert formats check.

    Returns:
        The schema as a dict (cached; do not mutate).
    """
    text = (
        resources.files("jobbench.tasks")
        .joinpath("rubrics.schema.json")
        .read_text(encoding="utf-8")
    )
    return json.loads(text)


def _choose_key(data: dict[str, Any]) -> str:
    primary = data.get(PRIMARY_KEY)
    if primary:
        return PRIMARY_KEY
    if data.get(FALLBACK_KEY):
        return FALLBACK_KEY
    return PRIMARY_KEY if PRIMARY_KEY in data or FALLBACK_KEY not in data else FALLBACK_KEY


EXTENSION_KEYS: tuple[str, ...] = ("id", "requires", "checks", "files", "vision")
"""Rubric keys of our extensions (DESIGN §3); the public tools ignore them."""

_Tag = tuple[tuple[int, ...], str]
"""The rubrics (0-based positions) and the extension key a problem concerns."""


def parse_rubrics(
    data: Any, file: str, *, strict: bool = True
) -> tuple[list[Rubric], str, list[Problem]]:
    """Turn a parsed ``RUBRICS.json`` document into rubrics.

    Args:
        data: the decoded JSON document.
        file: the file's display path, used in every :class:`Problem`.
        strict: True (the default here): a malformed extension key is an error. False
            (what :func:`jobbench.tasks.load_dataset` does unless asked to be strict): it is
            a warning and the rubric loses that extension (see the module docstring).

    Returns:
        ``(rubrics, key, problems)``: the rubrics that parsed (possibly partial when there
        are problems), the top-level key used (``rubrics`` or ``evaluation_rubrics``), and
        every problem found, each with a JSON path (``rubrics[3].weight``). The rubrics are
        trustworthy only when ``problems`` holds no errors.
    """
    found: list[tuple[Problem, _Tag | None]] = []

    def err(where: str, message: str) -> None:
        found.append((Problem(file=file, where=where, message=message), None))

    def ext_err(rubrics_at: tuple[int, ...], ext: str, where: str, message: str) -> None:
        found.append((Problem(file=file, where=where, message=message), (rubrics_at, ext)))

    problems = _Problems(found)

    if not isinstance(data, dict):
        err("$", f"must be a JSON object, got {_show(data)}")
        return [], PRIMARY_KEY, problems.final(PRIMARY_KEY, strict)
    key = _choose_key(data)
    if key not in data:
        err("$", f"missing key {PRIMARY_KEY!r} (or fallback {FALLBACK_KEY!r})")
        return [], key, problems.final(key, strict)
    items = data[key]
    if not isinstance(items, list) or not items:
        err(key, f"must be a non-empty list, got {_show(items)}")
        return [], key, problems.final(key, strict)

    objects: list[dict[str, Any] | None] = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            objects.append(item)
        else:
            err(f"{key}[{i}]", f"must be an object, got {_show(item)}")
            objects.append(None)

    ids = _collect_ids(objects, key, ext_err)
    if not strict:  # ids with a problem (all holders of a duplicate) answer to no name
        bad = problems.dropped("id")
        ids = {rid: i for rid, i in ids.items() if i not in bad}
    parsed: list[dict[str, Any]] = []
    total = 0.0
    weights_ok = True
    edges: dict[int, list[int]] = {}
    for i, item in enumerate(objects):
        if item is None:
            weights_ok = False
            continue
        where = f"{key}[{i}]"

        def ext(ext_key: str, at: str, message: str, i: int = i) -> None:
            ext_err((i,), ext_key, at, message)

        question = item.get("rubric")
        if not isinstance(question, str) or not question.strip():
            err(f"{where}.rubric", f"must be a non-empty string, got {_show(question)}")
            question = ""
        raw_weight = item.get("weight")
        weight = _finite_number(raw_weight)
        if weight is None or weight < 0:
            err(f"{where}.weight", f"must be a finite number ≥ 0, got {_show(raw_weight)}")
            weights_ok = False
            weight = 0.0
        total += weight
        texts = item.get("criterion")
        if not isinstance(texts, list) or not texts:
            err(f"{where}.criterion", f"must be a non-empty list of strings, got {_show(texts)}")
            texts = []
        for j, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                err(f"{where}.criterion[{j}]", f"must be a non-empty string, got {_show(text)}")

        checks: list[Any] = [None] * len(texts)
        if "checks" in item:
            given = item["checks"]
            check_err = functools.partial(ext, "checks")
            if not isinstance(given, list):
                check_err(
                    f"{where}.checks", f"must be a list aligned with criterion, got {_show(given)}"
                )
            else:
                if len(given) != len(texts):
                    check_err(
                        f"{where}.checks",
                        f"has {len(given)} entries but criterion has {len(texts)}; "
                        "they must align (use null where a criterion has no check)",
                    )
                for j, spec in enumerate(given[: len(texts)]):
                    checks[j] = _parse_check(spec, f"{where}.checks[{j}]", check_err)

        edges[i] = _parse_requires(
            item, i, where, ids, len(objects), functools.partial(ext, "requires")
        )
        files = _parse_files(item, where, functools.partial(ext, "files"))
        vision = item.get("vision")
        if vision is not None and not isinstance(vision, bool):
            ext("vision", f"{where}.vision", f"must be true or false, got {_show(vision)}")
            vision = None
        rid = item.get("id")
        parsed.append(
            {
                "index": i,
                "id": rid if isinstance(rid, str) and rid.strip() else str(i),
                "question": question,
                "weight": weight,
                "texts": texts,
                "checks": checks,
                "files": files,
                "vision": vision,
            }
        )

    if weights_ok and total <= 0:
        err(key, "weights sum to 0; at least one rubric needs a positive weight")
    elif weights_ok and not math.isfinite(total):
        err(key, "weights sum to infinity; use smaller weights (the total must be a finite number)")
    if not strict:  # a dropped requires cannot close a cycle
        edges = {i: ([] if i in problems.dropped("requires") else e) for i, e in edges.items()}
    for cycle in _find_cycles(edges):
        path = " → ".join(f"{key}[{n}]" for n in cycle)
        ext_err(
            tuple(dict.fromkeys(cycle)),
            "requires",
            f"{key}[{cycle[0]}].requires",
            f"requires chain forms a cycle: {path}",
        )

    dropped = {} if strict else {k: problems.dropped(k) for k in EXTENSION_KEYS}
    rubrics: list[Rubric] = []
    for r in parsed:
        i = r["index"]
        lost = {k for k, at in dropped.items() if i in at}
        checks = [None] * len(r["checks"]) if "checks" in lost else r["checks"]
        # plain dicts: pydantic validates the nested list in one call (3x faster than
        # building each Criterion separately on large datasets)
        criteria = [
            {"index": j, "text": t if isinstance(t, str) else "", "check": checks[j]}
            for j, t in enumerate(r["texts"])
        ]
        rubrics.append(
            Rubric(
                index=i,
                id=str(i) if "id" in lost else r["id"],
                question=r["question"],
                weight=r["weight"],
                criteria=criteria,
                requires=[] if "requires" in lost else edges[i],
                files=None if "files" in lost else r["files"],
                vision=None if "vision" in lost else r["vision"],
            )
        )
    return rubrics, key, problems.final(key, strict)


class _Problems:
    """The problems found so far, each tagged with the rubrics and extension key it
    concerns (None for the public format's own rules)."""

    def __init__(self, found: list[tuple[Problem, _Tag | None]]) -> None:
        self.found = found

    def dropped(self, ext: str) -> set[int]:
        """Positions of the rubrics with a problem in extension key ``ext``."""
        return {i for _, tag in self.found if tag is not None and tag[1] == ext for i in tag[0]}

    def final(self, key: str, strict: bool) -> list[Problem]:
        """Every problem in the order found; tolerant parsing turns extension problems into
        warnings that say what is ignored."""
        if strict:
            return [p for p, _ in self.found]
        out = []
        for p, tag in self.found:
            if tag is None:
                out.append(p)
                continue
            at, ext = tag
            where = ", ".join(f"{key}[{i}]" for i in at)
            note = (
                f"; `{ext}` ignored for {where}, as the public tools ignore it "
                "(--strict refuses the file)"
            )
            out.append(p.model_copy(update={"severity": "warning", "message": p.message + note}))
        return out


_Err = Callable[[str, str], None]


def _collect_ids(
    objects: list[dict[str, Any] | None],
    key: str,
    err: Callable[[tuple[int, ...], str, str, str], None],
) -> dict[str, int]:
    """Explicit ``id`` values → index (the first holder of a duplicate). Rubrics without an
    id answer to ``str(index)``, so an explicit id equal to another id-less rubric's index
    would be ambiguous. Problems go to ``err(rubrics, "id", where, message)``; a duplicate
    concerns every rubric holding it."""
    ids: dict[str, int] = {}
    for i, item in enumerate(objects):
        if item is None or "id" not in item:
            continue
        rid = item["id"]
        if not isinstance(rid, str) or not rid.strip():
            err((i,), "id", f"{key}[{i}].id", f"must be a non-empty string, got {_show(rid)}")
        elif rid in ids:
            err(
                (ids[rid], i),
                "id",
                f"{key}[{i}].id",
                f"duplicate id {_show(rid)} (also {key}[{ids[rid]}])",
            )
        else:
            ids[rid] = i
    for rid, i in ids.items():
        if rid.isdigit() and rid != str(i):
            other = int(rid)
            if other < len(objects) and ((o := objects[other]) is None or "id" not in o):
                err(
                    (i,),
                    "id",
                    f"{key}[{i}].id",
                    f"id {_show(rid)} is also the default id of {key}[{other}], which has no "
                    "id; choose a non-numeric id",
                )
    return ids


def _parse_requires(
    item: dict[str, Any], i: int, where: str, ids: dict[str, int], n: int, err: _Err
) -> list[int]:
    requires: list[int] = []
    if "requires" not in item:
        return requires
    req = item["requires"]
    if not isinstance(req, list):
        err(f"{where}.requires", f"must be a list of rubric ids or indexes, got {_show(req)}")
        return requires
    for k, target in enumerate(req):
        idx = _resolve_target(target, ids, n)
        if idx is None:
            err(
                f"{where}.requires[{k}]",
                f"unknown rubric {_show(target)} (give an existing id or a 0-based index "
                f"below {n})",
            )
        elif idx == i:
            err(f"{where}.requires[{k}]", "a rubric cannot require itself")
        elif idx not in requires:
            requires.append(idx)
    return requires


def _parse_files(item: dict[str, Any], where: str, err: _Err) -> list[str] | None:
    files = item.get("files")
    if files is None:
        return None
    if (
        not isinstance(files, list)
        or not files
        or not all(isinstance(f, str) and f.strip() for f in files)
    ):
        err(
            f"{where}.files",
            f"must be a non-empty list of non-empty glob strings, got {_show(files)}",
        )
        return None
    ok = True
    for k, pattern in enumerate(files):
        if escapes(pattern):
            err(f"{where}.files[{k}]", f"must stay inside the deliverables, got {_show(pattern)}")
            ok = False
    return files if ok else None


def _resolve_target(target: Any, ids: dict[str, int], n: int) -> int | None:
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target if 0 <= target < n else None
    if isinstance(target, str):
        return ids.get(target)
    return None


def _parse_check(spec: Any, where: str, err: _Err) -> Any:
    if spec is None:
        return None
    if not isinstance(spec, dict):
        err(where, f"must be a check object or null, got {_show(spec)}")
        return None
    if "kind" not in spec:
        err(f"{where}.kind", f"missing (known kinds: {', '.join(CHECK_KINDS)})")
        return None
    kind = spec["kind"]
    if kind not in CHECK_KINDS:
        err(f"{where}.kind", f"unknown check kind {_show(kind)} (known: {', '.join(CHECK_KINDS)})")
        return None
    try:
        check = _CHECK_ADAPTER.validate_python(spec)
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            loc = [str(x) for x in e["loc"]]
            if loc and loc[0] == kind:  # the discriminated-union tag
                loc = loc[1:]
            sub = "".join(f"[{x}]" if x.isdigit() else f".{x}" for x in loc)
            if e["type"] == "extra_forbidden":
                msg = f"unknown field for check kind {_show(kind)}"
            elif e["type"] == "missing":
                msg = "required field missing"
            elif e["type"] in ("value_error", "assertion_error"):
                msg = str(e["msg"]).removeprefix("Value error, ")
            else:
                msg = f"{e['msg']}, got {_show(e.get('input'))}"
            err(f"{where}{sub}", msg)
        return None
    value = getattr(check, "file", None)
    if isinstance(value, str) and (not value.strip() or escapes(value)):
        err(f"{where}.file", f"must be a glob inside the deliverables, got {_show(value)}")
        return None
    return check


def _find_cycles(edges: dict[int, list[int]]) -> list[list[int]]:
    """One representative closed path (first == last) per back edge found by an iterative
    depth-first search (no recursion limit on long chains)."""
    state: dict[int, int] = {}  # 1 = on the stack, 2 = done
    cycles: list[list[int]] = []
    for root in sorted(edges):
        if state.get(root):
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        path: list[int] = [root]
        state[root] = 1
        while stack:
            node, k = stack[-1]
            targets = edges.get(node, [])
            if k < len(targets):
                stack[-1] = (node, k + 1)
                nxt = targets[k]
                if not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    path.append(nxt)
                elif state[nxt] == 1:
                    cycles.append(path[path.index(nxt) :] + [nxt])
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return cycles
