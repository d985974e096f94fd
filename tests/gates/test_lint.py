"""Each lint rule: a fixture task whose criterion trips it, and one that passes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.gates import LINT_RULES, LintContext, lint_task, lint_text, rules_for

REGEX = {"kind": "regex", "pattern": "understat", "file": "summary.md"}

# rule id -> (tripping criterion, passing criterion, check for both or "keep")
CASES: dict[str, list[tuple[str, str, object]]] = {
    "SC1": [
        (
            "As mentioned above, the memo summary.md gives the overpayment in US dollars.",
            "The memo summary.md gives the overpayment in US dollars.",
            "keep",
        ),
        (
            "The memo summary.md repeats the figure from the previous criterion.",
            "The memo summary.md repeats the overpayment of $1,250.00.",
            "keep",
        ),
        (
            "The memo summary.md agrees with criterion 2.",
            "The memo summary.md names Acme Supplies.",
            "keep",
        ),
        (
            "The memo summary.md names the latter as the vendor paid twice.",
            "The memo summary.md names Acme Supplies as the vendor paid twice.",
            "keep",
        ),
    ],
    "SC2": [
        (
            "It says that the accounts payable note understates the duplicate amount.",
            "The memo summary.md says that the accounts payable note understates the duplicate "
            "amount.",
            "keep",
        ),
        (
            "This value is the amount paid twice to Acme Supplies.",
            "The memo summary.md gives $1,250.00 as the amount paid twice to Acme Supplies.",
            "keep",
        ),
    ],
    "BI1": [
        (
            "To what extent does the memo summary.md explain the conflict?",
            "The memo summary.md explains that the ledger and the accounts payable note disagree.",
            "keep",
        ),
        (
            "The memo summary.md partially explains the conflict with the accounts payable note.",
            "The memo summary.md names the accounts payable note as the understated source.",
            "keep",
        ),
        (
            "Rate the memo summary.md on a 1-5 scale for accuracy.",
            "The memo summary.md states the overpayment in US dollars.",
            "keep",
        ),
    ],
    "OB1": [
        (
            "The memo summary.md uses appropriate language for an auditor.",
            "The memo summary.md uses the term duplicate payment.",
            "keep",
        ),
        (
            "The memo summary.md is professional.",
            "The memo summary.md is addressed to the audit team.",
            "keep",
        ),
        (
            "The memo summary.md gives a good explanation of the conflict.",
            "The memo summary.md gives an explanation of the conflict (which source is wrong and "
            "why).",
            "keep",
        ),
    ],
    "OB2": [
        (
            "The memo summary.md clearly states that the ledger is the trusted source.",
            "The memo summary.md states that the ledger is the trusted source.",
            "keep",
        ),
    ],
    "UN1": [
        (
            "The memo summary.md reports 1250 as the overpayment.",
            "The memo summary.md reports 1250 US dollars as the overpayment.",
            "keep",
        ),
    ],
    "UN2": [
        (
            "The memo summary.md gives an overpayment of approximately $1,250.",
            "The memo summary.md gives an overpayment of $1,250 within $1.",
            "keep",
        ),
        (
            "The memo summary.md gives an overpayment of about $1,250.",
            "The memo summary.md is about the March payments.",
            "keep",
        ),
    ],
    "UN3": [
        (
            "The memo summary.md states the overpayment is $1,250.00 and identifies Acme Supplies "
            "as the vendor.",
            "The memo summary.md identifies Acme Supplies and Birch Logistics as vendors.",
            "keep",
        ),
    ],
    "UN4": [
        (
            "The memo summary.md gives the duplicate share of March payments as 36.9%.",
            "The memo summary.md gives the duplicate share of March payments as 36.9% (rounded to "
            "one decimal).",
            "keep",
        ),
    ],
    "EX1": [
        (
            'The memo summary.md has a heading titled "Duplicate Payment Finding".',
            'The memo summary.md mentions the vendor "Acme Supplies".',
            "keep",
        ),
        (
            'The file reconciliation.csv has a column named "Variance".',
            'The file reconciliation.csv has a column named "difference".',
            "keep",
        ),
    ],
    "EX2": [
        (
            "The first sentence of summary.md names Acme Supplies.",
            "The memo summary.md names Acme Supplies.",
            "keep",
        ),
        (
            "Cell B2 of reconciliation.csv holds 1250.00 US dollars.",
            "The file reconciliation.csv holds $1,250.00 for Acme Supplies.",
            "keep",
        ),
    ],
    "CK1": [
        (
            "The memo summary.md states a total overpayment of $1,520.00.",
            "The memo summary.md states a total overpayment of $1,250.00.",
            {"kind": "number", "value": 1250.0, "abs_tol": 0.01, "file": "summary.md"},
        ),
        (
            "The memo summary.md gives the duplicate share as 39% of March payments.",
            "The memo summary.md gives the duplicate share as 36.9% (±0.1) of March payments.",
            {
                "kind": "number",
                "value": 0.369,
                "abs_tol": 0.001,
                "percent": True,
                "file": "summary.md",
            },
        ),
    ],
}


def _cases():
    for rule, items in CASES.items():
        for k, (bad, good, check) in enumerate(items):
            yield pytest.param(rule, bad, good, check, id=f"{rule}-{k}")


@pytest.mark.parametrize("rule, bad, good, check", list(_cases()))
def test_rule_trips_and_passes(tmp_path: Path, fx, rule, bad, good, check) -> None:
    bad_task = fx.write_task(tmp_path / "bad", fx.with_criterion(fx.clean_spec(), bad, check=check))
    good_task = fx.write_task(
        tmp_path / "good", fx.with_criterion(fx.clean_spec(), good, check=check)
    )
    bad_found = [f for f in lint_task(bad_task) if f.rule == rule]
    assert len(bad_found) >= 1, f"{rule} did not trip on {bad!r}"
    f = bad_found[0]
    assert f.where == "rubrics[2].criterion[0]" and f.file.endswith("RUBRICS.json")
    assert f.hint and f.task_id == bad_task.id
    assert lint_task(good_task) == [], f"{good!r} should pass every rule"


def test_clean_fixture_passes_lint(clean_task) -> None:
    assert lint_task(clean_task) == []


def test_every_lint_rule_has_cases() -> None:
    assert sorted(CASES) == sorted(LINT_RULES) == sorted(r.id for r in rules_for("lint"))


def test_rubric_question_is_checked_for_scales(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][2]["rubric"] = "How well does the memo resolve the conflict?"
    found = lint_task(fx.write_task(tmp_path, spec))
    assert [(f.rule, f.where) for f in found] == [("BI1", "rubrics[2].rubric")]


def test_terms_of_art_and_anchors_are_not_vague() -> None:
    for text in (
        "The memo says the firm is in good standing with the state bar.",
        "The memo lists professional fees of $3,000.",
        "The memo states the effective date of the lease as 1 July 2024.",
        "The chart uses an appropriate type, i.e. a bar or line chart.",
    ):
        assert lint_text(text, rules=["OB1"]) == [], text


def test_units_ranges_years_and_indexes() -> None:
    ok = [
        "Between 2019 and 2023 the county issued 1,204 permits.",
        "Row 5 of the table is removed.",
        "The lease runs 3-year terms.",
        "The variance is between 10 and 20 days.",
        "The memo asks for follow-up on the returned check 2207.",
        "The net amount due is $224.23 (38.60 + 325.62 - 139.99).",
        "The mean violent crime rate is 392.7 per 100,000 residents.",
        "The file gives United an on-time rate of 0.770.",
        "The memo gives a Pearson correlation of r = 0.305.",
    ]
    for text in ok:
        assert lint_text(text, rules=["UN1"]) == [], text
    assert [r for r, _, _ in lint_text("The total is 42.", rules=["UN1"])] == ["UN1"]
    assert [r for r, _, _ in lint_text("The ratio is 42 and the total is 17.", rules=["UN1"])] == [
        "UN1"
    ]


def test_asides_do_not_make_a_criterion_compound() -> None:
    text = (
        "mix_evaluation.csv gives M-06 a 28-day strength of 41.54 MPa (6,025 psi converted; within "
        "0.05 MPa)."
    )
    assert lint_text(text, rules=["UN3", "UN4"]) == []
    assert (
        lint_text(
            "The memo warns that the Q3 2013 figures use the v1.0 definition and are not "
            "comparable.",
            rules=["UN3"],
        )
        == []
    )


def test_check_numbers_stated_in_thousands() -> None:
    from jobbench.tasks import CsvValueCheck

    chk = CsvValueCheck(
        kind="csv_value", column="rmse_thousand", expect={"equals": 2901.68, "rel_tol": 0.005}
    )
    text = "forecast_metrics.csv gives A10 an RMSE of 2,901.7 thousand scripts (within 0.5 %)."
    assert lint_text(text, LintContext(check=chk), rules=["CK1"]) == []
    assert (
        lint_text(text.replace("2,901.7", "3,901.7"), LintContext(check=chk), rules=["CK1"]) != []
    )


def test_check_text_mismatch_handles_scale_words_and_percent() -> None:
    from jobbench.tasks import NumberCheck

    million = NumberCheck(kind="number", value=1_200_000, rel_tol=0.01)
    assert lint_text("Revenue is $1.2 million.", LintContext(check=million), rules=["CK1"]) == []
    assert lint_text("Revenue is $2.1 million.", LintContext(check=million), rules=["CK1"]) != []
    frac = NumberCheck(kind="number", value=0.202, percent=True)
    assert lint_text("Margin is 20.2%.", LintContext(check=frac), rules=["CK1"]) == []


def test_lint_text_rule_subset_and_order() -> None:
    text = "It is approximately 42."
    assert [(r, s) for r, _, s in lint_text(text)] == [
        ("SC2", "warning"),
        ("UN1", "warning"),
        ("UN2", "error"),
    ]
    assert [r for r, _, _ in lint_text(text, rules=["UN2"])] == ["UN2"]


def test_soft_quality_words_are_warnings(tmp_path: Path, fx) -> None:
    spec = fx.with_criterion(
        fx.clean_spec(), "The memo summary.md gives a comprehensive account of the duplicate."
    )
    (f,) = lint_task(fx.write_task(tmp_path, spec))
    assert (f.rule, f.severity) == (
        "OB1",
        "warning",
    ) and f.message == "“comprehensive” is a judgement with no stated yardstick"
    assert lint_text("The memo is comprehensive.")[0][2] == "warning"
    assert lint_text("The memo is professional.")[0][2] == "error"


def test_quoted_values_are_not_label_traps() -> None:
    assert lint_text('The difference column shows "1,250.00" for Acme.', rules=["EX1"]) == []
    assert lint_text('The "Variance" column is present.', rules=["EX1"]) != []
    assert (
        lint_text(
            'The "Variance" column is present.',
            LintContext(instructions="add a Variance column"),
            rules=["EX1"],
        )
        == []
    )


def test_count_check_compares_counts_not_amounts() -> None:
    # the sample's bookkeeping easy task1 rubrics[4]: a count of the rows whose amount is the
    # figure in the sentence; the check's 1 is the "one" entry, not the amount
    from jobbench.tasks import CsvValueCheck

    chk = CsvValueCheck(
        kind="csv_value",
        file="adjusting_entries.csv",
        column="entry",
        where={"amount": "-862.15"},
        aggregate="count",
        expect={"equals": 1},
    )
    text = "adjusting_entries.csv has one entry of -$862.15 (the Hartwell Mutual auto-debit)."
    assert lint_text(text, LintContext(check=chk), rules=["CK1"]) == []
    # a sentence stating only the amount states no count: nothing to compare
    bare = "adjusting_entries.csv has an entry of -$862.15."
    assert lint_text(bare, LintContext(check=chk), rules=["CK1"]) == []
    # a stated count that differs from the check's count is still a mismatch
    ((rid, msg, _),) = lint_text(
        text.replace("one entry", "two entries"), LintContext(check=chk), rules=["CK1"]
    )
    assert rid == "CK1" and "expects a count of 1" in msg and "two" in msg
    three = "adjusting_entries.csv has 3 entries of -$862.15."
    ((_, msg3, _),) = lint_text(three, LintContext(check=chk), rules=["CK1"])
    assert "3" in msg3
    ok3 = chk.model_copy(update={"expect": chk.expect.model_copy(update={"equals": 3})})
    assert lint_text(three, LintContext(check=ok3), rules=["CK1"]) == []
