"""docs/calibrate.md says the two ``personal_financial_advisors`` decoys' DOCX/XLSX files are
read and their texts differ: checked against the files' own XML, read here with zipfile."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from jobbench.extract import extract_dir

DECOYS = (
    Path(__file__).resolve().parents[2]
    / "datasets/sample/main/personal_financial_advisors/task1/solution/decoys"
)


def _docx_words(path: Path) -> list[str]:
    xml = zipfile.ZipFile(path).read("word/document.xml").decode("utf-8")
    runs = re.findall(r"<w:t(?:\s[^>]*)?>([^<]*)</w:t>", xml)
    return [w for w in " ".join(runs).split() if len(w) > 3]


def _xlsx_strings(path: Path) -> list[str]:
    """Text cells: the shared-string table and inline strings of every sheet."""
    z = zipfile.ZipFile(path)
    names = [n for n in z.namelist() if n == "xl/sharedStrings.xml" or n.startswith("xl/work")]
    xml = "".join(z.read(n).decode("utf-8") for n in names if n.endswith(".xml"))
    return [s for s in re.findall(r"<t(?:\s[^>]*)?>([^<]*)</t>", xml) if s.strip()]


def test_both_decoys_docx_and_xlsx_are_read_and_differ() -> None:
    texts = {}
    for name in ("custodian_value", "ignored_ips"):
        folder = DECOYS / name / "deliverables"
        text = extract_dir(folder, cache=False).text
        squashed = " ".join(text.split())
        for word in _docx_words(folder / "client_letter.docx"):
            assert word in squashed, (name, word)
        for s in _xlsx_strings(folder / "performance_2009.xlsx"):
            assert " ".join(s.split()) in squashed, (name, s)
        texts[name] = text
    assert texts["custodian_value"] != texts["ignored_ips"]
