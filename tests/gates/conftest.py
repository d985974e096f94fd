"""Fixture tasks for the gate tests: a small, clean reconciliation task built in tmp dirs,
plus helpers to break it in specific ways and a tiny stand-in check evaluator."""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jobbench.tasks import Task, load_task

OCC = "bookkeeping_accounting_and_auditing_clerks"

INSTRUCTIONS = """Hi,

Please reconcile the March vendor payments before the audit on Friday.

Reference files:
- ledger_march.csv: the payments ledger exported from our accounting system.
- invoices.csv: the vendor invoices we received in March.
- memo_from_ap.md: a note from accounts payable about a possible duplicate payment.

Deliverables (save them in the output folder):
- reconciliation.csv with one row per vendor and the columns vendor, invoiced, paid, difference.
- summary.md: a short memo stating the total overpayment in US dollars and which vendor was paid twice.

If the sources conflict, explain which one you trust and why.
"""

LEDGER = """date,vendor,amount,reference
2024-03-02,Acme Supplies,1250.00,INV-1001
2024-03-02,Acme Supplies,1250.00,INV-1001
2024-03-05,Birch Logistics,830.50,INV-2001
2024-03-09,Cobalt Office,415.25,INV-3001
"""

INVOICES = """invoice,vendor,amount,date
INV-1001,Acme Supplies,1250.00,03/01/2024
INV-2001,Birch Logistics,830.50,03/04/2024
INV-3001,Cobalt Office,415.25,03/08/2024
"""

AP_MEMO = """# Note from accounts payable

We think one of the March vendors may have been paid twice, roughly a thousand dollars.
Can someone confirm before the auditors arrive? Thanks, Dana
"""

TASK_CARD = """# Task card (hidden)

O*NET task: reconcile vendor statements. Planted conflict: the AP note understates the duplicate
(it says about $1,000; the ledger shows a duplicate payment of $1,250.00 to Acme Supplies).
"""

SOLUTION_SUMMARY = """# March vendor payment reconciliation

The ledger records invoice INV-1001 from Acme Supplies twice on 2 March, so Acme Supplies was paid
twice. The total overpayment is $1,250.00, the amount of the duplicated invoice. The note from
accounts payable understates the duplicate at roughly a thousand dollars; I trust the ledger and the
invoice file, which agree on the invoice amount of $1,250.00 for the single invoice INV-1001.
Birch Logistics and Cobalt Office were each paid exactly once and match their invoices.
"""

SOLUTION_RECON = """vendor,invoiced,paid,difference
Acme Supplies,1250.00,2500.00,1250.00
Birch Logistics,830.50,830.50,0.00
Cobalt Office,415.25,415.25,0.00
"""

DECOY_SUMMARY = """# Reconciliation

Acme Supplies was paid twice. Following the accounts payable note, the overpayment is $1,000.00.
"""

DECOY_RECON = """vendor,invoiced,paid,difference
Acme Supplies,1250.00,2250.00,1000.00
Birch Logistics,830.50,830.50,0.00
Cobalt Office,415.25,415.25,0.00
"""


def base_rubrics() -> dict[str, Any]:
    """RUBRICS.json of the clean fixture task: 3 rubrics, 6 criteria, a requires chain."""
    return {
        "rubrics": [
            {
                "id": "recon",
                "rubric": "Does reconciliation.csv show the duplicate payment?",
                "weight": 2,
                "files": ["reconciliation.csv"],
                "criterion": [
                    "The file reconciliation.csv lists the vendor Acme Supplies.",
                    "The file reconciliation.csv reports a difference of $1,250.00 for Acme Supplies.",
                ],
                "checks": [
                    {"kind": "regex", "pattern": "Acme Supplies", "file": "reconciliation.csv"},
                    {
                        "kind": "csv_value",
                        "column": "difference",
                        "where": {"vendor": "Acme Supplies"},
                        "expect": {"equals": 1250.0, "abs_tol": 0.01},
                        "file": "reconciliation.csv",
                    },
                ],
            },
            {
                "id": "memo",
                "rubric": "Does the memo identify the duplicate payment?",
                "weight": 4,
                "requires": ["recon"],
                "criterion": [
                    "The memo summary.md names Acme Supplies as the vendor that was paid twice.",
                    "The memo summary.md states a total overpayment of $1,250.00.",
                ],
                "checks": [
                    {"kind": "regex", "pattern": "Acme Supplies[^.]*twice", "file": "summary.md"},
                    {"kind": "number", "value": 1250.0, "abs_tol": 0.01, "file": "summary.md"},
                ],
            },
            {
                "rubric": "Does the memo resolve the conflict with the accounts payable note?",
                "weight": 2,
                "criterion": [
                    "The memo summary.md says that the accounts payable note understates the duplicate amount.",
                    "The memo summary.md says the ledger is the source it trusts.",
                ],
                "checks": [
                    {"kind": "regex", "pattern": "understat", "file": "summary.md"},
                    {"kind": "regex", "pattern": "trust the ledger", "file": "summary.md"},
                ],
            },
        ]
    }


DECOY_EXPECTED = {
    "rubrics": [
        {"index": 0, "criteria": [True, False]},
        {"index": 1, "criteria": [True, False]},
        {"index": 2, "criteria": [False, False]},
    ]
}


@dataclass
class TaskSpec:
    """Everything a fixture task is made of (edit, then :func:`write_task`)."""

    instructions: str
    workspace: dict[str, str | bytes]
    rubrics: dict[str, Any]
    task_card: str = TASK_CARD
    solution: dict[str, str | bytes] | None = None
    search: dict[str, str | bytes] | None = None


def clean_spec() -> TaskSpec:
    return TaskSpec(
        instructions=INSTRUCTIONS,
        workspace={
            "ledger_march.csv": LEDGER,
            "invoices.csv": INVOICES,
            "memo_from_ap.md": AP_MEMO,
        },
        rubrics=base_rubrics(),
        solution={
            "solve.py": "# reference solution (fixture)\n",
            "expected/summary.md": SOLUTION_SUMMARY,
            "expected/reconciliation.csv": SOLUTION_RECON,
            "decoys/trusts_ap_note/summary.md": DECOY_SUMMARY,
            "decoys/trusts_ap_note/reconciliation.csv": DECOY_RECON,
            "decoys/trusts_ap_note/expected.json": json.dumps(DECOY_EXPECTED),
        },
    )


def _write(base: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")


def write_task(
    root: Path, spec: TaskSpec, *, split: str = "sample", occupation: str = OCC, number: int = 1
) -> Task:
    """Write ``spec`` to ``root/<split>/<occupation>/task<number>`` and load it."""
    d = root / split / occupation / f"task{number}"
    _write(d / "task_folder", {"TASK_INSTRUCTIONS.txt": spec.instructions, **spec.workspace})
    (d / "RUBRICS.json").write_text(json.dumps(spec.rubrics, indent=2), encoding="utf-8")
    (d / "task_card.md").write_text(spec.task_card, encoding="utf-8")
    if spec.solution:
        _write(d / "solution", spec.solution)
    if spec.search:
        _write(d / "files_required_to_search", spec.search)
    return load_task(d, split, occupation)


@pytest.fixture
def spec() -> TaskSpec:
    return clean_spec()


@pytest.fixture
def clean_task(tmp_path: Path) -> Task:
    return write_task(tmp_path, clean_spec())


def with_criterion(
    spec: TaskSpec,
    text: str,
    *,
    rubric: int = 2,
    criterion: int = 0,
    check: dict[str, Any] | None | str = "keep",
) -> TaskSpec:
    """A copy of ``spec`` with one criterion replaced (and its check, unless "keep")."""
    s = copy.deepcopy(spec)
    r = s.rubrics["rubrics"][rubric]
    r["criterion"][criterion] = text
    if check != "keep":
        r["checks"][criterion] = check
    return s


# --- a stand-in for jobbench.judge.evaluate_check (regex and number kinds only) ----------


@dataclass
class FakeCheckResult:
    passed: bool
    detail: str
    evidence: str


_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def fake_evaluate(check: Any, deliverables_dir: Path, extraction: Any = None) -> FakeCheckResult:
    """Evaluate ``regex``, ``number`` and simple ``csv_value`` checks on UTF-8 files matching
    ``check.file`` (a test double with the contract of ``jobbench.judge.evaluate_check``)."""
    files = sorted(p for p in Path(deliverables_dir).rglob("*") if p.is_file())
    pattern = check.file or "*"
    texts = [
        p.read_text(encoding="utf-8")
        for p in files
        if fnmatch.fnmatch(p.relative_to(deliverables_dir).as_posix(), pattern)
    ]
    if check.kind == "regex":
        flags = re.IGNORECASE if check.ignore_case else 0
        hit = next(
            (m.group(0) for t in texts for m in [re.search(check.pattern, t, flags)] if m), None
        )
        return FakeCheckResult(hit is not None, f"pattern {check.pattern!r}", hit or "")
    if check.kind == "number":
        for t in texts:
            for m in _NUM.finditer(t):
                v = float(m.group(0).replace(",", ""))
                if abs(v - check.value) <= max(check.abs_tol, check.rel_tol * abs(check.value)):
                    return FakeCheckResult(True, f"found {m.group(0)}", m.group(0))
        return FakeCheckResult(False, f"no number within tolerance of {check.value:g}", "")
    if check.kind == "csv_value":
        import csv
        import io

        for t in texts:
            for row in csv.DictReader(io.StringIO(t)):
                row = {k.strip().lower(): (v or "").strip() for k, v in row.items()}
                if all(row.get(k.lower(), "").lower() == v.lower() for k, v in check.where.items()):
                    got = row.get(check.column.lower(), "")
                    try:
                        ok = abs(float(got) - float(check.expect.equals)) <= check.expect.abs_tol
                    except ValueError:
                        ok = got.lower() == str(check.expect.equals).lower()
                    return FakeCheckResult(ok, f"{check.column} = {got}", got)
        return FakeCheckResult(False, "no matching row", "")
    raise NotImplementedError(check.kind)


@pytest.fixture
def fx():
    """This module, so tests can use its builders (import-mode=importlib has no package)."""
    import sys

    return sys.modules[__name__]


@pytest.fixture
def rb():
    """The run-directory builders of ``runs.py`` (loaded by path: no test package)."""
    import importlib.util
    import sys

    name = "jobbench_gate_test_runs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("runs.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]
