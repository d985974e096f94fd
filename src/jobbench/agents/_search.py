"""Offline keyword search over a task's ``files_required_to_search/`` (the builtin agent's
stand-in for web search).

Documents are the files of that directory, read with :func:`jobbench.extract.extract`.
A query is split into lower-case word tokens; a document's score is the sum over query
tokens of ``(1 + log(tf)) * idf`` with ``idf = log(1 + N / df)`` (a standard tf-idf
weighting, Manning et al., *Introduction to Information Retrieval*, 2008, §6.2), plus a
bonus of one idf for each query token in the file name. Results show a result id, the file
name (never the directory path) and a snippet around the best matching passage.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "with".split()
)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` without common English stop words."""
    return [t for t in TOKEN_RE.findall(text.lower()) if t not in STOP]


@dataclass
class SearchHit:
    """One search result: ``id`` (``R1``…), ``name`` (relative file name), ``score``,
    ``snippet``."""

    id: str
    name: str
    score: float
    snippet: str


class SearchIndex:
    """A tiny in-memory index of the files under ``root``.

    Args:
        root: the task's ``files_required_to_search`` directory, or None (empty index).
        files: relative POSIX paths under ``root`` to index.
        max_chars: characters of extracted text kept per file.
    """

    def __init__(self, root: Path | None, files: list[str], *, max_chars: int = 200_000) -> None:
        self.root = root
        self.names: list[str] = []
        self.texts: list[str] = []
        self.tf: list[dict[str, int]] = []
        self._loaded = False
        self._files = list(files) if root is not None else []
        self._max_chars = max_chars

    def _load(self) -> None:
        if self._loaded:
            return
        from ..extract import extract

        for rel in self._files:
            ex = extract(self.root / rel, rel=rel, max_chars=self._max_chars)  # type: ignore[operator]
            text = ex.text or ""
            counts: dict[str, int] = {}
            for t in tokens(text):
                counts[t] = counts.get(t, 0) + 1
            self.names.append(rel)
            self.texts.append(text)
            self.tf.append(counts)
        self._loaded = True

    def search(self, query: str, k: int = 5, snippet_chars: int = 400) -> list[SearchHit]:
        """Best ``k`` documents for ``query`` (score > 0 only), best first; ties by name."""
        self._load()
        q = list(dict.fromkeys(tokens(query)))
        if not q or not self.names:
            return []
        n = len(self.names)
        idf = {t: math.log(1 + n / (1 + sum(1 for tf in self.tf if t in tf))) for t in q}
        hits = []
        for i, name in enumerate(self.names):
            tf = self.tf[i]
            score = sum((1 + math.log(tf[t])) * idf[t] for t in q if tf.get(t))
            name_toks = set(tokens(name))
            score += sum(idf[t] for t in q if t in name_toks)
            if score > 0:
                hits.append((score, name, i))
        hits.sort(key=lambda h: (-h[0], h[1]))
        return [
            SearchHit(
                id=f"R{self.names.index(name) + 1}",
                name=name,
                score=round(score, 3),
                snippet=self._snippet(self.texts[i], q, snippet_chars),
            )
            for score, name, i in hits[:k]
        ]

    def resolve(self, ref: str) -> str | None:
        """The file name for a result id (``R2``) or an exact file name; None if unknown."""
        self._load()
        ref = ref.strip()
        m = re.fullmatch(r"[Rr](\d+)", ref)
        if m and 1 <= int(m.group(1)) <= len(self.names):
            return self.names[int(m.group(1)) - 1]
        return ref if ref in self.names else None

    def source(self, ref: str) -> Path | None:
        """The dataset file named by ``ref`` (a result id or file name); None if unknown.
        Copying it into a workspace is the caller's job (the builtin agent writes it with
        :func:`jobbench.sandbox.safefs.write_bytes`, never following a symbolic link)."""
        name = self.resolve(ref)
        if name is None or self.root is None:
            return None
        return self.root / name

    @staticmethod
    def _snippet(text: str, q: list[str], width: int) -> str:
        low = text.lower()
        best = -1
        for t in q:
            m = re.search(r"(?<![a-z0-9])" + re.escape(t) + r"(?![a-z0-9])", low)
            if m and (best < 0 or m.start() < best):
                best = m.start()
        start = max(0, best - width // 3) if best >= 0 else 0
        s = " ".join(text[start : start + width].split())
        return ("…" if start > 0 else "") + s + ("…" if start + width < len(text) else "")
