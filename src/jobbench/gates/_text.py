"""Text helpers for the gates: word n-grams, file names mentioned in prose, numbers.

Everything here is pure (no file system) so each piece can be tested on strings.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath

FILE_EXTENSIONS: tuple[str, ...] = (
    "csv",
    "tsv",
    "xlsx",
    "xlsm",
    "xls",
    "ods",
    "docx",
    "doc",
    "odt",
    "rtf",
    "pdf",
    "db",
    "sqlite",
    "sqlite3",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "webp",
    "tif",
    "tiff",
    "bmp",
    "pptx",
    "ppt",
    "odp",
    "md",
    "markdown",
    "json",
    "jsonl",
    "ndjson",
    "txt",
    "ipynb",
    "py",
    "sql",
    "html",
    "htm",
    "xml",
    "yaml",
    "yml",
    "zip",
    "parquet",
    "log",
    "eml",
    "msg",
    "geojson",
    "kml",
    "dta",
    "sav",
    "tex",
    "bib",
    "ics",
    "vcf",
)
"""File extensions recognised when looking for file names in prose (lower case)."""

_EXT = "|".join(sorted(FILE_EXTENSIONS, key=len, reverse=True))
# A bare name: word chars, dots, dashes; optional folders; ends in a known extension. The
# look-behind rejects names inside URLs and paths that start mid-token.
_BARE_NAME = re.compile(
    rf"(?<![\w/.:@*-])((?:[\w-][\w.-]*/)*[\w-][\w.-]*\.(?:{_EXT}))(?![\w/])", re.IGNORECASE
)
# A quoted name may contain spaces.
_QUOTED_NAME = re.compile(
    rf"[\"“`']([^\"“”`'\n/]{{0,80}}(?:/[^\"“”`'\n/]{{1,80}})*\.(?:{_EXT}))[\"”`']", re.IGNORECASE
)

_WORD = re.compile(r"\w+", re.UNICODE)


def normalize(text: str) -> str:
    """NFKC, lower case, whitespace folded to single spaces, curly quotes made straight."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"\s+", " ", text).strip().lower()


def words(text: str) -> list[str]:
    """Lower-case word tokens (``\\w+`` after NFKC); ``"$1,234.50"`` → ``["1", "234", "50"]``."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    """The set of word n-grams of ``tokens``; empty when there are fewer than ``n`` tokens."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def containment(part: set[tuple[str, ...]], whole: set[tuple[str, ...]]) -> float:
    """|part ∩ whole| / |part| in [0, 1]; 0.0 when ``part`` is empty."""
    if not part:
        return 0.0
    return len(part & whole) / len(part)


@dataclass(frozen=True)
class Mention:
    """A file name found in prose.

    Attributes:
        name: the name as written (``data/Budget 2024.xlsx``).
        start, end: character span in the text.
        quoted: True when it was found between quotes.
    """

    name: str
    start: int
    end: int
    quoted: bool


def file_mentions(text: str, known: list[str] | None = None) -> list[Mention]:
    """File names mentioned in ``text``.

    Known names (e.g. the workspace's files, matched case-insensitively by relative path or
    base name) are found first, so names with spaces are recognised whole; then quoted
    names; then bare ``name.ext`` tokens with an extension from :data:`FILE_EXTENSIONS`.
    Names inside URLs, and globs containing ``*``, are ignored.

    Returns:
        Mentions sorted by position, without overlaps.
    """
    taken: list[tuple[int, int]] = []
    out: list[Mention] = []

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    low = text.lower()
    candidates: set[str] = set()
    for k in known or []:
        candidates.add(k)
        candidates.add(PurePosixPath(k).name)
    for k in sorted(candidates, key=len, reverse=True):
        if not k:
            continue
        for m in re.finditer(re.escape(k.lower()), low):
            s, e = m.span()
            before = low[s - 1] if s > 0 else " "
            after = low[e] if e < len(low) else " "
            if (before.isalnum() or before in "_/-.") or (after.isalnum() or after in "_"):
                continue
            if free(s, e):
                taken.append((s, e))
                out.append(Mention(text[s:e], s, e, quoted=False))
    for m in _QUOTED_NAME.finditer(text):
        s, e = m.span(1)
        name = m.group(1).strip()
        if name and "*" not in name and free(s, e):
            taken.append((s, e))
            out.append(Mention(name, s, e, quoted=True))
    for m in _BARE_NAME.finditer(text):
        s, e = m.span(1)
        if free(s, e):
            taken.append((s, e))
            out.append(Mention(m.group(1), s, e, quoted=False))
    return sorted(out, key=lambda x: x.start)


def same_file(a: str, b: str) -> bool:
    """True when two names denote the same file: equal relative paths or, when either has
    no folder, equal base names (case-insensitive)."""
    a_l, b_l = a.strip().lower().lstrip("./"), b.strip().lower().lstrip("./")
    if a_l == b_l:
        return True
    if "/" not in a_l or "/" not in b_l:
        return PurePosixPath(a_l).name == PurePosixPath(b_l).name
    return False


def glob_matches(pattern: str, name: str) -> bool:
    """Whether a deliverable glob (rubric ``files`` / check ``file``) matches ``name``:
    case-insensitive fnmatch on the path, or on the base name when the pattern has no
    folder."""
    p, n = pattern.strip().lower().lstrip("./"), name.strip().lower().lstrip("./")
    if fnmatch.fnmatchcase(n, p):
        return True
    if "/" not in p:
        return fnmatch.fnmatchcase(PurePosixPath(n).name, p)
    # "**/x.csv" style: also try without leading "**/"
    if p.startswith("**/"):
        return glob_matches(p[3:], n)
    return False


def is_glob(pattern: str) -> bool:
    """True when ``pattern`` holds a wildcard (``*``, ``?``, ``[``)."""
    return any(c in pattern for c in "*?[")


# --- numbers -----------------------------------------------------------------------------

_NUM = re.compile(
    r"(?P<cur>[$€£¥]\s?)?(?P<paren>\()?(?P<sign>[-−+])?(?P<cur2>[$€£¥])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<close>\))?"
    r"(?P<pct>\s?%)?"
)
_SCALE = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
}


@dataclass(frozen=True)
class NumberToken:
    """A number found in prose.

    Attributes:
        text: the matched text (``$1,234.50``).
        value: the value as written, scale words applied (``$1.2 million`` → 1200000.0);
            parentheses make it negative.
        decimals: digits after the decimal point as written (for rounding tolerance).
        scale: the multiplier applied by a following scale word (1.0 when none).
        currency: a currency symbol was attached.
        percent: a ``%`` sign or the word percent followed.
        start, end: span of the numeric part in the text.
        next_word: the next alphabetic word after it (lower case) or ''.
        prev_word: the previous word before it (lower case) or ''.
        is_year: a bare integer 1900–2100 with no currency, percent or separators.
    """

    text: str
    value: float
    decimals: int
    scale: float
    currency: bool
    percent: bool
    start: int
    end: int
    next_word: str
    prev_word: str
    is_year: bool


def numbers(text: str) -> list[NumberToken]:
    """Numbers standing alone in ``text`` (not part of identifiers like ``Q3``, ``A1``,
    ``task2``, dates like ``2024-03-01`` or ``3/1/2024``, times, or version strings)."""
    out: list[NumberToken] = []
    for m in _NUM.finditer(text):
        s, e = m.span()
        num_s, num_e = m.span("num")
        before = text[s - 1] if s > 0 else " "
        after = text[e] if e < len(text) else " "
        if before.isalnum() or before in "_/:@#.":
            continue
        if (
            after.isalnum()
            or after in "_/:"
            or (after in "-." and e + 1 < len(text) and text[e + 1].isdigit())
        ):
            continue
        if m.group("close") and not m.group("paren"):
            e -= 1  # a closing parenthesis that belongs to the prose, not to "(1,234)"
        raw = m.group("num").replace(",", "")
        try:
            value = float(raw)
        except ValueError:  # pragma: no cover - regex guarantees a float
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        negative = bool(m.group("paren") and m.group("close")) or (m.group("sign") in ("-", "−"))
        rest = text[e:]
        wm = re.match(r"[\s)]*(?:-)?([A-Za-z][A-Za-z.]*)", rest)
        next_word = wm.group(1).lower().rstrip(".") if wm else ""
        if after == "-" and e + 1 < len(text) and text[e + 1].isalpha():
            next_word = re.match(r"-([A-Za-z]+)", text[e:]).group(1).lower()  # type: ignore[union-attr]
        pm = re.search(r"([A-Za-z§#]+)[\s.]*$", text[:s])
        prev_word = pm.group(1).lower() if pm else ""
        percent = bool(m.group("pct")) or next_word in ("percent", "per", "pct", "percentage")
        scale = _SCALE.get(next_word, 1.0) if not percent else 1.0
        if next_word in ("m", "b", "k") and not (m.group("cur") or m.group("cur2")):
            # a lone "m" may be metres; only trust single-letter scales after a currency sign
            scale = 1.0
        currency = bool(m.group("cur") or m.group("cur2"))
        value = -value if negative else value
        is_year = (
            not currency
            and not percent
            and "," not in m.group("num")
            and "." not in raw
            and 1900 <= abs(value) <= 2100
            and not negative
        )
        out.append(
            NumberToken(
                text=text[s:e].strip(),
                value=value * scale,
                decimals=decimals,
                scale=scale,
                currency=currency,
                percent=percent,
                start=num_s,
                end=num_e,
                next_word=next_word,
                prev_word=prev_word,
                is_year=is_year,
            )
        )
    return out
