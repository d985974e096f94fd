"""Zip archives: the member list, and (up to ``limits.archive_depth`` levels and
``limits.archive_members`` members) each member extracted like a file of its own.

Members are written to a private temporary directory under generated names (``m3.csv``),
so member paths such as ``../../etc/passwd`` are only ever displayed (and flagged ``UNSAFE
NAME`` in the listing, with a warning); symlink members
(Unix mode in the external attributes, APPNOTE 4.4.15) and encrypted members (general
purpose flag bit 0) are listed but not extracted.

The member listing (names and sizes) and the ``--- member: … ---`` headers are the
extractor's summary, so they are notes: a member named ``Total 5353.txt`` does not state
5353 in the archive's content view. Each member's extracted text is content.
"""

from __future__ import annotations

import stat
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from ._base import Context, Source, safe_display
from ._budget import fair_shares, head_tail
from ._notes import note
from ._safety import human_bytes

MAX_LISTED = 500


def unsafe_member_name(name: str) -> str | None:
    """Why a member name would escape the folder it is extracted into, or None:
    ``absolute path`` (``/etc/x``, ``\\x``, a drive letter ``C:``) or ``'..' component``
    (``../../x``, ``a/../../x``); backslashes count as separators (APPNOTE 4.4.17 allows only
    ``/``, but extractors on Windows honour both)."""
    path = name.replace("\\", "/")
    if path.startswith("/") or (len(path) >= 2 and path[1] == ":" and path[0].isalpha()):
        return "absolute path"
    if ".." in path.split("/"):
        return "'..' component"
    return None


def extract_zip(
    source: Source, ctx: Context, *, dispatch: Callable[[Source, Context], tuple[str, str]]
) -> str:
    """Extractor entry point for zip (``dispatch`` extracts one member)."""
    with source.open() as f, zipfile.ZipFile(f) as zf:
        infos = zf.infolist()
        total = sum(i.file_size for i in infos)
        lines = [note(f"Zip archive: {len(infos):,} entries, {human_bytes(total)} uncompressed")]
        candidates = []
        unsafe: list[str] = []
        for info in infos:
            name = safe_display(info.filename)
            mode = (info.external_attr >> 16) & 0xFFFF
            flags = []
            danger = unsafe_member_name(info.filename)
            if danger:
                flags.append(f"UNSAFE NAME: {danger}")
                unsafe.append(name)
            if info.is_dir():
                flags.append("directory")
            elif mode and stat.S_ISLNK(mode):
                flags.append("symlink, not followed")
            elif info.flag_bits & 0x1:
                flags.append("encrypted, not read")
            else:
                candidates.append(info)
            if len(lines) <= MAX_LISTED:
                # the whole listing line (member name included) is the extractor's summary
                lines.append(
                    note(
                        f"  {name}  ({info.file_size:,} bytes"
                        + (", " + ", ".join(flags) if flags else "")
                        + ")"
                    )
                )
        if len(infos) > MAX_LISTED:
            lines.append(note(f"  … {len(infos) - MAX_LISTED:,} more entries"))
        if unsafe:
            ctx.warn(
                f"{len(unsafe)} member name(s) would write outside the extraction folder "
                f"(absolute path or '..'): {', '.join(unsafe[:5])}"
                + (" …" if len(unsafe) > 5 else "")
                + "; read under generated names, never written there"
            )
        listing = "\n".join(lines)
        if ctx.depth >= ctx.limits.archive_depth or not candidates:
            if candidates:
                lines.append(note("[members not extracted: nested archive depth limit]"))
            return "\n".join(lines) + "\n"
        chosen = candidates[: ctx.limits.archive_members]
        if len(candidates) > len(chosen):
            ctx.warn(
                f"only the first {len(chosen)} of {len(candidates)} archive members were extracted"
            )
        blocks: list[tuple[str, str, str]] = []
        with tempfile.TemporaryDirectory(prefix="jobbench-zip-") as tmp:
            for k, info in enumerate(chosen):
                ctx.check_deadline()
                member = safe_display(info.filename)
                suffix = Path(member).suffix.lower()
                suffix = suffix if suffix.replace(".", "").isalnum() and len(suffix) <= 10 else ""
                path = Path(tmp) / f"m{k}{suffix}"
                with zf.open(info) as src, open(path, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                child = ctx.child(f"{ctx.rel}!{member}")
                kind, text = dispatch(Source(path, name=member), child)
                for img in child.images:
                    if len(ctx.images) < ctx.limits.max_images:
                        ctx.images.append(img)
                    else:
                        ctx.images_dropped += 1
                for d in child.diagnostics:
                    (
                        ctx.error
                        if d.level == "error"
                        else ctx.warn
                        if d.level == "warning"
                        else ctx.info
                    )(f"{member}: {d.message}")
                ctx.cacheable &= child.cacheable
                ctx.hidden.extend((f"{member}: {why}", text) for why, text in child.hidden)
                blocks.append((member, note(f"--- member: {member} ({kind}) ---"), text))
                path.unlink(missing_ok=True)
    budget = max(1000, ctx.limits.max_chars - len(listing) - 10)
    shares = fair_shares([len(h) + len(t) + 2 for _m, h, t in blocks], budget)
    out = [listing]
    for (member, head, text), share in zip(blocks, shares):
        cut, was_cut = head_tail(text, max(300, share - len(head) - 2), what=f"member {member}")
        ctx.truncated |= was_cut
        out.append(head + "\n" + cut)
    return "\n\n".join(out) + "\n"
