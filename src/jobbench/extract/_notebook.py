"""Jupyter notebooks (ipynb, nbformat 4; older versions are upgraded by nbformat): cell
sources, stream outputs, results, errors with tracebacks (ANSI colours removed) and image
outputs attached as images. Notebooks are never executed.

Facts used: the nbformat 4 schema (nbformat.readthedocs.io, "The Notebook file format"):
cells have ``cell_type``/``source``; code cells have ``execution_count`` and ``outputs`` of
``output_type`` ``stream`` (``name``, ``text``), ``execute_result``/``display_data``
(``data`` keyed by MIME type, binary types base64-encoded) and ``error`` (``ename``,
``evalue``, ``traceback``); markdown cells may carry ``attachments``.
"""

from __future__ import annotations

import base64
import binascii
import warnings

from ._base import Context, ExtractionError, Source, decode_text, strip_ansi
from ._notes import note
from ._text import html_to_text

IMAGE_MIME = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _join(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _image(ctx: Context, label: str, mime: str, payload, caption: str = "") -> str:
    try:
        data = base64.b64decode(_join(payload).replace("\n", ""), validate=False)
    except (binascii.Error, ValueError):
        return note(f"[{mime} output: undecodable]")
    ext = mime.split("/", 1)[1]
    name = ctx.add_image(f"{label}.{ext}", data, caption=caption)
    return note(f"[image output: {label}.{ext}" + ("" if name else "; not extracted") + "]")


def extract_ipynb(source: Source, ctx: Context) -> str:
    """Extractor entry point for ipynb (see module docstring)."""
    import nbformat

    raw, _enc = decode_text(source.read_bytes(), ctx, what="notebook")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(raw, as_version=4)
    except RecursionError as exc:
        raise ExtractionError("notebook JSON nested too deeply") from exc
    except Exception as exc:  # noqa: BLE001 - nbformat raises several types for odd files
        raise ExtractionError(f"not a valid notebook ({type(exc).__name__}: {exc})") from exc
    kernel = (
        (nb.get("metadata", {}).get("kernelspec") or {}).get("display_name")
        or (nb.get("metadata", {}).get("language_info") or {}).get("name")
        or "unknown kernel"
    )
    cells = nb.get("cells", [])
    out = [
        note(f"Notebook ({kernel}), {len(cells)} cell(s); outputs are as saved (never executed)")
    ]
    for i, cell in enumerate(cells, 1):
        ctx.check_deadline()
        ctype = cell.get("cell_type", "?")
        src = _join(cell.get("source", ""))
        if ctype == "code":
            count = cell.get("execution_count")
            block = [
                note(f"### Cell {i} (code, In [{count if count is not None else ' '}])\n```"),
                src,
                note("```"),
            ]
            for k, output in enumerate(cell.get("outputs", []), 1):
                otype = output.get("output_type")
                label = f"cell{i}-output{k}"
                if otype == "stream":
                    block.append(
                        note(f"[{output.get('name', 'stream')}]")
                        + "\n"
                        + strip_ansi(_join(output.get("text", ""))).rstrip()
                    )
                elif otype in ("execute_result", "display_data"):
                    data = output.get("data", {})
                    shown = False
                    for mime in IMAGE_MIME:
                        if mime in data:
                            block.append(_image(ctx, label, mime, data[mime], caption=src[-300:]))
                            shown = True
                            break
                    if "text/plain" in data:
                        prefix = f"[Out {count}]" if otype == "execute_result" else "[display]"
                        block.append(
                            note(prefix) + "\n" + strip_ansi(_join(data["text/plain"])).rstrip()
                        )
                    elif "text/markdown" in data:
                        block.append(
                            note("[display markdown]")
                            + "\n"
                            + _join(data["text/markdown"]).rstrip()
                        )
                    elif "text/html" in data:
                        block.append(
                            note("[display html]")
                            + "\n"
                            + html_to_text(_join(data["text/html"])).rstrip()
                        )
                    elif "image/svg+xml" in data and not shown:
                        block.append(
                            note("[svg output]") + "\n" + _join(data["image/svg+xml"])[:2000]
                        )
                    elif not shown and data:
                        block.append(note(f"[output: {', '.join(sorted(data))}]"))
                elif otype == "error":
                    tb = strip_ansi("\n".join(output.get("traceback", []) or [])).rstrip()
                    block.append(
                        note("[error] ")
                        + f"{output.get('ename', '')}: {output.get('evalue', '')}"
                        + (f"\n{tb}" if tb else "")
                    )
            out.append("\n".join(block))
        else:
            block = [note(f"### Cell {i} ({ctype})"), src]
            for att_name, bundle in (cell.get("attachments") or {}).items():
                for mime in IMAGE_MIME:
                    if mime in bundle:
                        block.append(
                            _image(ctx, f"cell{i}-{att_name.rsplit('.', 1)[0]}", mime, bundle[mime])
                        )
                        break
            out.append("\n".join(block))
    return "\n\n".join(out) + "\n"
