"""Extraction benchmark: wall time and peak memory for large deliverables.

Inputs are generated into a temporary directory:

* a 50,000-row workbook with formulas (two formula columns filled down + a summary sheet),
  extracted with LibreOffice recalculation and with the ``formulas`` fallback (which skips
  workbooks over ``formulas_max_cells``, so it is also measured on a 5,000-row workbook);
* a 50-page PDF with a 25-row table on every page (reportlab);
* a 100 MB CSV.

Each measurement runs in a fresh Python process (cache disabled, default subprocess
isolation) so that peak memory is that run's alone: "parent" is the calling process,
"worker" the largest child (the extraction worker, or LibreOffice) as reported by
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after the worker pool is shut down.

Usage::

    PYTHONPATH=src python benchmarks/extract_bench.py                 # everything
    PYTHONPATH=src python benchmarks/extract_bench.py --cases pdf,csv --csv-mb 20
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_workbook(path: Path, rows: int) -> Path:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Data")
    ws.append(["id", "region", "units", "price", "revenue", "running total"])
    regions = ["North", "South", "East", "West"]
    for i in range(2, rows + 2):
        ws.append(
            [
                i - 1,
                regions[i % 4],
                (i * 7) % 50 + 1,
                round(1 + (i % 13) * 0.75, 2),
                f"=C{i}*D{i}",
                f"=F{i - 1}+E{i}" if i > 2 else f"=E{i}",
            ]
        )
    summary = wb.create_sheet("Summary")
    last = rows + 1
    summary.append(["Total revenue", f"=SUM(Data!E2:E{last})"])
    summary.append(["Units", f"=SUM(Data!C2:C{last})"])
    summary.append(["North revenue", f'=SUMIF(Data!B2:B{last},"North",Data!E2:E{last})'])
    wb.save(path)
    return path


def make_pdf(path: Path, pages: int) -> Path:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    styles = getSampleStyleSheet()
    story = []
    for p in range(1, pages + 1):
        story.append(Paragraph(f"Section {p}: regional results", styles["Heading2"]))
        rows = [["Region", "Units", "Price", "Revenue", "Note"]]
        for r in range(25):
            units, price = (p * 31 + r * 7) % 97 + 1, round(1 + (r % 9) * 1.25, 2)
            rows.append(
                [
                    f"R{p}-{r}",
                    str(units),
                    f"{price:.2f}",
                    f"{units * price:.2f}",
                    "ok" if r % 3 else "check",
                ]
            )
        table = Table(rows)
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.4, colors.black)]))
        story += [table, Paragraph(f"Page {p} closing remark.", styles["Normal"]), PageBreak()]
    SimpleDocTemplate(str(path), pagesize=letter).build(story)
    return path


def make_csv(path: Path, megabytes: int) -> Path:
    target = megabytes * 1_000_000
    line_no = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("id,date,region,product,units,unit_price,amount,comment\n")
        written = 0
        chunk = []
        while written < target:
            line_no += 1
            line = (
                f"{line_no},2024-{line_no % 12 + 1:02d}-{line_no % 28 + 1:02d},region-{line_no % 17},"
                f"product-{line_no % 101},{line_no % 40 + 1},{(line_no % 500) / 7:.4f},"
                f'{(line_no % 40 + 1) * (line_no % 500) / 7:.2f},"note {line_no % 9}"\n'
            )
            chunk.append(line)
            written += len(line)
            if len(chunk) >= 10_000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
    return path


def run_one(path: str, engine: str) -> dict:
    """Measure one extraction in this (fresh) process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from jobbench.extract import ExtractLimits, extract
    from jobbench.extract._pool import POOL

    limits = ExtractLimits(xlsx_engine=engine, timeout=1800, soffice_timeout=1200)
    t0 = time.perf_counter()
    ext = extract(path, limits=limits, cache=False)
    elapsed = time.perf_counter() - t0
    POOL.shutdown()
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "seconds": round(elapsed, 2),
        "parent_peak_mb": round(self_rss, 1),
        "worker_peak_mb": round(child_rss, 1),
        "chars": len(ext.text),
        "truncated": ext.truncated,
        "kind": ext.kind,
        "diagnostics": [f"{d.level}: {d.message[:120]}" for d in ext.diagnostics],
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases", default="xlsx,pdf,csv")
    ap.add_argument("--engines", default="libreoffice,formulas", help="workbook engines to measure")
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument(
        "--formulas-rows",
        type=int,
        default=5_000,
        help="rows of the smaller workbook the formulas fallback is also measured on (0 = skip)",
    )
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--csv-mb", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="generate inputs here and keep them")
    ap.add_argument("--run", nargs=2, metavar=("PATH", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run[0], args.run[1])))
        return 0

    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    with tempfile.TemporaryDirectory(prefix="jobbench-bench-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        plan = []
        if "xlsx" in cases:
            t0 = time.perf_counter()
            p = make_workbook(root / "workbook.xlsx", args.rows)
            print(
                f"generated {p.name}: {args.rows:,} rows, {2 * args.rows + 3:,} formulas, "
                f"{p.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s",
                flush=True,
            )
            for engine in args.engines.split(","):
                plan.append((f"xlsx {args.rows:,} rows ({engine})", p, engine))
            if "formulas" in args.engines and args.formulas_rows:
                small = make_workbook(root / "workbook_small.xlsx", args.formulas_rows)
                plan.append((f"xlsx {args.formulas_rows:,} rows (formulas)", small, "formulas"))
                if "libreoffice" in args.engines:
                    plan.append(
                        (f"xlsx {args.formulas_rows:,} rows (libreoffice)", small, "libreoffice")
                    )
        if "pdf" in cases:
            p = make_pdf(root / "tables.pdf", args.pages)
            print(
                f"generated {p.name}: {args.pages} pages, {p.stat().st_size / 1e6:.1f} MB",
                flush=True,
            )
            plan.append((f"pdf {args.pages} pages with tables", p, "auto"))
        if "csv" in cases:
            p = make_csv(root / "big.csv", args.csv_mb)
            print(f"generated {p.name}: {p.stat().st_size / 1e6:.1f} MB", flush=True)
            plan.append((f"csv {args.csv_mb} MB", p, "auto"))
        rows = []
        for label, path, engine in plan:
            env = dict(os.environ, JOBBENCH_NO_CACHE="1")
            proc = subprocess.run(
                [sys.executable, __file__, "--run", str(path), engine],
                capture_output=True,
                text=True,
                env=env,
            )
            if proc.returncode != 0:
                print(f"{label}: FAILED\n{proc.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append((label, r))
            print(
                f"{label}: {r['seconds']:.1f} s, parent peak {r['parent_peak_mb']:.0f} MB, "
                f"worker/child peak {r['worker_peak_mb']:.0f} MB, {r['chars']:,} chars"
                + (" (truncated)" if r["truncated"] else ""),
                flush=True,
            )
            for d in r["diagnostics"]:
                print(f"    {d}")
        print("\n| input | time (s) | parent peak RSS (MB) | worker/child peak RSS (MB) | chars |")
        print("|---|---:|---:|---:|---:|")
        for label, r in rows:
            print(
                f"| {label} | {r['seconds']:.1f} | {r['parent_peak_mb']:.0f} | {r['worker_peak_mb']:.0f} | {r['chars']:,} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
