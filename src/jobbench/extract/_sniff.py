"""Format detection by content (magic bytes, zip member names) and by extension.

Strong magic (PDF, zip, SQLite, OLE2, PNG, JPEG, GIF, WebP, TIFF) wins over the
extension; a disagreement is reported as a warning. Otherwise the extension decides, and
text-looking content without a known extension is read as text.

Facts used: PDF starts with ``%PDF-`` (ISO 32000-1 §7.5.2, tolerated within the first
1024 bytes); SQLite ``SQLite format 3\\0`` (sqlite.org/fileformat.html §1.3); OLE2 compound
file ``D0 CF 11 E0 A1 B1 1A E1`` (MS-CFB §2.2); PNG ``89 50 4E 47 0D 0A 1A 0A``; JPEG ``FF D8
FF``; GIF ``GIF87a``/``GIF89a``; WebP ``RIFF....WEBP``; TIFF ``II*\\0``/``MM\\0*``; BMP ``BM``;
OOXML parts ``xl/workbook.xml``, ``word/document.xml``, ``ppt/presentation.xml`` (ECMA-376
Part 2 and the format specifications); ODF packages start with a ``mimetype`` member.
"""

from __future__ import annotations

EXTENSIONS: dict[str, str] = {}


def _register(kind: str, *exts: str) -> None:
    for ext in exts:
        EXTENSIONS[ext] = kind


_register("xlsx", ".xlsx", ".xlsm", ".xltx", ".xltm")
_register("xls", ".xls")
_register("csv", ".csv")
_register("tsv", ".tsv", ".tab")
_register("json", ".json", ".geojson", ".har")
_register("jsonl", ".jsonl", ".ndjson")
_register("ipynb", ".ipynb")
_register("html", ".html", ".htm", ".xhtml")
_register("svg", ".svg")
_register("pdf", ".pdf")
_register("docx", ".docx", ".docm", ".dotx")
_register("pptx", ".pptx", ".pptm", ".potx")
_register("sqlite", ".sqlite", ".sqlite3", ".db", ".db3", ".sqlitedb")
_register("image", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
_register("zip", ".zip")
_register("legacy", ".doc", ".ppt", ".odt", ".ods", ".odp", ".rtf")
_register(
    "text",
    ".txt",
    ".text",
    ".md",
    ".markdown",
    ".rst",
    ".log",
    ".tex",
    ".bib",
    ".xml",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".conf",
    ".py",
    ".r",
    ".rmd",
    ".qmd",
    ".sql",
    ".sh",
    ".bash",
    ".js",
    ".ts",
    ".java",
    ".c",
    ".h",
    ".cpp",
    ".hpp",
    ".cs",
    ".go",
    ".rs",
    ".rb",
    ".jl",
    ".m",
    ".sas",
    ".do",
    ".ps1",
    ".bat",
    ".css",
    ".scss",
    ".php",
    ".pl",
    ".kt",
    ".swift",
    ".scala",
    ".lua",
    ".vb",
    ".bas",
    ".f90",
    ".mat.txt",
    ".srt",
    ".vtt",
    ".eml",
    ".ics",
    ".vcf",
    ".properties",
    ".env",
    ".gitignore",
    ".dockerfile",
    ".makefile",
    ".mk",
    ".cmake",
    ".gradle",
    ".proto",
    ".graphql",
    ".csl",
    ".ris",
    ".nfo",
    ".readme",
)

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def magic_kind(head: bytes) -> str | None:
    """The format named by strong magic bytes at the start of the file, else ``None``."""
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"SQLite format 3\x00"):
        return "sqlite"
    if head.startswith(OLE_MAGIC):
        return "ole"
    if head.startswith(
        (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*")
    ):
        return "image"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image"
    return None


def zip_kind(names: list[str]) -> str:
    """``xlsx``/``docx``/``pptx``/``xlsb``/``odf``/``zip`` from a zip's member names."""
    s = set(names)
    if "xl/workbook.xml" in s:
        return "xlsx"
    if "xl/workbook.bin" in s:
        return "xlsb"
    if "word/document.xml" in s:
        return "docx"
    if "ppt/presentation.xml" in s:
        return "pptx"
    if names and names[0] == "mimetype" and ("content.xml" in s):
        return "odf"
    return "zip"


def extension_kind(suffix: str) -> str | None:
    """The format registered for a lower-case extension (``.csv`` → ``csv``)."""
    return EXTENSIONS.get(suffix)


def describe_kind(kind: str) -> str:
    """Readable name used in mismatch warnings."""
    return {"ole": "a legacy Office (OLE2) file", "image": "an image", "zip": "a zip archive"}.get(
        kind, kind.upper()
    )
