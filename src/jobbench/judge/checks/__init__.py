"""Programmatic checks: decide a criterion without an LLM (the ``checks`` extension).

One small module per kind (``_number``, ``_regex``, ``_file_exists``, ``_xlsx_cell``,
``_csv_value``, ``_sqlite_query``, ``_json_path``); the specifications live in
:mod:`jobbench.tasks` (``tasks/_checks.py``).

Public API: :func:`evaluate_check`, :class:`CheckResult`, :func:`find_numbers`,
:func:`parse_number`, :class:`NumberToken`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ...extract import FolderExtraction
from ...tasks import Check
from . import _csv_value, _file_exists, _json_path, _number, _regex, _sqlite_query, _xlsx_cell
from ._common import CheckResult, expect_matches, list_deliverables
from ._numbers import NumberToken, find_numbers, parse_number

EVALUATORS: dict[str, Callable[..., CheckResult]] = {
    "number": _number.evaluate,
    "regex": _regex.evaluate,
    "file_exists": _file_exists.evaluate,
    "xlsx_cell": _xlsx_cell.evaluate,
    "csv_value": _csv_value.evaluate,
    "sqlite_query": _sqlite_query.evaluate,
    "json_path": _json_path.evaluate,
}
"""Evaluator function per check kind."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(Check)


def evaluate_check(
    check: Any,
    deliverables_dir: Path,
    extraction: FolderExtraction | None = None,
) -> CheckResult:
    """Evaluate one programmatic check against a deliverable folder.

    Args:
        check: a check model (:data:`jobbench.tasks.Check`) or its JSON dict.
        deliverables_dir: the folder of collected deliverables (symlinks are ignored).
        extraction: the folder's extraction, if already computed (``number`` and ``regex``
            read its per-file text; otherwise files are extracted on demand).

    Returns:
        A :class:`CheckResult`. Problems with the deliverable (missing file, wrong value,
        unreadable file) give ``passed=False``; a check that cannot be evaluated (invalid
        spec, unexpected exception) gives ``passed=False, error=True``, which the judge
        records as ``judge_error``. Never raises for deliverable content.
    """
    if isinstance(check, dict):
        try:
            check = _ADAPTER.validate_python(check)
        except ValidationError as exc:
            return CheckResult(
                passed=False, error=True, detail=f"invalid check spec: {exc.errors()[0]['msg']}"
            )
    kind = getattr(check, "kind", None)
    fn = EVALUATORS.get(kind)  # type: ignore[arg-type]
    if fn is None:
        return CheckResult(passed=False, error=True, detail=f"unknown check kind {kind!r}")
    try:
        return fn(check, Path(deliverables_dir), extraction)
    except Exception as exc:  # a bug or an environment problem, never the agent's fault
        return CheckResult(
            passed=False, error=True, detail=f"{kind}: check crashed ({type(exc).__name__}: {exc})"
        )


__all__ = [
    "CheckResult",
    "EVALUATORS",
    "NumberToken",
    "evaluate_check",
    "expect_matches",
    "find_numbers",
    "list_deliverables",
    "parse_number",
]
