"""Judge errors and downgrades of a set of grades, for the console summaries of ``jobbench
grade`` and ``jobbench run``: grouped by cause, each with the server's first message and
what to change."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..records import GradeRecord

HINTS = {
    "context_length": (
        "the prompt does not fit the judge model's context: use --mode rubric (one rubric per "
        "call), --no-vision (no images), or give the rubric a `files` list so that only the "
        "files it names are sent"
    ),
    "response_format": (
        "the endpoint rejects every structured-output style: set response_format = none"
    ),
    "auth": "check the judge API key (JUDGE_API_KEY / OPENAI_API_KEY)",
    "not_found": "check --api-base (it must end where /chat/completions is) and --judge-model",
    "rejected": "the endpoint rejects the request as sent; the message says what to change",
    "timeout": "raise --timeout or lower --concurrency",
    "connection": "the endpoint cannot be reached: check --api-base and that the server runs",
    "bad_reply": "the judge's replies held no valid verdict: try a stronger judge model",
}


def _server_message(rec: GradeRecord, unit_id: str | None) -> str:
    for u in rec.units:
        if unit_id is not None and u.unit != unit_id:
            continue
        for rp in reversed(u.replies):
            if rp.get("server_message"):
                return str(rp["server_message"])
        if u.error:
            return u.error
    return ""


def judge_error_groups(records: Iterable[GradeRecord]) -> list[dict[str, Any]]:
    """Judge-error verdicts grouped by cause, most frequent first.

    Returns:
        ``[{"cause", "verdicts", "trials", "message", "hint"}]``: the number of
        ``judge_error`` criterion verdicts and of trials with one, the server's first message
        (else the verdict's reasoning) and :data:`HINTS`' advice ('' when none).
    """
    groups: dict[str, dict[str, Any]] = {}
    for rec in records:
        seen: set[str] = set()
        for g in rec.rubrics:
            for c in g.criteria:
                if c.verdict != "judge_error":
                    continue
                cause = c.cause or ("check" if c.source == "check" else "bad_reply")
                grp = groups.setdefault(
                    cause,
                    {"cause": cause, "verdicts": 0, "trials": 0, "message": "", "hint": ""},
                )
                grp["verdicts"] += 1
                if cause not in seen:
                    seen.add(cause)
                    grp["trials"] += 1
                if not grp["message"]:
                    grp["message"] = _server_message(rec, c.unit) or c.reasoning
                grp["hint"] = HINTS.get(cause, "")
    return sorted(groups.values(), key=lambda x: (-x["verdicts"], x["cause"]))


def downgrade_counts(records: Iterable[GradeRecord]) -> dict[str, int]:
    """Downgrade → number of criterion verdicts obtained under it."""
    out: dict[str, int] = {}
    for rec in records:
        for g in rec.rubrics:
            for c in g.criteria:
                for d in c.downgrades:
                    out[d] = out.get(d, 0) + 1
    return out


def judge_error_lines(records: Iterable[GradeRecord]) -> list[str]:
    """Plain console lines: one per judge-error cause (count, server's first message, hint)
    and one per downgrade; empty when there is neither."""
    records = list(records)
    lines = []
    for grp in judge_error_groups(records):
        msg = " ".join(str(grp["message"]).split())[:300]
        line = (
            f"judge_error ({grp['cause']}): {grp['verdicts']} verdict(s) in {grp['trials']} "
            f"trial(s); first message: {msg or '-'}"
        )
        if grp["hint"]:
            line += f" -> {grp['hint']}"
        lines.append(line)
    for d, n in sorted(downgrade_counts(records).items()):
        lines.append(f"judge downgrade: {d} ({n} verdict(s); recorded in each)")
    return lines
