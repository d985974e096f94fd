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
