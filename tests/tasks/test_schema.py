"""The shipped JSON Schema agrees with the loader wherever JSON Schema can state a rule."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from jobbench.tasks import (
    CHECK_KINDS,
    CsvValueCheck,
    Expect,
    FileExistsCheck,
    JsonPathCheck,
    NumberCheck,
    RegexCheck,
    SqliteQueryCheck,
    XlsxCellCheck,
    parse_rubrics,
    rubrics_schema,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
SCHEMA = rubrics_schema()
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
INVALID = FIXTURES / "invalid/dataset/main/lawyers"

# invalid fixture tasks whose RUBRICS.json breaks a rule JSON Schema can state
SCHEMA_REJECTS = {
    "task1",
    "task2",
    "task3",
    "task5",
    "task6",
    "task12",
    "task13",
    "task14",
    "task21",
    "task22",
    "task24",
}
# rules only the loader can check: NaN (not JSON), requires targets, cycles, checks length, unique ids
LOADER_ONLY = {"task4", "task9", "task10", "task11", "task20"}
# the RUBRICS.json is fine; the task is invalid for other reasons (files, cards, encoding)
RUBRICS_FINE = {"task7", "task8", "task16", "task17", "task18", "task23"}


def _load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_valid_fixture_is_accepted() -> None:
    files = sorted((FIXTURES / "public").rglob("RUBRICS.json")) + sorted(
        (FIXTURES / "hf").rglob("RUBRICS.json")
    )
    assert len(files) == 8
    for f in files:
        assert list(VALIDATOR.iter_errors(_load(f))) == [], f


def test_invalid_fixtures_split_between_schema_and_loader() -> None:
    names = {
        p.name
        for p in INVALID.iterdir()
        if (p / "RUBRICS.json").is_file() and p.name.startswith("task")
    }
    names.discard("task15")  # not JSON at all
    names.discard("task01")  # misnamed directory, valid rubrics
    assert names == SCHEMA_REJECTS | LOADER_ONLY | RUBRICS_FINE
    for name in sorted(names):
        doc = _load(INVALID / name / "RUBRICS.json")
        schema_ok = VALIDATOR.is_valid(doc)
        loader_ok = not parse_rubrics(doc, "R.json")[2]
        if name in SCHEMA_REJECTS:
            assert (schema_ok, loader_ok) == (False, False), name
        elif name in LOADER_ONLY:
            assert (schema_ok, loader_ok) == (True, False), name
        else:
            assert (schema_ok, loader_ok) == (True, True), name


def ok(**kw):
    return {"rubric": "q", "weight": 1, "criterion": ["c"], **kw}


@pytest.mark.parametrize(
    "doc, valid",
    [
        ({"rubrics": [], "evaluation_rubrics": [ok()]}, True),
        ({"rubrics": [ok()], "evaluation_rubrics": "ignored"}, True),
        ({"evaluation_rubrics": []}, False),
        ({"rubrics": [ok(rubric="   ")]}, False),
        ({"rubrics": [ok(weight=0)]}, False),
        ({"rubrics": [ok(weight=0), ok(weight=0.5)]}, True),
        ({"rubrics": [ok(unknown_key={"x": 1})], "notes": "extra"}, True),
        ({"rubrics": [ok(vision=None, files=None)]}, True),
        ({"rubrics": [ok(files=["~/x"])]}, False),
        ({"rubrics": [ok(files=["a..b/*.md"])]}, True),
        ({"rubrics": [ok(requires=[-1])]}, False),
        ({"rubrics": [ok(checks=[None])]}, True),
        ({"rubrics": [ok(checks=[{"kind": "regex", "pattern": "("}])]}, False),
        ({"rubrics": [ok(checks=[{"kind": "regex", "pattern": "x", "min_count": 0}])]}, False),
        (
            {
                "rubrics": [
                    ok(
                        checks=[
                            {
                                "kind": "xlsx_cell",
                                "cell": "B2",
                                "find": "T",
                                "expect": {"equals": 1},
                            }
                        ]
                    )
                ]
            },
            False,
        ),
        (
            {
                "rubrics": [
                    ok(checks=[{"kind": "xlsx_cell", "cell": "B0", "expect": {"equals": 1}}])
                ]
            },
            False,
        ),
        (
            {
                "rubrics": [
                    ok(
                        checks=[
                            {
                                "kind": "xlsx_cell",
                                "cell": None,
                                "find": "Total",
                                "expect": {"equals": 1},
                            }
                        ]
                    )
                ]
            },
            True,
        ),
        (
            {
                "rubrics": [
                    ok(
                        checks=[
                            {
                                "kind": "json_path",
                                "path": "a",
                                "expect": {"equals": 1, "contains": "x"},
                            }
                        ]
                    )
                ]
            },
            False,
        ),
        (
            {
                "rubrics": [
                    ok(checks=[{"kind": "json_path", "path": "a", "expect": {"any_of": []}}])
                ]
            },
            False,
        ),
        (
            {
                "rubrics": [
                    ok(
                        checks=[
                            {
                                "kind": "csv_value",
                                "column": "c",
                                "where": {"y": 2020},
                                "expect": {"equals": 1},
                            }
                        ]
                    )
                ]
            },
            False,
        ),
        ({"rubrics": [ok(checks=[{"kind": "number", "value": True}])]}, False),
        ({"rubrics": [ok(checks=[{"kind": "file_exists"}])]}, False),
    ],
)
def test_schema_and_loader_agree(doc, valid) -> None:
    assert VALIDATOR.is_valid(doc) is valid
    assert (not parse_rubrics(doc, "R.json")[2]) is valid


def test_check_kinds_equal_CHECK_KINDS() -> None:
    kinds = [
        SCHEMA["$defs"][ref["$ref"].split("/")[-1]]["properties"]["kind"]["const"]
        for ref in SCHEMA["$defs"]["check"]["oneOf"]
    ]
    assert tuple(kinds) == CHECK_KINDS


MODELS: dict[str, type[BaseModel]] = {
    "number": NumberCheck,
    "regex": RegexCheck,
    "file_exists": FileExistsCheck,
    "xlsx_cell": XlsxCellCheck,
    "csv_value": CsvValueCheck,
    "sqlite_query": SqliteQueryCheck,
    "json_path": JsonPathCheck,
}


@pytest.mark.parametrize("kind", CHECK_KINDS)
def test_check_fields_match_the_models(kind: str) -> None:
    model = MODELS[kind]
    schema = SCHEMA["$defs"][f"check_{kind}"]
    assert set(schema["properties"]) == set(model.model_fields)
    assert set(schema["required"]) == {n for n, f in model.model_fields.items() if f.is_required()}


def test_expect_fields_match_the_model() -> None:
    assert set(SCHEMA["$defs"]["expect"]["properties"]) == set(Expect.model_fields)
