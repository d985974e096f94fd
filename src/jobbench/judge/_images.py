"""Which images a judge call attaches: only images extraction decoded, deduplicated by
content, and, when more qualify than the cap allows, the most relevant to the rubric.

Relevance, in order: the image's file (or the document holding it) is named in the rubric
text; then the number of the rubric's words found in the image's name and caption (alt
text, title, the notebook cell that drew it); then deliverable order. The attached images
keep deliverable order. Every image left out is named with the reason, in the prompt and in
the grade record.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..extract import ExtractedImage, Extraction
from ..tasks import Rubric

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    """
a an and are as at be by for from has have in is it its of on or that the this to was were will with
does do should must each all any both not no into than then there their they which who whom whose
what when where why how per via include includes including shows show shown deliverable deliverables
file files report agent output""".split()
)
"""Words too common to tell images apart."""


def words(text: str) -> set[str]:
    """Lower-case alphanumeric words of ``text`` (three characters or more, no stop words;
    ``age_histogram.png`` gives ``age``, ``histogram``, ``png``)."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS}


NAME_MAX = 200
"""Characters of an image's name shown in a judge prompt (the rest is cut, marked ``…``)."""


def shown_name(name: str) -> str:
    """An image's name as a judge prompt shows it: a JSON string literal (quotes, line
    breaks, line separators and every non-ASCII character escaped) of at most
    :data:`NAME_MAX` characters. The name comes from the deliverable (a file path and the
    label inside a document), so it stays on one quoted line and cannot pose as the
    prompt's own text."""
    cut = name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + "…"
    return json.dumps(cut, ensure_ascii=True)


@dataclass
class ImageChoice:
    """The images of one judge call.

    Attributes:
        attached: the images sent, in deliverable order.
        left_out: ``"<name>: <reason>"`` for every other decoded image of the files in scope.
        available: how many distinct images the files in scope hold.
    """

    attached: list[ExtractedImage] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    available: int = 0

    def data_urls(self) -> list[tuple[str, str, str]]:
        """``(name, data URL, sha256)`` of each attached image."""
        return [
            (
                img.name,
                f"data:{img.media_type};base64,{base64.b64encode(img.data).decode('ascii')}",
                img.sha256,
            )
            for img in self.attached
        ]


def _named(img: ExtractedImage, text: str) -> bool:
    low = text.lower()
    for candidate in {img.source, PurePosixPath(img.source).name, img.name.rsplit("#", 1)[-1]}:
        stem = PurePosixPath(candidate).stem
        for needle in (candidate, stem):
            if len(needle) >= 3 and re.search(
                rf"(?<![a-z0-9]){re.escape(needle.lower())}(?![a-z0-9])", low
            ):
                return True
    return False


def choose_images(files: list[Extraction], rubrics: list[Rubric], cap: int) -> ImageChoice:
    """Choose at most ``cap`` images of ``files`` for a call about ``rubrics``.

    Only :attr:`Extraction.images` are candidates: bytes that extraction decoded as an image
    (an undecodable file under an image name has none, see :mod:`jobbench.extract`).
    """
    out = ImageChoice()
    seen: dict[str, str] = {}
    unique: list[ExtractedImage] = []
    for f in files:
        for img in f.images:
            if img.sha256 in seen:
                out.left_out.append(
                    f"{shown_name(img.name)}: same content as {shown_name(seen[img.sha256])}"
                )
                continue
            seen[img.sha256] = img.name
            unique.append(img)
    out.available = len(unique)
    text = " ".join(r.question + " " + " ".join(c.text for c in r.criteria) for r in rubrics)
    vocabulary = words(text)

    def rank(item: tuple[int, ExtractedImage]) -> tuple[int, int, int]:
        order, img = item
        overlap = len(vocabulary & words(img.name + " " + img.caption))
        return (0 if _named(img, text) else 1, -overlap, order)

    ranked = sorted(enumerate(unique), key=rank)
    keep = {order for order, _img in ranked[: max(0, cap)]}
    for order, img in enumerate(unique):
        if order in keep:
            out.attached.append(img)
        else:
            out.left_out.append(
                f"{shown_name(img.name)}: over the limit of {cap} image(s) per call (less "
                "relevant to this rubric)"
            )
    return out
