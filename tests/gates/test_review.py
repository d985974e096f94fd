"""The annotator review round-trip: export a workbook, fill it in, apply it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.gates import ReviewContext, ReviewError, apply_review, export_review
from jobbench.gates._review import CRITERIA_COLUMNS, RUBRIC_COLUMNS
from jobbench.tasks import load_dataset, load_task


@pytest.fixture
def ds(tmp_path: Path, fx):
    root = tmp_path / "ds"
    fx.write_task(root, fx.clean_spec(), number=1)
    fx.write_task(
        root,
        fx.with_criterion(fx.clean_spec(), "The memo summary.md uses appropriate language."),
        number=2,
    )
    return load_dataset(root)


def fill(
    sheet: Path,
    decisions: dict[tuple[str, int, int], tuple[str, str, str]],
    rubric_decisions: dict[tuple[str, int], str] | None = None,
) -> None:
    """Write decisions into an exported workbook the way a reviewer would."""
    wb = load_workbook(sheet)
    ws = wb["criteria"]
    col = {name: k + 1 for k, name in enumerate(CRITERIA_COLUMNS)}
    for row in range(2, ws.max_row + 1):
        key = (
            ws.cell(row, col["task"]).value,
            ws.cell(row, col["rubric"]).value,
            ws.cell(row, col["criterion"]).value,
        )
        if key in decisions:
            d, text, comment = decisions[key]
            ws.cell(row, col["decision"]).value = d
            ws.cell(row, col["edited text"]).value = text or None
            ws.cell(row, col["comment"]).value = comment or None
    rws = wb["rubrics"]
    rcol = {name: k + 1 for k, name in enumerate(RUBRIC_COLUMNS)}
    for row in range(2, rws.max_row + 1):
        key = (rws.cell(row, rcol["task"]).value, rws.cell(row, rcol["rubric"]).value)
        if rubric_decisions and key in rubric_decisions:
            rws.cell(row, rcol["decision"]).value = rubric_decisions[key]
    wb.save(sheet)


def test_export_layout(ds, tmp_path: Path) -> None:
    t1, t2 = ds.tasks
    ctx = ReviewContext(
        lint={t2.id: {"rubrics[2].criterion[0]": ["OB1 (error): vague"]}},
        solve={t1.id: {"1.1": (0, 3)}},
        oracle={t1.id: {"0.0": "pass"}},
        decoys={t1.id: {"0.1": ["trusts_ap_note: expected fail, check fail"]}},
    )
    out = export_review(ds, tmp_path / "out" / "review.xlsx", ctx)
    wb = load_workbook(out)
    assert wb.sheetnames == ["criteria", "rubrics", "README"]
    ws = wb["criteria"]
    rows = list(ws.iter_rows(values_only=True))
    assert list(rows[0]) == list(CRITERIA_COLUMNS)
    assert len(rows) == 1 + 12  # 6 criteria per task
    by = {(r[0], r[1], r[5]): dict(zip(CRITERIA_COLUMNS, r)) for r in rows[1:]}
    r = by[(t1.id, 1, 1)]
    assert (
        r["criterion text"] == t1.rubrics[1].criteria[1].text
        and r["weight"] == 4
        and r["rubric id"] == "memo"
    )
    assert r["solve passes"] == "0/3" and json.loads(r["check"])["kind"] == "number"
    assert by[(t1.id, 0, 0)]["oracle"] == "pass"
    assert by[(t1.id, 0, 1)]["decoys"] == "trusts_ap_note: expected fail, check fail"
    assert by[(t2.id, 2, 0)]["lint"] == "OB1 (error): vague"
    assert all(by[k]["decision"] is None for k in by)
    (dv,) = ws.data_validations.dataValidation
    assert dv.formula1 == '"keep,edit,prune"' and str(dv.sqref) == "M2:M13"
    assert ws.column_dimensions["P"].hidden  # fingerprint
    rws = wb["rubrics"]
    rrows = list(rws.iter_rows(values_only=True))
    assert list(rrows[0]) == list(RUBRIC_COLUMNS) and len(rrows) == 1 + 6
    first = dict(zip(RUBRIC_COLUMNS, rrows[1]))
    assert first["required by"] == "1" and dict(zip(RUBRIC_COLUMNS, rrows[2]))["requires"] == "0"
    (rdv,) = rws.data_validations.dataValidation
    assert rdv.formula1 == '"keep,prune"'


def test_apply_prune_edit_keep(ds, tmp_path: Path) -> None:
    t1, t2 = ds.tasks
    sheet = export_review(ds, tmp_path / "review.xlsx")
    before_t2 = (t2.root / "RUBRICS.json").read_bytes()
    new_text = "The memo summary.md states that the ledger is the source it relies on."
    fill(
        sheet,
        {
            (t1.id, 0, 0): ("prune", "", "duplicated by the difference check"),
            (t1.id, 2, 1): ("edit", new_text, "wording"),
            (t1.id, 1, 0): ("keep", "", "fine"),
        },
    )
    res = apply_review(ds, sheet)
    doc = json.loads((t1.root / "RUBRICS.json").read_text())
    r0, r1, r2 = doc["rubrics"]
    assert r0["criterion"] == [t1.rubrics[0].criteria[1].text]
    assert [c["kind"] for c in r0["checks"]] == ["csv_value"]  # checks stay aligned
    assert (
        r0["id"] == "recon"
        and r0["files"] == ["reconciliation.csv"]
        and r1["requires"] == ["recon"]
    )
    assert r2["criterion"][1] == new_text and r2["checks"][1]["pattern"] == "trust the ledger"
    assert (t2.root / "RUBRICS.json").read_bytes() == before_t2
    assert [
        (t.task_id, [(c.action, c.rubric, c.criterion) for c in t.changes]) for t in res.tasks
    ] == [(t1.id, [("prune", 0, 0), ("edit", 2, 1)])]
    assert res.kept == 10 and res.comments == [
        {"task": t1.id, "where": "rubrics[1].criterion[0]", "comment": "fine"}
    ]
    md = (tmp_path / "review.changelog.md").read_text()
    assert "**prune** rubrics[0].criterion[0]" in md and "duplicated by the difference check" in md
    assert f"→ {new_text}" in md
    js = json.loads((tmp_path / "review.changelog.json").read_text())
    assert js["tasks"][0]["sha256_after"] != js["tasks"][0]["sha256_before"]
    assert load_task(t1.root).criterion_count == 5
    assert res.changelog == [
        str(tmp_path / "review.changelog.md"),
        str(tmp_path / "review.changelog.json"),
    ]


def test_changelog_path_option(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {(t1.id, 0, 0): ("prune", "", "")})
    apply_review(ds, sheet, changelog=tmp_path / "logs" / "round1.md")
    assert (tmp_path / "logs" / "round1.md").is_file() and (
        tmp_path / "logs" / "round1.json"
    ).is_file()


def _assert_refused(ds, sheet: Path, *messages: str) -> None:
    before = {t.id: (t.root / "RUBRICS.json").read_bytes() for t in ds.tasks}
    with pytest.raises(ReviewError) as err:
        apply_review(ds, sheet)
    text = "\n".join(err.value.problems)
    for m in messages:
        assert m in text, text
    assert {t.id: (t.root / "RUBRICS.json").read_bytes() for t in ds.tasks} == before
    assert not sheet.with_name(sheet.stem + ".changelog.md").exists()


def test_refuses_emptying_a_rubric(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {(t1.id, 2, 0): ("prune", "", ""), (t1.id, 2, 1): ("prune", "", "")})
    _assert_refused(ds, sheet, "prune every criterion of rubrics[2]")


def test_refuses_breaking_a_requires_chain(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {}, {(t1.id, 0): "prune"})
    _assert_refused(ds, sheet, "pruning rubrics[0] breaks the requires chain of kept rubrics[1]")


def test_prune_rubric_renumbers_integer_requires(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    del spec.rubrics["rubrics"][1]["requires"]
    spec.rubrics["rubrics"][2]["requires"] = [1]
    t = fx.write_task(tmp_path / "ds", spec)
    ds = load_dataset(tmp_path / "ds")
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {}, {(t.id, 0): "prune"})
    res = apply_review(ds, sheet)
    doc = json.loads((t.root / "RUBRICS.json").read_text())
    assert [r.get("id") for r in doc["rubrics"]] == ["memo", None] and doc["rubrics"][1][
        "requires"
    ] == [0]
    assert res.tasks[0].requires_renumbered and res.tasks[0].changes[0].action == "prune-rubric"
    assert load_task(t.root).rubrics[1].requires == [0]


def test_refuses_pruning_every_rubric(tmp_path: Path, fx) -> None:
    t = fx.write_task(tmp_path / "ds", fx.clean_spec())
    ds = load_dataset(tmp_path / "ds")
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {}, {(t.id, 0): "prune", (t.id, 1): "prune", (t.id, 2): "prune"})
    _assert_refused(ds, sheet, "prune every rubric")


@pytest.mark.parametrize(
    "decision, message",
    [
        (("delete", "", ""), "decision 'delete' is not one of keep, edit, prune"),
        (("edit", "", ""), "decision 'edit' needs the new text"),
        (("keep", "new words", ""), "'edited text' is filled in but the decision is 'keep'"),
    ],
)
def test_refuses_bad_rows_naming_the_row(ds, tmp_path: Path, decision, message) -> None:
    t1 = ds.tasks[0]
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {(t1.id, 0, 1): decision, (t1.id, 1, 0): ("prune", "", "")})
    _assert_refused(
        ds, sheet, "criteria!row 3: " + message
    )  # row 1 header, row 2 = 0.0, row 3 = 0.1


def test_refuses_a_sheet_from_an_older_rubric(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {(t1.id, 0, 0): ("prune", "", "")})
    doc = json.loads((t1.root / "RUBRICS.json").read_text())
    doc["rubrics"][0]["criterion"][0] = "The file reconciliation.csv lists Acme Supplies."
    (t1.root / "RUBRICS.json").write_text(json.dumps(doc))
    ds2 = load_dataset(ds.root)
    _assert_refused(ds2, sheet, "changed since the export (fingerprint mismatch)")


def test_all_or_nothing_across_tasks(ds, tmp_path: Path) -> None:
    t1, t2 = ds.tasks
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(
        sheet,
        {
            (t1.id, 0, 0): ("prune", "", ""),
            (t2.id, 2, 0): ("prune", "", ""),
            (t2.id, 2, 1): ("prune", "", ""),
        },
    )
    _assert_refused(ds, sheet, "prune every criterion of rubrics[2]")


def test_dry_run_writes_nothing(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    before = (t1.root / "RUBRICS.json").read_bytes()
    sheet = export_review(ds, tmp_path / "review.xlsx")
    fill(sheet, {(t1.id, 0, 0): ("prune", "", "")})
    res = apply_review(ds, sheet, dry_run=True)
    assert res.dry_run and res.changelog == [] and len(res.tasks[0].changes) == 1
    assert (t1.root / "RUBRICS.json").read_bytes() == before
    assert not (tmp_path / "review.changelog.md").exists()


def test_cli_round_trip(ds, tmp_path: Path) -> None:
    t1 = ds.tasks[0]
    runner = CliRunner()
    sheet = tmp_path / "r.xlsx"
    res = runner.invoke(app, ["review", "export", str(ds.root), "--out", str(sheet), "--no-decoys"])
    assert res.exit_code == 0, res.output
    assert "12 criteria in 2 task(s)" in res.output
    # the lint column is filled by the CLI
    rows = list(load_workbook(sheet)["criteria"].iter_rows(values_only=True))
    lint = {(r[0], r[1], r[5]): r[8] for r in rows[1:]}
    assert lint[(ds.tasks[1].id, 2, 0)].startswith("OB1 (error):")
    fill(sheet, {(t1.id, 2, 0): ("prune", "", ""), (t1.id, 2, 1): ("prune", "", "")})
    res = runner.invoke(app, ["review", "apply", str(ds.root), str(sheet)])
    assert res.exit_code == 1 and "nothing was written" in res.output
    fill(sheet, {(t1.id, 2, 0): ("prune", "", ""), (t1.id, 2, 1): ("keep", "", "")})
    res = runner.invoke(app, ["review", "apply", str(ds.root), str(sheet)])
    assert res.exit_code == 0, res.output
    assert f"{t1.id} prune rubrics[2].criterion[0]" in res.output
    assert load_task(t1.root).criterion_count == 5
