"""Character budgets: head + tail truncation with an explicit marker, fair shares."""

from __future__ import annotations

from ._notes import NOTE_CLOSE, NOTE_START, RESERVED, balance_cut, note

HEAD_FRACTION = 0.75
"""Share of a budget given to the head of a truncated text (the rest goes to the tail)."""


def _plain_len(text: str) -> int:
    """Characters of ``text`` that reach the reader (note marks are not counted)."""
    return len(text) - len(RESERVED.findall(text))


def _lines(text: str) -> int:
    """Lines of ``text`` (a last line without a break counts)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def truncation_marker(
    omitted: int, total: int, what: str = "this file", *, lines: tuple[int, int] | None = None
) -> str:
    """The marker placed where text was cut (an extractor note, see :mod:`._notes`):
    ``[... truncated: 1,234 of 5,678 characters of this file omitted here (12 of 50 lines);
    head and tail kept ...]``; ``lines`` is ``(omitted, total)``."""
    counted = f" ({lines[0]:,} of {lines[1]:,} lines)" if lines else ""
    return (
        "\n"
        + note(
            f"[... truncated: {omitted:,} of {total:,} characters of {what} omitted "
            f"here{counted}; head and tail kept ...]"
        )
        + "\n"
    )


def head_tail(text: str, budget: int, *, what: str = "this file") -> tuple[str, bool]:
    """Cap ``text`` at ``budget`` characters, keeping its head and tail.

    The head gets 3/4 of the budget and the tail the rest, both cut at a line break when
    one is near (within 10 % of the share), around a :func:`truncation_marker` that states
    the characters and lines left out (note marks are not counted). The result is never
    longer than ``budget`` (for budgets of at least 300 characters).

    Returns:
        ``(text, truncated)``.
    """
    if len(text) <= budget:
        return text, False
    total = len(text)
    n_lines = _lines(text)
    room = max(0, budget - len(truncation_marker(total, total, what, lines=(n_lines, n_lines))))
    head_n = int(room * HEAD_FRACTION)
    tail_n = room - head_n
    head = text[:head_n]
    cut = head.rfind("\n")
    if cut >= head_n * 0.9:
        head = head[: cut + 1]
    tail = text[total - tail_n :] if tail_n else ""
    cut = tail.find("\n")
    if 0 <= cut <= tail_n * 0.1:
        tail = tail[cut + 1 :]
    head, tail = _keep_hidden_whole(text, head, tail)
    middle = text[len(head) : total - len(tail)]
    omitted_lines = middle.count("\n")
    marker = truncation_marker(
        _plain_len(middle), _plain_len(text), what, lines=(omitted_lines, n_lines)
    )
    head, tail = balance_cut(head, tail)
    return head + marker + tail, True


def _keep_hidden_whole(text: str, head: str, tail: str) -> tuple[str, str]:
    """Never cut a hidden-content note (:mod:`._hidden`) in two: a half without its
    ``[hidden…`` mark would read as ordinary text. A head ending inside one ends before it; a
    tail starting inside one starts after it."""
    start = head.rfind(NOTE_START)
    if (
        start >= 0
        and head.rfind(NOTE_CLOSE) < start
        and head.startswith("[hidden", start + len(NOTE_START))
    ):
        head = head[:start]
    begin = len(text) - len(tail)
    opened = text.rfind(NOTE_START, 0, begin)
    if (
        opened >= 0
        and text.rfind(NOTE_CLOSE, 0, begin) < opened
        and text.startswith("[hidden", opened + len(NOTE_START))
    ):
        close = text.find(NOTE_CLOSE, begin)
        tail = text[close + 1 :] if close >= 0 else ""
    return head, tail


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


def join_head_tail(
    head: str,
    tail: str,
    budget: int,
    *,
    size: int,
    encoding: str,
    bom: int = 0,
    total_lines: int | None = None,
) -> str:
    """Combine the decoded head and tail of a file too large to read whole.

    ``head`` and ``tail`` are cut to 3/4 and 1/4 of ``budget`` (at line breaks) around a
    marker stating what was left out: ``[... truncated: 61,873,992 of 62,000,000 bytes of
    this file omitted here (1,239,950 of 1,240,000 lines); only its head and tail were read
    ...]``. The result is at most ``budget`` characters.

    Args:
        head, tail: text decoded from the first and the last bytes of the file.
        budget: characters for the result.
        size: the file's size in bytes.
        encoding: the codec the text was decoded with (to count the bytes shown).
        bom: bytes of byte-order mark before ``head`` in the file.
        total_lines: lines of the whole file, when counted.
    """
    counts = (total_lines, total_lines) if total_lines else None
    probe = truncation_marker(size, size, "this file", lines=counts)
    room = max(0, budget - len(probe) - 40)
    head_n = int(room * HEAD_FRACTION)
    tail_n = room - head_n
    head = head[:head_n]
    cut = head.rfind("\n")
    if cut > 0:
        head = head[: cut + 1]
    tail = tail[-tail_n:] if tail_n else ""
    cut = tail.find("\n")
    if cut >= 0:
        tail = tail[cut + 1 :]
    shown = bom + _encoded_len(head, encoding) + _encoded_len(tail, encoding)
    lines = None
    if total_lines is not None:
        lines = (max(0, total_lines - head.count("\n") - _lines(tail)), total_lines)
    counted = f" ({lines[0]:,} of {lines[1]:,} lines)" if lines else ""
    said = (
        f"[... truncated: {max(0, size - shown):,} of {size:,} bytes of this file omitted "
        f"here{counted}; only its head and tail were read ...]"
    )
    marker = "\n" + note(said) + "\n"
    head, tail = balance_cut(head, tail)
    return head + marker + tail


def _encoded_len(text: str, encoding: str) -> int:
    codec = encoding.replace("-sig", "")
    try:
        return len(text.encode(codec, errors="replace"))
    except LookupError:
        return len(text.encode("utf-8", errors="replace"))
