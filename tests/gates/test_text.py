from jobbench.gates._text import (
    containment,
    file_mentions,
    glob_matches,
    ngrams,
    numbers,
    same_file,
    words,
)


def test_file_mentions_known_quoted_bare_and_urls() -> None:
    text = (
        'Read "Q3 report final.pdf" and budget.xlsx, see https://data.cdc.gov/a.csv; '
        "save out/summary.csv and use Vendor List.csv. Ignore *.tmp and e.g. v1.2."
    )
    got = [(m.name, m.quoted) for m in file_mentions(text, known=["data/Vendor List.csv"])]
    assert got == [
        ("Q3 report final.pdf", True),
        ("budget.xlsx", False),
        ("out/summary.csv", False),
        ("Vendor List.csv", False),
    ]


def test_same_file_and_glob_matches() -> None:
    assert same_file("output/summary.csv", "summary.csv")
    assert same_file("Summary.CSV", "summary.csv")
    assert not same_file("a/summary.csv", "b/summary.csv")
    assert glob_matches("*.xlsx", "reports/q3.xlsx")
    assert glob_matches("reports/*.xlsx", "reports/q3.xlsx")
    assert not glob_matches("reports/*.xlsx", "q3.xlsx")
    assert glob_matches("**/q3.xlsx", "q3.xlsx")


def test_numbers_values_units_and_exclusions() -> None:
    toks = numbers(
        "Paid $1,234.50 and 20.2% to 3 vendors in 2024 (Q3, A1, 2024-03-01, 3/1/2024); "
        "loss (1,200) and $1.2 million"
    )
    got = [
        (t.text, t.value, t.decimals, t.currency, t.percent, t.is_year, t.next_word) for t in toks
    ]
    assert got == [
        ("$1,234.50", 1234.5, 2, True, False, False, "and"),
        ("20.2%", 20.2, 1, False, True, False, "to"),
        ("3", 3.0, 0, False, False, False, "vendors"),
        ("2024", 2024.0, 0, False, False, True, ""),
        ("(1,200)", -1200.0, 0, False, False, False, "and"),
        ("$1.2", 1_200_000.0, 1, True, False, False, "million"),
    ]


def test_ngrams_and_containment() -> None:
    a = ngrams(words("The total overpayment is $1,250.00"), 3)
    assert ("total", "overpayment", "is") in a and len(a) == 5  # the total overpayment is 1 250 00
    b = ngrams(words("so the total overpayment is 1 250 here"), 3)
    assert containment(a, b) == 4 / 5
    assert containment(set(), b) == 0.0
    assert ngrams(["a", "b"], 3) == set()
