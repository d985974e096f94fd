"""Folder extraction: order, headers, budgets, image budget, file limit, cache, isolation."""

from __future__ import annotations

import io
import re
from pathlib import Path

import openpyxl
import pytest
from PIL import Image

from jobbench.extract import ExtractCache, ExtractLimits, extract, extract_dir, workbook_values


def _tree(root: Path) -> Path:
    (root / "b_dir" / "inner").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "b_dir" / "z.md").write_text("zulu\n")
    (root / "b_dir" / "inner" / "c.csv").write_text("x,y\n1,2\n")
    (root / "B.txt").write_text("upper\n")
    return root


def test_deterministic_order_and_headers(tmp_path):
    root = _tree(tmp_path / "d")
    fe = extract_dir(root)
    assert [f.path for f in fe.files] == ["B.txt", "a.txt", "b_dir/inner/c.csv", "b_dir/z.md"]
    assert fe.text == (
        "=== FILE: B.txt ===\nupper\n\n"
        "=== FILE: a.txt ===\nalpha\n\n"
        "=== FILE: b_dir/inner/c.csv ===\n[table: 2 rows × 2 columns; delimiter comma; encoding utf-8; first row: x, y]\nx,y\n1,2\n\n"
        "=== FILE: b_dir/z.md ===\nzulu\n"
    )
    assert fe.truncated is False
    import hashlib

    assert fe.file("a.txt").sha256 == hashlib.sha256(b"alpha\n").hexdigest()
    assert fe.file("a.txt").size == 6
    with pytest.raises(KeyError):
        fe.file("missing.txt")
    assert extract_dir(root).text == fe.text  # same again (now from the cache)


def test_folder_budget_keeps_head_and_tail_and_names_cut_files(tmp_path):
    for i in range(1, 6):
        (tmp_path / f"part{i}.txt").write_text("".join(f"part {i} line {k}\n" for k in range(200)))
    fe = extract_dir(tmp_path, max_total_chars=6_000)
    assert fe.truncated and len(fe.text) <= 6_000
    assert fe.text.startswith("=== FILE: part1.txt ===\npart 1 line 0\n")
    assert fe.text.endswith("part 5 line 199\n")
    marker = next(line for line in fe.text.splitlines() if line.startswith("[... truncated:"))
    assert (
        "of the deliverable folder omitted here (folder budget 6,000); files cut or omitted:"
        in marker
    )
    assert "part3.txt" in marker
    # per-file texts are untouched by the folder budget
    assert len(fe.file("part3.txt").text) > 3_000


def test_per_file_cap(tmp_path):
    p = tmp_path / "long.txt"
    p.write_text("".join(f"row {i}\n" for i in range(5000)))
    ext = extract(p, max_chars=2_000)
    assert ext.truncated and len(ext.text) <= 2_000
    assert ext.text.startswith("row 0\n") and ext.text.endswith("row 4999\n")
    # the marker states the real omitted size: characters and lines of this file
    m = re.search(
        r"\[\.\.\. truncated: ([\d,]+) of ([\d,]+) characters of this file omitted here "
        r"\(([\d,]+) of 5,000 lines\); head and tail kept \.\.\.\]",
        ext.text,
    )
    assert m, ext.text
    kept = ext.content().replace("\n\n\n", "\n", 1)  # head + tail: the marker's line is gone
    total = len(p.read_text())
    assert int(m.group(2).replace(",", "")) == total
    assert int(m.group(1).replace(",", "")) == total - len(kept)
    assert int(m.group(3).replace(",", "")) == 5000 - kept.count("\n")


def _png(color) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def test_folder_image_budget(tmp_path):
    for i, color in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
        (tmp_path / f"img{i}.png").write_bytes(_png(color))
    fe = extract_dir(tmp_path, max_images=2)
    assert [i.name for i in fe.images] == ["img0.png", "img1.png"]
    last = fe.file("img2.png")
    assert last.images == []
    assert last.warnings[-1].message == "1 image(s) not extracted (folder image budget of 2)"


def test_file_limit(tmp_path):
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(name)
    fe = extract_dir(tmp_path, limits=ExtractLimits(max_files=2))
    assert [f.kind for f in fe.files] == ["text", "text", "skipped"]
    assert fe.file("c.txt").text == "[not extracted: folder file limit of 2 reached]\n"


def test_cache_hits_and_invalidation(tmp_path):
    cache_dir = tmp_path / "cache"
    p = tmp_path / "d" / "notes.txt"
    p.parent.mkdir()
    p.write_text("version one\n")
    first = extract(p, cache=cache_dir)
    second = extract(p, cache=cache_dir)
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "version one\n"
    assert len(list(cache_dir.rglob("*.json"))) == 1
    p.write_text("version two\n")
    third = extract(p, cache=cache_dir)
    assert third.cached is False and third.text == "version two\n"
    # another display path is another entry; a disabled cache writes nothing
    assert extract(p, rel="other/notes.txt", cache=cache_dir).cached is False
    before = sorted(cache_dir.rglob("*.json"))
    assert extract(p, cache=False).cached is False
    assert sorted(cache_dir.rglob("*.json")) == before


def test_default_cache_location_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("JOBBENCH_CACHE_DIR", str(tmp_path / "jb"))
    p = tmp_path / "x.txt"
    p.write_text("cached text\n")
    extract(p)
    assert len(list((tmp_path / "jb" / "extract").rglob("*.json"))) == 1
    assert extract(p).cached is True
    monkeypatch.setenv("JOBBENCH_NO_CACHE", "1")
    assert extract(p).cached is False


def test_workbook_values_shared_with_extraction_cache(tmp_path, monkeypatch):
    wb = openpyxl.Workbook()
    wb.active["A1"] = 2
    wb.active["A2"] = "=A1*21"
    p = tmp_path / "book.xlsx"
    wb.save(p)
    cache = ExtractCache(tmp_path / "c")
    extract(p, cache=cache, engine="formulas")
    # the extraction stored the workbook values: the judge's lookup needs no engine now
    key = cache.key(
        "workbook",
        __import__("hashlib").sha256(p.read_bytes()).hexdigest(),
        "",
        ExtractLimits(xlsx_engine="formulas"),
    )
    assert cache.get_workbook(key).get(None, "A2") == 42
    wv = workbook_values(p, cache=cache, engine="formulas")
    assert wv.get(None, "A2") == 42 and wv.path == "book.xlsx"


def test_isolation_modes_and_workers_agree(tmp_path):
    root = _tree(tmp_path / "d")
    wb = openpyxl.Workbook()
    wb.active["A1"] = 5
    wb.active["B1"] = "=A1*3"
    wb.save(root / "book.xlsx")
    base = extract_dir(root, cache=False, engine="formulas")
    assert "B1=15 [=A1*3]" in base.text
    assert extract_dir(root, cache=False, engine="formulas", isolation="none").text == base.text
    assert extract_dir(root, cache=False, engine="formulas", workers=2).text == base.text


def test_missing_paths_raise(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        extract(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="nodir"):
        extract_dir(tmp_path / "nodir")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(NotADirectoryError):
        extract_dir(tmp_path / "f.txt")


def test_limits_object_is_respected_by_extract_dir(tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"row {i}\n" for i in range(5000)))
    fe = extract_dir(tmp_path, limits=ExtractLimits(max_chars=3_000))
    assert fe.file("long.txt").truncated and len(fe.file("long.txt").text) <= 3_000
    fe = extract_dir(tmp_path, max_chars_per_file=2_000, limits=ExtractLimits(max_chars=3_000))
    assert len(fe.file("long.txt").text) <= 2_000


def test_cached_images_round_trip_exactly(tmp_path):
    p = tmp_path / "chart.png"
    p.write_bytes(_png((250, 1, 2)))
    first = extract(p, cache=tmp_path / "c")
    second = extract(p, cache=tmp_path / "c")
    assert second.cached and second.images[0].data == first.images[0].data == p.read_bytes()
