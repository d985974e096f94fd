"""Character budgets: head + tail truncation with an explicit marker, fair shares."""

from __future__ import annotations

from ._notes import balance_cut, note

HEAD_FRACTION = 0.75
"""Share of a budget given to the head of a truncated text (the rest goes to the tail)."""


def truncation_marker(omitted: int, total: int, what: str = "this file") -> str:
    """The marker placed where text was cut (an extractor note, see :mod:`._notes`)."""
    return "\n" + note(f"[... truncated: {omitted:,} of {total:,} characters of {what} omitted here; head and tail "
                       "kept ...]") + "\n"


def head_tail(text: str, budget: int, *, what: str = "this file") -> tuple[str, bool]:
    """Cap ``text`` at ``budget`` characters, keeping its head and tail.

    The head gets 3/4 of the budget and the tail the rest, both cut at a line break when
    one is near (within 10 % of the share), around a :func:`truncation_marker`. The result
    is never longer than ``budget`` (for budgets of at least 200 characters).

    Returns:
        ``(text, truncated)``.
    """
    if len(text) <= budget:
        return text, False
    total = len(text)
    room = max(0, budget - len(truncation_marker(total, total, what)))
    head_n = int(room * HEAD_FRACTION)
    tail_n = room - head_n
    head = text[:head_n]
    cut = head.rfind("\n")
    if cut >= head_n * 0.9:
        head = head[: cut + 1]
    tail = text[total - tail_n:] if tail_n else ""
    cut = tail.find("\n")
    if 0 <= cut <= tail_n * 0.1:
        tail = tail[cut + 1:]
    omitted = total - len(head) - len(tail)
    head, tail = balance_cut(head, tail)
    return head + truncation_marker(omitted, total, what) + tail, True


def fair_shares(lengths: list[int], budget: int) -> list[int]:
    """Split ``budget`` among parts of the given lengths: short parts get all they need,
    the rest is divided equally among the long ones (water filling).

    Returns:
        One share per part, in input order; ``sum(shares) <= budget``.
    """
    shares = [0] * len(lengths)
    remaining = budget
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for k, i in enumerate(order):
        fair = remaining // (len(order) - k)
        shares[i] = min(lengths[i], fair)
        remaining -= shares[i]
    return shares


def join_head_tail(head: str, tail: str, budget: int, *, total_desc: str) -> str:
    """Combine the decoded head and tail of a file too large to read whole.

    ``head`` and ``tail`` are cut to 3/4 and 1/4 of ``budget`` (at line breaks) around a
    marker saying how large the file is; the result is at most ``budget`` characters.
    """
    marker = "\n" + note(f"[... truncated: {total_desc}; only its head and tail are shown ...]") + "\n"
    room = max(0, budget - len(marker))
    head_n = int(room * HEAD_FRACTION)
    tail_n = room - head_n
    head = head[:head_n]
    cut = head.rfind("\n")
    if cut > 0:
        head = head[: cut + 1]
    tail = tail[-tail_n:] if tail_n else ""
    cut = tail.find("\n")
    if cut >= 0:
        tail = tail[cut + 1:]
    head, tail = balance_cut(head, tail)
    return head + marker + tail
