"""Regenerate the sample dataset's workspace, reference and decoy files from source data.

Usage (from the repository root, with the ``sample-build`` extra installed)::

    python scripts/sample_build/build.py                 # rebuild datasets/sample in place
    python scripts/sample_build/build.py --out /tmp/x    # build into another root
    python scripts/sample_build/build.py --only statisticians_task1

Each builder module names its task with ``SPLIT`` (``main`` or ``easy``), ``OCCUPATION`` and
``NUMBER``; the task is written to ``<root>/<SPLIT>/<OCCUPATION>/task<NUMBER>/``.

Each task builder writes ``task_folder/`` (including TASK_INSTRUCTIONS.txt), optional
``files_required_to_search/`` and the deliverables of every decoy in
``solution/decoys/<name>/deliverables/``. Hand-written files (RUBRICS.json, task_card.md,
solution/solve.py, decoy expected.json) are copied from the committed dataset when ``--out``
is another root, never regenerated.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "datasets" / "sample"
sys.path.insert(0, str(HERE))

BUILDERS = [
    "statisticians_task1",
    "social_science_research_assistants_task1",
    "civil_engineers_task1",
    "personal_financial_advisors_task1",
    "bookkeeping_accounting_and_auditing_clerks_task1",
    "online_merchants_task1",
    "sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products_task1",
    "supply_chain_managers_task1",
    "civil_engineers_easy_task1",
    "statisticians_easy_task1",
    "bookkeeping_accounting_and_auditing_clerks_easy_task1",
    "social_science_research_assistants_easy_task1",
    "personal_financial_advisors_easy_task1",
    "supply_chain_managers_easy_task1",
    "online_merchants_easy_task1",
    "sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products_easy_task1",
]
HAND_WRITTEN = ("RUBRICS.json", "task_card.md", "solution")


def task_dir(root: Path, builder) -> Path:
    """``<root>/<split>/<occupation>/task<N>`` of a builder module (split default ``main``)."""
    return root / getattr(builder, "SPLIT", "main") / builder.OCCUPATION / f"task{builder.NUMBER}"


def build_one(name: str, root: Path) -> Path:
    """Build one task under ``root``; returns its task directory."""
    mod = importlib.import_module(name)
    dest = task_dir(root, mod)
    src = task_dir(SAMPLE, mod)
    if root.resolve() != SAMPLE.resolve():
        dest.mkdir(parents=True, exist_ok=True)
        for item in HAND_WRITTEN:
            s = src / item
            if s.is_dir():
                shutil.copytree(
                    s,
                    dest / item,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("deliverables", "__pycache__"),
                )
            elif s.is_file():
                shutil.copy2(s, dest / item)
    for sub in ("task_folder", "files_required_to_search"):
        if (dest / sub).exists():
            shutil.rmtree(dest / sub)
    decoys = dest / "solution" / "decoys"
    if decoys.is_dir():
        for d in decoys.iterdir():
            if (d / "deliverables").exists():
                shutil.rmtree(d / "deliverables")
    mod.build(dest)
    if hasattr(mod, "build_search"):
        mod.build_search(dest)
    if hasattr(mod, "build_decoys"):
        mod.build_decoys(dest)
        from _common import _normalise_ooxml

        for f in sorted((dest / "solution" / "decoys").glob("*/deliverables/**/*")):
            if f.suffix.lower() in (".xlsx", ".docx", ".pptx"):
                _normalise_ooxml(f)  # solve.py stamps the current time into document metadata
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out", type=Path, default=SAMPLE, help="dataset root to write (default: datasets/sample)"
    )
    ap.add_argument("--only", action="append", help="builder name(s) to run (default: all)")
    args = ap.parse_args(argv)
    for name in args.only or BUILDERS:
        path = build_one(name, args.out)
        print(f"built {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
