"""Images: PNG/JPEG/GIF/WebP are attached as they are (BMP/TIFF re-encoded as PNG, large
ones downscaled); the text gives format and size. SVG is shown as text (its XML) and,
when LibreOffice is installed, also rasterised to PNG and attached."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from ._base import Context, ExtractionError, Source, decode_text
from ._notes import note as _note


def extract_image(source: Source, ctx: Context) -> str:
    """Extractor entry point for raster images."""
    from PIL import Image

    data = source.read_bytes()
    Image.MAX_IMAGE_PIXELS = ctx.limits.max_image_pixels
    try:
        with Image.open(io.BytesIO(data)) as im:
            fmt, (w, h), frames = im.format or "image", im.size, getattr(im, "n_frames", 1)
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for bad data
        if type(exc).__name__ == "DecompressionBombError":
            raise ExtractionError(f"image refused: {exc}") from exc
        raise ExtractionError(f"not a readable image ({type(exc).__name__}: {exc})") from exc
    name = ctx.add_image(None, data)
    desc = f"[image: {fmt} {w}×{h} px" + (f", {frames} frames" if frames > 1 else "")
    if not name:
        desc += "; not attached"
        if not any(d.level == "warning" for d in ctx.diagnostics):
            ctx.warn("image not attached (image budget reached)")
    return _note(desc + "]") + "\n"


def extract_svg(source: Source, ctx: Context, *, limit_resources: bool = False) -> str:
    """SVG: the XML as text, plus a PNG rendering by LibreOffice when available."""
    from . import _soffice

    text, _enc = decode_text(source.read_bytes(), ctx, what="SVG")
    missing = _soffice.soffice_unavailable_reason()
    note = f"[svg image; not rendered: {missing}]"
    if missing is None:
        try:
            with tempfile.TemporaryDirectory(prefix="jobbench-svg-") as tmp:
                src = source.copy_to(Path(tmp) / "image.svg")
                out_dir = Path(tmp) / "out"
                out_dir.mkdir()
                timeout = ctx.limits.soffice_timeout
                if ctx.remaining() is not None:
                    timeout = max(1.0, min(timeout, ctx.remaining() - 5.0))
                png = _soffice.convert(src, "png", out_dir, timeout=timeout, limit_resources=limit_resources)
                name = ctx.add_image(Path(ctx.rel).stem + ".png", png.read_bytes())
                note = f"[svg image rendered to PNG: {name}]" if name else "[svg image; rendering not attached]"
        except ExtractionError as exc:
            ctx.warn(f"SVG could not be rendered: {exc}")
            ctx.cacheable = False
            note = "[svg image; rendering failed]"
    return _note(note) + "\n" + text
