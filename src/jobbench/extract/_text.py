"""Plain-text family: txt/md/source/yaml/xml, CSV/TSV, JSON, JSONL and HTML.

Files larger than the character budget are never read whole: their head and tail are
read by seeking, and CSV/JSONL row counts come from counting line breaks in 1 MiB chunks.
"""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

from ._base import Context, Source, decode_text
from ._budget import join_head_tail
from ._notes import NOTE_START, note


def _is_big(source: Source, ctx: Context) -> bool:
    # UTF-8 text takes at most 4 bytes per character; anything larger than 4× the budget
    # cannot fit in it and is read as head + tail.
    return source.size > 4 * ctx.limits.max_chars + 65_536


READ_RESERVE = 4000
"""Characters of the per-file budget kept free, when a large file is read by seeking, for
what the extractor adds (summary line, diagnostics), so the text is not cut a second time."""


def read_text(source: Source, ctx: Context, *, what: str = "text") -> tuple[str, str, bool]:
    """Decode the file's text within the budget.

    Returns:
        ``(text, encoding, partial)``; ``partial`` is True when only the head and tail of a
        large file were read (the text then carries a truncation marker stating the bytes
        and lines left out, ``ctx.truncated`` is set and ``ctx.line_count`` holds the
        file's line count).
    """
    if not _is_big(source, ctx):
        text, enc = decode_text(source.read_bytes(), ctx, what=what)
        return text, enc, False
    budget = max(1000, ctx.limits.max_chars - min(READ_RESERVE, ctx.limits.max_chars // 10))
    head_b = source.read_bytes(2 * budget)
    tail_b = source.read_tail(budget)
    head, enc = decode_text(head_b, ctx, what=what)
    tail = tail_b.decode(enc.replace("-sig", ""), errors="replace")
    boms = (b"\xef\xbb\xbf", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"\xff\xfe", b"\xfe\xff")
    bom = 0
    if enc.startswith(("utf-8-sig", "utf-16", "utf-32")):
        bom = next((len(b) for b in boms if head_b.startswith(b)), 0)
    ctx.truncated = True
    ctx.line_count = count_lines(source)
    text = join_head_tail(
        head, tail, budget, size=source.size, encoding=enc, bom=bom, total_lines=ctx.line_count
    )
    return text, enc, True


def count_lines(source: Source) -> int:
    """Number of lines (line breaks, plus one for a final line without a break)."""
    n = 0
    last = b"\n"
    with source.open() as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)


def extract_text(source: Source, ctx: Context) -> str:
    """Any text file, shown as it is (decoded; budgeted)."""
    text, _enc, _partial = read_text(source, ctx)
    return text


_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", ":": "colon"}


def sniff_delimiter(sample: str, default: str) -> str:
    """The CSV delimiter of ``sample`` among ``, ; TAB |`` (``default`` if unclear)."""
    try:
        return csv.Sniffer().sniff(sample[:65_536], delimiters=",;\t|").delimiter
    except csv.Error:
        return default


def extract_csv(source: Source, ctx: Context, *, default_delimiter: str = ",") -> str:
    """CSV/TSV: a one-line summary (rows × columns, delimiter, encoding, header) then the
    text as written (a reviewer reads the file itself, not a reformatting)."""
    text, enc, partial = read_text(source, ctx, what="CSV")
    body = text.split("\n" + NOTE_START + "[... truncated:", 1)[0] if partial else text
    delim = sniff_delimiter(body, default_delimiter)
    try:
        rows = list(csv.reader(io.StringIO(body), delimiter=delim))
    except csv.Error as exc:
        ctx.warn(f"CSV parse problem: {exc}")
        rows = []
    header = rows[0] if rows else []
    if partial:
        n_rows = ctx.line_count if ctx.line_count is not None else count_lines(source)
        count = f"{n_rows:,} lines"
    else:
        n_rows = len(rows)
        count = f"{n_rows:,} rows"
        widths = {len(r) for r in rows if r}
        if len(widths) > 1:
            ctx.warn(f"rows have differing numbers of fields ({min(widths)}–{max(widths)})")
    n_cols = max((len(r) for r in rows[:1000]), default=0)
    head = ", ".join(h.strip() for h in header[:50]) + (" …" if len(header) > 50 else "")
    summary = (
        f"[table: {count} × {n_cols} columns; delimiter {_DELIMITER_NAMES.get(delim, repr(delim))}; "
        f"encoding {enc}; first row: {head}]"
    )
    return note(summary) + "\n" + text


def extract_json(source: Source, ctx: Context) -> str:
    """JSON: pretty-printed when the file is minified and parses; otherwise as written.
    Invalid or too deeply nested JSON is shown raw with a warning."""
    text, _enc, partial = read_text(source, ctx, what="JSON")
    if partial:
        ctx.warn("JSON too large to parse within the budget; shown as raw head and tail")
        return text
    try:
        obj = json.loads(text)
    except RecursionError:
        ctx.warn("JSON nested too deeply to parse; shown as raw text")
        return text
    except json.JSONDecodeError as exc:
        ctx.warn(
            f"invalid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}; shown as raw text"
        )
        return text
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) > 120:
        try:
            return json.dumps(obj, indent=2, ensure_ascii=False)
        except (RecursionError, ValueError):
            return text
    return text


def extract_jsonl(source: Source, ctx: Context) -> str:
    """JSON Lines: a summary (records, invalid lines) then the lines as written."""
    text, _enc, partial = read_text(source, ctx, what="JSONL")
    if partial:
        lines = ctx.line_count if ctx.line_count is not None else count_lines(source)
        return note(f"[jsonl: {lines:,} lines]") + "\n" + text
    good = bad = 0
    first_bad = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            json.loads(line)
            good += 1
        except (json.JSONDecodeError, RecursionError):
            bad += 1
            first_bad = first_bad or n
    if bad:
        ctx.warn(f"{bad} line(s) are not valid JSON (first: line {first_bad})")
    return (
        note(f"[jsonl: {good:,} records" + (f", {bad:,} invalid lines" if bad else "") + "]")
        + "\n"
        + text
    )


class _HTMLText(HTMLParser):
    """HTML → readable text: scripts/styles dropped, blocks on their own lines, headings
    as ``#``, list items as ``-``, table rows as ``a | b``, links as ``text (href)``."""

    BLOCK = {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "nav",
        "aside",
        "br",
        "hr",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "pre",
        "figure",
        "figcaption",
        "form",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "caption",
        "title",
        "address",
    }
    SKIP = {"script", "style", "noscript", "template", "head_meta"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.cells: list[str] | None = None
        self.cell: list[str] | None = None
        self.href: str | None = None

    def _emit(self, s: str) -> None:
        if self.cell is not None:
            self.cell.append(s)
        else:
            self.out.append(s)

    def handle_starttag(self, tag, attrs):  # noqa: D401 - HTMLParser hook
        if tag in self.SKIP:
            self.skip += 1
        elif tag == "pre":
            self.pre += 1
            self._emit("\n")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._emit("\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self._emit("\n- ")
        elif tag == "tr":
            self.cells = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "a":
            self.href = dict(attrs).get("href")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            self._emit(note("[image: ") + alt + note("]") if alt else note("[image]"))
        elif tag in self.BLOCK:
            self._emit("\n")

    def handle_endtag(self, tag):  # noqa: D401 - HTMLParser hook
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._emit("\n")
        elif tag in ("td", "th") and self.cell is not None:
            if self.cells is not None:
                self.cells.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.cells is not None:
            self.out.append("\n| " + " | ".join(self.cells) + " |")
            self.cells = None
        elif tag == "a":
            self.href = None
        elif tag in self.BLOCK or tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._emit("\n")

    def handle_data(self, data):  # noqa: D401 - HTMLParser hook
        if self.skip:
            return
        if not self.pre:
            collapsed = " ".join(data.split())
            if not collapsed:
                data = " " if data else ""
            else:
                data = (
                    (" " if data[0].isspace() else "")
                    + collapsed
                    + (" " if data[-1].isspace() else "")
                )
        if self.href and data.strip() and not self.href.startswith("#"):
            data = f"{data} ({self.href})"
        self._emit(data)

    def text(self) -> str:
        lines = [ln.rstrip() for ln in "".join(self.out).split("\n")]
        out: list[str] = []
        for ln in lines:
            ln = ln.strip() if not self.pre else ln
            if ln or (out and out[-1]):
                out.append(ln)
        return "\n".join(out).strip() + "\n"


def html_to_text(html: str) -> str:
    """Readable text of an HTML document or fragment (see :class:`_HTMLText`)."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return parser.text()


def extract_html(source: Source, ctx: Context) -> str:
    """HTML: the rendered text (tables as ``a | b`` rows); scripts and styles dropped."""
    text, _enc, partial = read_text(source, ctx, what="HTML")
    if partial:
        ctx.warn("HTML too large to render within the budget; shown as raw head and tail")
        return text
    return html_to_text(text)
