"""Evidence lookup and prompt-injection detection on extracted deliverable text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"',
           "\u201e": '"', "\u2032": "'", "\u2033": '"', "\u00ab": '"', "\u00bb": '"'}
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_NOISE = re.compile(r"[*_`|#>\[\]]+")
_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\.\.\.+|…|\[\.\.\.\]")


def normalise(text: str) -> str:
    """Normalise text for quote lookup: NFKC, case-fold, typographic quotes and dashes made
    ASCII, Markdown/table punctuation (``* _ ` | # > [ ]``) dropped, whitespace collapsed."""
    t = unicodedata.normalize("NFKC", text)
    t = "".join(_QUOTES.get(ch, "-" if ch in _DASHES else ch) for ch in t)
    t = _NOISE.sub(" ", t)
    return _SPACE.sub(" ", t).strip().casefold()


def evidence_found(evidence: str, haystack_normalised: str) -> bool | None:
    """Whether an evidence quote occurs in the (already :func:`normalise`-d) text.

    The quote may elide with ``...``/``…``; every fragment must then occur. Surrounding
    quotation marks are ignored.

    Returns:
        True/False, or None when the quote is empty.
    """
    if not evidence or not evidence.strip():
        return None
    frags = [normalise(f).strip(" \"'") for f in _ELLIPSIS.split(evidence)]
    frags = [f for f in frags if f]
    if not frags:
        return None
    return all(f in haystack_normalised for f in frags)


_INJECTION_PATTERNS = [
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+)?(previous|prior|above|earlier|preceding|system|grading)\s+(instructions?|prompts?|rules|guidelines|criteria)",
    r"\b(note|message|instructions?)\s+(to|for)\s+(the\s+)?(ai\s+|llm\s+)?(grader|judge|evaluator|assessor|reviewer\s+model)s?\b",
    r"\b(dear|attention|hello|hi)\s+(ai\s+|llm\s+)?(grader|judge|evaluator|assessor)s?\b",
    r"(^|\n)\s*(grader|judge|evaluator|assessor)s?\s*[:,]",
    r"\byou\s+are\s+(now\s+)?(a|an|the)\s+(grader|judge|evaluator|assessor)\b",
    r"\b(mark|grade|score|rate|judge|evaluate)\s+(this|these|all|every|each)(\s+\w+){0,3}\s+as\s+(pass|passed|passing|correct|met|satisfied|complete)",
    r"\b(award|give|assign)(\s+\w+){0,2}\s+(full|maximum|max|all|perfect)\s+(marks|points|credit|score)",
    r"\b(all|every)\s+(criteria|criterion|rubrics?)\s+(are|is|have\s+been)\s+(met|satisfied|passed)\b",
    r"\"?(rubric_passed|criteria_results)\"?\s*:",
    r"\"verdict\"\s*:\s*\"pass",
    r"<\|im_start\|>|<\|system\|>|</?system>|\[/?INST\]",
]
_INJECTION = [re.compile(p, re.IGNORECASE) for p in _INJECTION_PATTERNS]


@dataclass(frozen=True)
class InjectionHit:
    """A deliverable passage that addresses the grader.

    Attributes:
        file: relative path of the deliverable.
        excerpt: the matched text with a little context.
    """

    file: str
    excerpt: str


def detect_injection(path: str, text: str) -> InjectionHit | None:
    """Flag text that addresses the grader ("ignore previous instructions", "note to the
    grader", "mark all criteria as passed", fake verdict JSON, chat-template tokens).

    A simple detector: it flags, it never changes a verdict. Returns the first hit or None.
    """
    for rx in _INJECTION:
        m = rx.search(text)
        if m:
            a, b = max(0, m.start() - 40), min(len(text), m.end() + 40)
            return InjectionHit(file=path, excerpt=_SPACE.sub(" ", text[a:b]).strip())
    return None
