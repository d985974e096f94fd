"""A large formula workbook: JobBench's extraction against LibreOffice's own conversion of
the same file, as a ratio measured in one run (the machine may be shared and loaded).

The workbook is the one of ``benchmarks/extract_bench.py`` (50,000 rows, two formula columns
filled down, a summary sheet). Each repetition, interleaved:

* ``soffice``: ``soffice --headless --convert-to xlsx`` of the file (the recalculating
  conversion the extractor runs, with the same profile settings, through
  :func:`jobbench.extract._soffice.convert`);
* ``extract``: :func:`jobbench.extract.extract` with the LibreOffice engine, cache off,
  default isolation (a worker process), i.e. conversion + formula pass + values pass +
  rendering.

Prints the medians, their ratio (issue 20 asks <= 1.5) and whether every repetition's text
was identical. Usage: ``PYTHONPATH=src python benchmarks/workbook_vs_soffice.py [--rows
50000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from extract_bench import make_workbook  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from jobbench.extract import ExtractLimits, extract
    from jobbench.extract._soffice import convert

    limits = ExtractLimits(xlsx_engine="libreoffice", timeout=1800, soffice_timeout=1200)
    with tempfile.TemporaryDirectory() as tmp:
        book = make_workbook(Path(tmp) / "book.xlsx", args.rows)
        soffice, ours, digests = [], [], set()
        for i in range(args.repeat):
            out = Path(tmp) / f"out{i}"
            out.mkdir()
            t0 = time.perf_counter()
            convert(book, "xlsx", out, timeout=1200)
            soffice.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ext = extract(book, cache=False, limits=limits)
            ours.append(time.perf_counter() - t0)
            digests.add(hashlib.sha256(ext.text.encode()).hexdigest())
            if any(d.level == "error" for d in ext.diagnostics):
                raise SystemExit(f"extraction failed: {ext.diagnostics}")
    s, o = statistics.median(soffice), statistics.median(ours)
    print(f"workbook: {args.rows:,} rows, {args.repeat} interleaved repetitions")
    print(
        f"soffice --convert-to xlsx   median {s:6.2f} s  ({', '.join(f'{x:.2f}' for x in soffice)})"
    )
    print(f"jobbench extract            median {o:6.2f} s  ({', '.join(f'{x:.2f}' for x in ours)})")
    print(f"ratio extract / soffice     {o / s:.2f}  (target <= 1.5)")
    print(f"text identical across repetitions: {len(digests) == 1}")


if __name__ == "__main__":
    main()
