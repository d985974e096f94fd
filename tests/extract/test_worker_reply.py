"""The worker's reply (issue 20): model JSON sent once as raw parts, and no workbook values
at all when the caller does not cache them."""

from __future__ import annotations

import json

import openpyxl

from jobbench.extract import ExtractLimits, WorkbookValues, extract
from jobbench.extract._pool import POOL
from jobbench.extract._worker import decode_reply, encode_reply


def test_a_reply_round_trips_with_its_raw_parts() -> None:
    ext = json.dumps({"text": 'Zürich \u2028 "quoted"'}, ensure_ascii=False)
    body = encode_reply(
        {
            "ok": True,
            "cacheable": True,
            "extraction": ext,
            "workbook": None,
            "_raw": ("extraction", "workbook"),
        }
    )
    assert body.count(b'\\"quoted') == 1  # the part itself, never escaped again
    assert decode_reply(body) == {"ok": True, "cacheable": True, "extraction": ext}
    assert decode_reply(encode_reply({"ok": False, "error": "x"})) == {"ok": False, "error": "x"}


def _book(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["A2"], ws["A3"] = 2, 3, "=A1*A2"
    wb.save(path)
    return path


def _request(path, workbook: bool) -> dict:
    return {
        "op": "extract",
        "path": str(path),
        "rel": "b.xlsx",
        "limits": ExtractLimits(xlsx_engine="cached").model_dump(mode="json"),
        "timeout": 60,
        "sha256": "",
        "size": path.stat().st_size,
        "workbook": workbook,
    }


def test_the_worker_sends_workbook_values_only_when_asked(tmp_path) -> None:
    path = _book(tmp_path / "b.xlsx")
    without = POOL.call(_request(path, False), memory_mb=2048, timeout=60)
    assert without["ok"] and without.get("workbook") is None
    asked = POOL.call(_request(path, True), memory_mb=2048, timeout=60)
    wv = WorkbookValues.model_validate_json(asked["workbook"])
    assert wv.values["Sheet"] == {"A1": 2, "A2": 3, "A3": None}  # no cached value in the file
    assert json.loads(without["extraction"])["text"] == json.loads(asked["extraction"])["text"]


def test_extraction_with_the_cache_off_or_on_reads_the_same(tmp_path) -> None:
    path = _book(tmp_path / "b.xlsx")
    off = extract(path, cache=False, engine="cached")
    on = extract(path, cache=tmp_path / "cache", engine="cached")
    assert off.text == on.text and "A3=" in off.text
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2  # extraction and values
