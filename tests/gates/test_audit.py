"""Each audit rule: a fixture task that trips it and one that passes it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from jobbench.extract import Diagnostic, Extraction
from jobbench.gates import AuditConfig, audit_task, rules_for


def rules(findings) -> list[str]:
    return sorted(f.rule for f in findings)


def test_clean_task_has_no_finding(clean_task) -> None:
    assert audit_task(clean_task) == []


def test_a1_missing_reference_file(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.instructions = spec.instructions.replace(
        "- memo_from_ap.md:",
        "- budget_2024.xlsx: the approved budget, use it for the limits.\n- memo_from_ap.md:",
    )
    found = audit_task(fx.write_task(tmp_path / "bad", spec))
    a1 = [f for f in found if f.rule == "A1"]
    assert [f.where for f in a1] == ["budget_2024.xlsx"]
    assert a1[0].severity == "error" and "not in task_folder/" in a1[0].message
    # passes once the file exists
    spec.workspace["budget_2024.xlsx"] = "placeholder"
    assert "A1" not in rules(audit_task(fx.write_task(tmp_path / "good", spec)))


def test_a1_names_found_in_search_folder_are_fine(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.instructions += (
        "\nThe vendor master list (vendor_master.pdf) must be looked up in the archive.\n"
    )
    spec.search = {"vendor_master.pdf": b"%PDF-1.4 fixture"}
    assert "A1" not in rules(audit_task(fx.write_task(tmp_path, spec)))


def test_a2_unreferenced_workspace_file(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.workspace["old_notes.txt"] = "nothing to see here"
    found = audit_task(fx.write_task(tmp_path / "bad", spec))
    assert [(f.rule, f.where, f.severity) for f in found] == [("A2", "old_notes.txt", "warning")]
    spec.instructions = spec.instructions.replace(
        "- memo_from_ap.md:", "- old_notes.txt: last month's notes.\n- memo_from_ap.md:"
    )
    assert audit_task(fx.write_task(tmp_path / "good", spec)) == []


def test_a2_folder_mention_counts(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.workspace["statements/acme.csv"] = "x"
    spec.workspace["statements/birch.csv"] = "y"
    spec.instructions += "\nVendor statements are in the statements/ folder.\n"
    assert audit_task(fx.write_task(tmp_path, spec)) == []


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda r: r["rubrics"][0].__setitem__("files", ["recon.csv"]), "rubrics[0].files[0]"),
        (
            lambda r: r["rubrics"][1]["checks"][1].__setitem__("file", "*.xlsx"),
            "rubrics[1].checks[1].file",
        ),
        (
            lambda r: r["rubrics"][2]["criterion"].__setitem__(
                0,
                "The memo summary_v2.md says that the accounts payable note understates the duplicate amount.",
            ),
            "rubrics[2].criterion[0]",
        ),
    ],
)
def test_a3_deliverable_name_mismatch(tmp_path: Path, fx, mutate, where) -> None:
    spec = fx.clean_spec()
    mutate(spec.rubrics)
    found = [f for f in audit_task(fx.write_task(tmp_path, spec)) if f.rule == "A3"]
    assert [f.where for f in found] == [where]
    assert found[0].severity == "error" and found[0].file.endswith("RUBRICS.json")


def test_a3_passes_for_matching_glob(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][0]["files"] = ["*.csv"]
    spec.rubrics["rubrics"][1]["checks"][1]["file"] = "*.md"
    assert audit_task(fx.write_task(tmp_path, spec)) == []


def test_a3_wildcard_glob_described_by_folder_or_format(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][0]["files"] = ["charts/*.png", "*.xlsx"]
    found = [f.where for f in audit_task(fx.write_task(tmp_path / "bad", spec)) if f.rule == "A3"]
    assert found == ["rubrics[0].files[0]", "rubrics[0].files[1]"]
    spec.instructions += "\nAlso put one chart per vendor in a charts/ folder and the figures in an Excel workbook.\n"
    assert audit_task(fx.write_task(tmp_path / "good", spec)) == []


def test_a4_deliverable_not_graded(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.instructions = spec.instructions.replace(
        "- summary.md:", "- chart.png: a bar chart of paid vs invoiced per vendor.\n- summary.md:"
    )
    found = audit_task(fx.write_task(tmp_path / "bad", spec))
    assert [(f.rule, f.where, f.severity) for f in found] == [("A4", "chart.png", "warning")]
    spec.rubrics["rubrics"][0]["criterion"].append("The file chart.png exists.")
    spec.rubrics["rubrics"][0]["checks"].append({"kind": "file_exists", "file": "chart.png"})
    assert audit_task(fx.write_task(tmp_path / "good", spec)) == []


def test_a5_rubric_text_leak(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.workspace["memo_from_ap.md"] = fx.AP_MEMO + (
        "\nReviewer checklist: the memo summary.md says that the accounts payable note understates the "
        "duplicate amount.\n"
    )
    found = [f for f in audit_task(fx.write_task(tmp_path, spec)) if f.rule == "A5"]
    assert len(found) == 1 and found[0].where == "memo_from_ap.md" and found[0].severity == "error"
    assert "rubrics[2].criterion[0]" in found[0].message and "100%" in found[0].message


def test_a5_instructions_may_restate_criteria(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.instructions += "\nThe file reconciliation.csv lists the vendor Acme Supplies.\n"
    assert "A5" not in rules(audit_task(fx.write_task(tmp_path, spec)))


def test_a6_reference_answer_leak(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.workspace["memo_from_ap.md"] = fx.AP_MEMO + "\n" + fx.SOLUTION_SUMMARY
    found = [f for f in audit_task(fx.write_task(tmp_path, spec)) if f.rule == "A6"]
    assert [f.where for f in found] == ["memo_from_ap.md"]
    assert "solution/expected/summary.md" in found[0].message and "100%" in found[0].message


def test_a6_compares_extra_reference_dirs(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.solution = {"solve.py": "# no stored outputs\n"}
    spec.workspace["memo_from_ap.md"] = fx.AP_MEMO + "\n" + fx.SOLUTION_SUMMARY
    task = fx.write_task(tmp_path / "ds", spec)
    assert "A6" not in rules(audit_task(task))
    oracle = tmp_path / "oracle_deliverables"
    oracle.mkdir()
    (oracle / "summary.md").write_text(fx.SOLUTION_SUMMARY)
    found = audit_task(task, AuditConfig(extra_reference_dirs=[oracle]))
    assert [f.rule for f in found] == ["A6"]


def test_a6_threshold(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    half = " ".join(fx.SOLUTION_SUMMARY.split()[:45])
    spec.workspace["memo_from_ap.md"] = fx.AP_MEMO + "\n" + half
    task = fx.write_task(tmp_path, spec)
    assert "A6" not in rules(audit_task(task))
    assert "A6" in rules(audit_task(task, AuditConfig(reference_threshold=0.3)))


def test_a6_a7_decoy_that_hands_an_input_back_is_not_a_leak(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.solution["decoys/did_nothing/reconciliation.csv"] = fx.LEDGER  # the input, unchanged
    spec.solution["decoys/did_nothing/expected.json"] = "{}"
    assert audit_task(fx.write_task(tmp_path, spec)) == []


def _ledger(rows: int, dup: bool, fix: bool) -> str:
    lines = ["date,vendor,amount,reference"]
    for i in range(rows):
        amount = "999.00" if (i % 5 == 2 and not fix) else f"{100 + i}.00"
        lines.append(
            f"2024-03-{1 + i % 28:02d},Vendor {i:02d} Services Inc,{amount},INV-{1000 + i}"
        )
        if dup and i == 3:
            lines.append(lines[-1])
    return "\n".join(lines) + "\n"


def test_a6_source_of_a_data_copy_deliverable_with_decoy_baseline(tmp_path: Path, fx) -> None:
    """The answer is the cleaned ledger; the workspace holds the messy source. Without a
    decoy the source looks like a leak (documented limitation); a decoy built from the same
    input (duplicate kept) removes the shared rows from the comparison."""
    spec = fx.clean_spec()
    spec.workspace["ledger_march.csv"] = _ledger(40, dup=True, fix=False)
    spec.solution = {"expected/cleaned_ledger.csv": _ledger(40, dup=False, fix=True)}
    assert "A6" in rules(audit_task(fx.write_task(tmp_path / "no_decoy", spec)))
    spec.solution["decoys/no_fixes/cleaned_ledger.csv"] = _ledger(40, dup=False, fix=False)
    spec.solution["decoys/no_fixes/expected.json"] = "{}"
    assert "A6" not in rules(audit_task(fx.write_task(tmp_path / "with_decoy", spec)))
    # while a (reformatted) workspace copy of the answer is still caught
    spec.workspace["corrected_amounts.txt"] = _ledger(40, dup=False, fix=True).replace(",", "\t")
    spec.instructions += "\nSee corrected_amounts.txt.\n"
    found = audit_task(fx.write_task(tmp_path / "leak", spec))
    assert [(f.rule, f.where) for f in found] == [("A6", "corrected_amounts.txt")]


@pytest.mark.parametrize(
    "rel, content",
    [
        ("RUBRICS.json", None),
        ("brief.md", "task_card"),
        ("solution/solve.py", "print(1)\n"),
        ("expected.json", "{}"),
    ],
)
def test_a7_hidden_file_in_workspace(tmp_path: Path, fx, rel, content) -> None:
    spec = fx.clean_spec()
    if content is None:
        import json

        content = json.dumps(spec.rubrics)
    elif content == "task_card":
        content = spec.task_card
    spec.workspace[rel] = content
    spec.instructions += f"\nAlso see {rel}.\n"
    found = [f for f in audit_task(fx.write_task(tmp_path, spec)) if f.rule == "A7"]
    assert [(f.where, f.severity) for f in found] == [(rel, "error")]


def test_a8_search_file_copied_into_workspace(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.search = {"policy.md": "Payment policy: duplicates are recovered within 30 days."}
    spec.instructions += "\nFind the payment policy in the archive (policy.md).\n"
    assert audit_task(fx.write_task(tmp_path / "good", spec)) == []
    spec.workspace["policy.md"] = spec.search["policy.md"]
    found = audit_task(fx.write_task(tmp_path / "bad", spec))
    assert [(f.rule, f.where, f.severity) for f in found] == [("A8", "policy.md", "warning")]


def _fake_extract(kind: str | None = None, error: str | None = None, raise_for: str | None = None):
    from jobbench.extract import extract as real

    def fake(path, *, rel=None, max_chars=200_000):
        if raise_for and str(path).endswith(raise_for):
            raise RuntimeError("boom")
        if kind and str(path).endswith("invoices.csv"):
            return Extraction(path=rel or "", kind=kind, text="[unsupported: .csv]")
        if error and str(path).endswith("invoices.csv"):
            return Extraction(
                path=rel or "", kind="csv", diagnostics=[Diagnostic(level="error", message=error)]
            )
        return real(path, rel=rel, max_chars=max_chars)

    return fake


def test_a9_extract_error_diagnostic(clean_task, monkeypatch) -> None:
    import jobbench.extract

    monkeypatch.setattr(jobbench.extract, "extract", _fake_extract(error="row 3: bad quoting"))
    found = audit_task(clean_task)
    assert [(f.rule, f.where) for f in found] == [("A9", "invoices.csv")]
    assert "row 3: bad quoting" in found[0].message


def test_a9_extractor_crash(clean_task, monkeypatch) -> None:
    import jobbench.extract

    monkeypatch.setattr(jobbench.extract, "extract", _fake_extract(raise_for="ledger_march.csv"))
    found = audit_task(clean_task)
    assert [(f.rule, f.where) for f in found] == [("A9", "ledger_march.csv")]
    assert "RuntimeError: boom" in found[0].message


def test_a10_unsupported_format(clean_task, monkeypatch) -> None:
    import jobbench.extract

    monkeypatch.setattr(jobbench.extract, "extract", _fake_extract(kind="unsupported"))
    found = audit_task(clean_task)
    assert [(f.rule, f.where, f.severity) for f in found] == [("A10", "invoices.csv", "warning")]


def test_a11_no_deliverable_named(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.instructions = fx.INSTRUCTIONS.split("Deliverables")[0] + "Send me your findings.\n"
    spec.rubrics = copy.deepcopy(spec.rubrics)
    for r in spec.rubrics["rubrics"]:
        r.pop("files", None)
        r["checks"] = [dict(c, file=None) for c in r["checks"]]
        r["criterion"] = [
            c.replace("The file reconciliation.csv", "The reconciliation").replace(
                "The memo summary.md", "The memo"
            )
            for c in r["criterion"]
        ]
        r["rubric"] = r["rubric"].replace("reconciliation.csv", "the reconciliation")
    found = audit_task(fx.write_task(tmp_path, spec))
    assert [(f.rule, f.severity) for f in found] == [("A11", "warning")]


def test_every_audit_rule_is_tested() -> None:
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    missing = [r.id for r in rules_for("audit") if f"test_{r.id.lower()}_" not in source]
    assert missing == []
