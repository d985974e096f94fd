"""Images: PNG/JPEG/GIF/WebP are attached as they are (BMP/TIFF re-encoded as PNG, large
ones downscaled) once Pillow has decoded them; the text gives format and size. Bytes that
do not decode as an image are an extraction error (the file is reported unreadable and
nothing is attached).

SVG is shown as text (its XML) and rasterised to PNG by resvg (the ``resvg-py`` wheel,
the resvg renderer in Rust: deterministic, no system library, no network). Before
rendering, every ``href`` that is not a fragment (``#id``) or a ``data:`` URL is removed, so
an SVG cannot make the renderer read a file of the machine (resvg loads ``<image
href="/abs/path.png">`` from disk otherwise); the XML is parsed without entities, DTDs or
network access.
"""

from __future__ import annotations

import io
import re
from pathlib import PurePosixPath
from typing import Any

from ._base import Context, ExtractionError, Source, decode_text
from ._notes import note as _note

SVG_SNIFF = re.compile(
    rb"^(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?<svg[\s>]",
    re.DOTALL | re.IGNORECASE,
)
"""An SVG document: optional BOM, XML declaration, comments and doctype, then ``<svg``."""

_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px|pt|pc|mm|cm|in)?\s*$")
_UNIT_PX = {
    None: 1.0,
    "px": 1.0,
    "pt": 4 / 3,
    "pc": 16.0,
    "mm": 96 / 25.4,
    "cm": 96 / 2.54,
    "in": 96.0,
}


def is_svg(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) starts an SVG document."""
    return bool(SVG_SNIFF.match(head[:4096]))


def extract_image(source: Source, ctx: Context) -> str:
    """Extractor entry point for raster images.

    Raises:
        ExtractionError: the bytes do not decode as an image, or a decompression bomb.
    """
    from PIL import Image

    data = source.read_bytes()
    Image.MAX_IMAGE_PIXELS = ctx.limits.max_image_pixels
    try:
        with Image.open(io.BytesIO(data)) as im:
            fmt, (w, h), frames = im.format or "image", im.size, getattr(im, "n_frames", 1)
            im.load()
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for bad data
        if type(exc).__name__ == "DecompressionBombError":
            raise ExtractionError(f"image refused: {exc}") from exc
        raise ExtractionError(
            f"unreadable: not a decodable image ({type(exc).__name__}: {exc})"
        ) from exc
    name = ctx.add_image(None, data)
    desc = f"[image: {fmt} {w}×{h} px" + (f", {frames} frames" if frames > 1 else "")
    if not name:
        desc += "; not extracted"
    return _note(desc + "]") + "\n"


def _px(value: str | None) -> float | None:
    m = _LENGTH.match(value or "")
    if not m:
        return None
    return float(m.group(1)) * _UNIT_PX[m.group(2)]


def svg_size(root) -> tuple[float, float] | None:  # noqa: ANN001 - an lxml element
    """The intrinsic size in px of an ``<svg>`` element: ``width``/``height`` (absolute
    units), else the ``viewBox`` size; None when neither gives positive numbers."""
    w, h = _px(root.get("width")), _px(root.get("height"))
    box = (root.get("viewBox") or "").replace(",", " ").split()
    vb = None
    if len(box) == 4:
        try:
            vb = (float(box[2]), float(box[3]))
        except ValueError:
            vb = None
    if vb and (vb[0] <= 0 or vb[1] <= 0):
        vb = None
    if w and h:
        return w, h
    if vb:
        if w:
            return w, w * vb[1] / vb[0]
        if h:
            return h * vb[0] / vb[1], h
        return vb
    return None


def sanitise_svg(data: bytes) -> tuple[str, tuple[float, float] | None, int]:
    """The SVG serialised without a doctype and without external references.

    Returns:
        ``(svg text, intrinsic size or None, number of references removed)``.

    Raises:
        ExtractionError: not well-formed XML, or the root is not ``<svg>``.
    """
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(f"not well-formed SVG XML ({exc})") from exc
    if root is None or etree.QName(root).localname != "svg":
        raise ExtractionError("the XML root is not <svg>")
    removed = 0
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in list(el.attrib):
            if etree.QName(attr).localname != "href":
                continue
            target = (el.get(attr) or "").strip()
            if not (target.startswith("#") or target.lower().startswith("data:")):
                del el.attrib[attr]
                removed += 1
    return etree.tostring(root, encoding="unicode"), svg_size(root), removed


def render_svg(data: bytes, ctx: Context) -> bytes:
    """PNG bytes of an SVG rendered by resvg, fitted within ``limits.max_image_side``.

    Raises:
        ExtractionError: unparseable SVG or a rendering failure.
    """
    import resvg_py

    text, size, removed = sanitise_svg(data)
    if removed:
        ctx.warn(f"SVG: {removed} external reference(s) (href to a file or URL) not loaded")
    side = ctx.limits.max_image_side
    kw: dict[str, Any] = {}
    if size is None or max(size) > side:
        w, h = size or (side, side)
        if w >= h:
            kw["width"] = side
        else:
            kw["height"] = side
    try:
        return bytes(resvg_py.svg_to_bytes(svg_string=text, skip_system_fonts=False, **kw))
    except (ValueError, OSError) as exc:
        raise ExtractionError(f"SVG could not be rendered: {exc}") from exc


def extract_svg(source: Source, ctx: Context) -> str:
    """SVG: the XML as text, plus its PNG rendering (attached like any image)."""
    raw = source.read_bytes()
    text, _enc = decode_text(raw, ctx, what="SVG")
    try:
        png = render_svg(raw, ctx)
    except ExtractionError as exc:
        ctx.warn(str(exc))
        return _note("[svg image; not rendered]") + "\n" + text
    name = ctx.add_image(PurePosixPath(ctx.rel).stem + ".png", png)
    shown = _note(
        f"[svg image rendered to PNG: {name}]" if name else "[svg image; rendering not extracted]"
    )
    return shown + "\n" + text
