"""The one Markdown escaper: :func:`md_text`, for every untrusted string (dataset-derived
names, judge reasoning, findings) written into a Markdown file (``leaderboard.md``, the gate
and calibration reports, the selection tables).
"""

from __future__ import annotations

_MD_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
        "|": "\\|",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "\r": " ",
        "\n": " ",
    }
)


def md_text(text: object) -> str:
    """``text`` made inert in Markdown: the one escape for every dataset-derived string in
    ``leaderboard.md`` (task ids, occupation names, run names and paths, labels, messages).

    ``<``, ``>`` and ``&`` become HTML entities (no raw HTML reaches a renderer); the
    backslash, the backtick, ``[``, ``]`` and ``|`` get a backslash (no code span, link or table
    cell can be
    opened); line breaks become spaces. ``*`` and ``_`` are left (at most emphasis).
    """
    return str(text).translate(_MD_ESCAPES)


def md_code(text: object) -> str:
    """``text`` as one inline Markdown code span that shows it exactly as written.

    Backslash escapes are not interpreted inside a code span (CommonMark 0.31, "Code spans"),
    so :func:`md_text` would show its backslashes there; instead the span is fenced with one
    backtick more than the longest backtick run in ``text`` (padded with a space when ``text``
    starts or ends with a backtick), and line breaks become spaces. ``|`` is escaped because a
    GFM table cell ends at an unescaped ``|`` even inside a code span (GFM spec 0.29, example
    200). Returns e.g. ``md_code("a[1]")`` → ```` `a[1]` ````.
    """
    s = str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    longest = run = 0
    for ch in s:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"
