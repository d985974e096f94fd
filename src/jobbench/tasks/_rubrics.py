"""Parsing and validation of ``RUBRICS.json`` (public format plus extensions).

The public format (DESIGN §2): ``{"rubrics": [{"rubric": str, "weight": number >= 0,
"criterion": [str, ...]}]}`` with ``evaluation_rubrics`` accepted as a fallback key. A
rubric's identity is its 0-based position; unknown keys are ignored. Extensions (DESIGN §3):
``id``, ``requires``, ``checks``, ``files``, ``vision``.

Every problem is collected (never stop at the first) and reported with a JSON path such as
``rubrics[3].weight``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._checks import CHECK_KINDS, Check
from ._model import Criterion, Rubric
from ._problems import Problem

_CHECK_ADAPTER: TypeAdapter[Any] = TypeAdapter(Check)


def _show(value: Any) -> str:
    """Render a JSON value the way it appears in the file (``true``, ``"x"``, ``NaN``)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bad_glob(pattern: str) -> bool:
    parts = pattern.replace("\\", "/").split("/")
    return pattern.startswith(("/", "\\")) or ".." in parts or (len(pattern) > 1 and pattern[1] == ":")


def parse_rubrics(data: Any, file: str) -> tuple[list[Rubric], str, list[Problem]]:
    """Turn a parsed ``RUBRICS.json`` document into rubrics.

    Args:
        data: the decoded JSON document.
        file: the file's display path, used in every :class:`Problem`.

    Returns:
        ``(rubrics, key, problems)``: the rubrics that parsed (possibly partial when there
        are problems), the top-level key used (``rubrics`` or ``evaluation_rubrics``), and
        every problem found. The rubrics are trustworthy only when ``problems`` holds no
        errors.
    """
    problems: list[Problem] = []

    def err(where: str, message: str) -> None:
        problems.append(Problem(file=file, where=where, message=message))

    if not isinstance(data, dict):
        err("$", f"must be a JSON object, got {_show(data)}")
        return [], "rubrics", problems
    key = "rubrics" if "rubrics" in data else "evaluation_rubrics"
    items = data.get(key)
    if key not in data:
        err("$", "missing key 'rubrics' (or fallback 'evaluation_rubrics')")
        return [], key, problems
    if not isinstance(items, list) or not items:
        err(key, f"must be a non-empty list, got {_show(items)}")
        return [], key, problems

    raw: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            err(where, f"must be an object, got {_show(item)}")
            raw.append({})
            continue
        raw.append(item)

    ids: dict[str, int] = {}
    for i, item in enumerate(raw):
        if "id" in item:
            rid = item["id"]
            if not isinstance(rid, str) or not rid.strip():
                err(f"{key}[{i}].id", f"must be a non-empty string, got {_show(rid)}")
            elif rid in ids:
                err(f"{key}[{i}].id", f"duplicate id {_show(rid)} (also rubrics[{ids[rid]}])")
            else:
                ids[rid] = i

    rubrics: list[Rubric] = []
    total = 0.0
    weights_ok = True
    edges: dict[int, list[int]] = {}
    for i, item in enumerate(raw):
        where = f"{key}[{i}]"
        if not item:
            weights_ok = False
            continue
        question = item.get("rubric")
        if not isinstance(question, str) or not question.strip():
            err(f"{where}.rubric", f"must be a non-empty string, got {_show(question)}")
            question = ""
        weight = item.get("weight")
        if not _is_number(weight) or not math.isfinite(weight) or weight < 0:
            err(f"{where}.weight", f"must be a finite number ≥ 0, got {_show(weight)}")
            weights_ok = False
            weight = 0.0
        total += float(weight)
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
            if not isinstance(given, list):
                err(f"{where}.checks", f"must be a list aligned with criterion, got {_show(given)}")
            else:
                if len(given) != len(texts):
                    err(
                        f"{where}.checks",
                        f"has {len(given)} entries but criterion has {len(texts)}; "
                        "they must align (use null where a criterion has no check)",
                    )
                for j, spec in enumerate(given[: len(texts)]):
                    checks[j] = _parse_check(spec, f"{where}.checks[{j}]", err)

        requires: list[int] = []
        if "requires" in item:
            req = item["requires"]
            if not isinstance(req, list):
                err(f"{where}.requires", f"must be a list of rubric ids or indexes, got {_show(req)}")
            else:
                for k, target in enumerate(req):
                    idx = _resolve_target(target, ids, len(raw))
                    if idx is None:
                        err(
                            f"{where}.requires[{k}]",
                            f"unknown rubric {_show(target)} (give an existing id or a 0-based "
                            f"index below {len(raw)})",
                        )
                    elif idx == i:
                        err(f"{where}.requires[{k}]", "a rubric cannot require itself")
                    elif idx not in requires:
                        requires.append(idx)
        edges[i] = requires

        files = item.get("files")
        if files is not None:
            if not isinstance(files, list) or not all(isinstance(f, str) and f.strip() for f in files):
                err(f"{where}.files", f"must be a list of non-empty glob strings, got {_show(files)}")
                files = None
            else:
                for k, pattern in enumerate(files):
                    if _bad_glob(pattern):
                        err(f"{where}.files[{k}]", f"must stay inside the deliverables, got {_show(pattern)}")
        vision = item.get("vision")
        if vision is not None and not isinstance(vision, bool):
            err(f"{where}.vision", f"must be true or false, got {_show(vision)}")
            vision = None

        criteria = [
            Criterion(index=j, text=t if isinstance(t, str) else "", check=checks[j])
            for j, t in enumerate(texts)
        ]
        rid = item.get("id")
        rubrics.append(
            Rubric(
                index=i,
                id=rid if isinstance(rid, str) and rid.strip() else str(i),
                question=question,
                weight=float(weight),
                criteria=criteria,
                requires=requires,
                files=files,
                vision=vision,
            )
        )

    if weights_ok and total <= 0:
        err(key, "weights sum to 0; at least one rubric needs a positive weight")
    for cycle in _find_cycles(edges):
        path = " → ".join(f"{key}[{n}]" for n in cycle)
        err(f"{key}[{cycle[0]}].requires", f"requires chain forms a cycle: {path}")
    return rubrics, key, problems


def _resolve_target(target: Any, ids: dict[str, int], n: int) -> int | None:
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target if 0 <= target < n else None
    if isinstance(target, str):
        return ids.get(target)
    return None


def _parse_check(spec: Any, where: str, err: Any) -> Any:
    if spec is None:
        return None
    if not isinstance(spec, dict):
        err(where, f"must be a check object or null, got {_show(spec)}")
        return None
    kind = spec.get("kind")
    if kind not in CHECK_KINDS:
        err(f"{where}.kind", f"unknown check kind {_show(kind)} (known: {', '.join(CHECK_KINDS)})")
        return None
    try:
        check = _CHECK_ADAPTER.validate_python(spec)
    except ValidationError as exc:
        for e in exc.errors():
            loc = [str(x) for x in e["loc"] if str(x) != kind]
            sub = "".join(f"[{x}]" if x.isdigit() else f".{x}" for x in loc)
            msg = e["msg"]
            if e["type"] == "extra_forbidden":
                msg = "unknown field for this check kind"
            err(f"{where}{sub}", msg)
        return None
    for field in ("file",):
        value = getattr(check, field, None)
        if isinstance(value, str) and _bad_glob(value):
            err(f"{where}.{field}", f"must stay inside the deliverables, got {_show(value)}")
            return None
    return check


def _find_cycles(edges: dict[int, list[int]]) -> list[list[int]]:
    """Return one representative path per cycle found (each closed: first == last)."""
    state: dict[int, int] = {}
    cycles: list[list[int]] = []
    stack: list[int] = []

    def visit(node: int) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt, 0) == 0:
                visit(nxt)
            elif state.get(nxt) == 1:
                start = stack.index(nxt)
                cycles.append(stack[start:] + [nxt])
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if state.get(node, 0) == 0:
            visit(node)
    return cycles
