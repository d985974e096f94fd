"""parse_rubrics edge cases: each rule yields its own JSON path and message."""

import json
from pathlib import Path

import pytest

from jobbench.tasks import TaskLoadError, load_dataset, load_task, parse_rubrics

F = "R.json"
CRIT = ["The memo states 14 March 2025."]


def ok(**kw):
    return {"rubric": "Is the deadline right?", "weight": 5, "criterion": CRIT, **kw}


def msgs(doc) -> list[str]:
    return [str(p) for p in parse_rubrics(doc, F)[2]]


def test_document_shape() -> None:
    assert msgs([1]) == ["R.json: $: must be a JSON object, got [1]"]
    assert msgs({"items": []}) == [
        "R.json: $: missing key 'rubrics' (or fallback 'evaluation_rubrics')"
    ]
    assert msgs({"evaluation_rubrics": []}) == [
        "R.json: evaluation_rubrics: must be a non-empty list, got []"
    ]
    assert msgs({"rubrics": {"a": 1}}) == [
        'R.json: rubrics: must be a non-empty list, got {"a": 1}'
    ]


def test_key_choice_follows_the_public_judge() -> None:
    # data.get("rubrics") or data.get("evaluation_rubrics")
    rubrics, key, problems = parse_rubrics({"rubrics": [], "evaluation_rubrics": [ok(weight=3)]}, F)
    assert (key, problems, [r.weight for r in rubrics]) == ("evaluation_rubrics", [], [3.0])
    rubrics, key, problems = parse_rubrics(
        {"rubrics": [ok(weight=2)], "evaluation_rubrics": "junk"}, F
    )
    assert (key, problems, [r.weight for r in rubrics]) == ("rubrics", [], [2.0])
    assert msgs({"rubrics": None, "evaluation_rubrics": None}) == [
        "R.json: rubrics: must be a non-empty list, got null"
    ]


def test_items_that_are_not_objects_or_are_empty() -> None:
    assert msgs({"rubrics": [5, ok()]}) == ["R.json: rubrics[0]: must be an object, got 5"]
    assert msgs({"rubrics": [{}, ok()]}) == [
        "R.json: rubrics[0].rubric: must be a non-empty string, got null",
        "R.json: rubrics[0].weight: must be a finite number ≥ 0, got null",
        "R.json: rubrics[0].criterion: must be a non-empty list of strings, got null",
    ]


@pytest.mark.parametrize(
    "weight, shown",
    [
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (False, "false"),
        ([1], "[1]"),
        (-0.5, "-0.5"),
    ],
)
def test_bad_weights(weight, shown) -> None:
    assert msgs({"rubrics": [ok(), ok(weight=weight)]}) == [
        f"R.json: rubrics[1].weight: must be a finite number ≥ 0, got {shown}"
    ]


def test_huge_integer_weight_is_not_finite_as_a_float() -> None:
    (m,) = msgs({"rubrics": [ok(weight=10**400)]})
    assert m.startswith(
        "R.json: rubrics[0].weight: must be a finite number ≥ 0, got 1000"
    ) and m.endswith("...")


def test_weights_keep_exact_values() -> None:
    rubrics, _, problems = parse_rubrics(
        {"rubrics": [ok(weight=0), ok(weight=2.5), ok(weight=7)]}, F
    )
    assert problems == [] and [r.weight for r in rubrics] == [0.0, 2.5, 7.0]


def test_ids_and_default_id_collisions() -> None:
    assert msgs({"rubrics": [ok(id="1"), ok()]}) == [
        'R.json: rubrics[0].id: id "1" is also the default id of rubrics[1], which has no id; choose a non-numeric id'
    ]
    rubrics, _, problems = parse_rubrics({"rubrics": [ok(id="1"), ok(id="first")]}, F)
    assert problems == [] and [r.id for r in rubrics] == ["1", "first"]
    assert msgs({"rubrics": [ok(id=""), ok(id=3)]}) == [
        'R.json: rubrics[0].id: must be a non-empty string, got ""',
        "R.json: rubrics[1].id: must be a non-empty string, got 3",
    ]


def test_requires_resolution() -> None:
    rubrics, _, problems = parse_rubrics(
        {"rubrics": [ok(), ok(id="b"), ok(requires=[1, 1, "b", 0])]}, F
    )
    assert problems == [] and rubrics[2].requires == [1, 0]
    assert msgs({"rubrics": [ok(requires=[0]), ok(requires=[True]), ok(requires="b")]}) == [
        "R.json: rubrics[0].requires[0]: a rubric cannot require itself",
        "R.json: rubrics[1].requires[0]: unknown rubric true (give an existing id or a 0-based index below 3)",
        'R.json: rubrics[2].requires: must be a list of rubric ids or indexes, got "b"',
    ]
    # a string never resolves to an index: "0" is not an id here
    assert msgs({"rubrics": [ok(), ok(requires=["0"])]}) == [
        'R.json: rubrics[1].requires[0]: unknown rubric "0" (give an existing id or a 0-based index below 2)'
    ]


def test_long_chains_and_long_cycles_without_recursion() -> None:
    n = 5000
    chain = [ok()] + [ok(requires=[i - 1]) for i in range(1, n)]
    rubrics, _, problems = parse_rubrics({"rubrics": chain}, F)
    assert problems == [] and rubrics[-1].requires == [n - 2]
    cycle = [ok(requires=[n - 1])] + chain[1:]
    (m,) = msgs({"rubrics": cycle})
    assert m.startswith(
        "R.json: rubrics[0].requires: requires chain forms a cycle: rubrics[0] → rubrics[4999] → rubrics[4998]"
    )
    assert m.endswith("rubrics[1] → rubrics[0]") and m.count("→") == n


def test_two_separate_cycles_are_both_reported() -> None:
    doc = {"rubrics": [ok(requires=[1]), ok(requires=[0]), ok(requires=[3]), ok(requires=[2])]}
    assert msgs(doc) == [
        "R.json: rubrics[0].requires: requires chain forms a cycle: rubrics[0] → rubrics[1] → rubrics[0]",
        "R.json: rubrics[2].requires: requires chain forms a cycle: rubrics[2] → rubrics[3] → rubrics[2]",
    ]


@pytest.mark.parametrize(
    "check, expected",
    [
        ("x", ['R.json: rubrics[0].checks[0]: must be a check object or null, got "x"']),
        (
            {"pattern": "x"},
            [
                "R.json: rubrics[0].checks[0].kind: missing (known kinds: number, regex, file_exists, "
                "xlsx_cell, csv_value, sqlite_query, json_path)"
            ],
        ),
        (
            {"kind": "xlsx_cell", "cell": "B2", "find": "Total", "expect": {"equals": 1}},
            ["R.json: rubrics[0].checks[0]: exactly one of cell, find must be given"],
        ),
        (
            {"kind": "xlsx_cell", "cell": "B0", "expect": {"equals": 1}},
            ["R.json: rubrics[0].checks[0]: cell must be an A1 reference such as B7, got 'B0'"],
        ),
        (
            {"kind": "regex", "pattern": "("},
            [
                "R.json: rubrics[0].checks[0].pattern: invalid regular expression: missing ), unterminated subpattern at position 0"
            ],
        ),
        (
            {"kind": "number", "value": float("nan")},
            ["R.json: rubrics[0].checks[0].value: Input should be a finite number, got NaN"],
        ),
        (
            {"kind": "number", "value": True},
            ["R.json: rubrics[0].checks[0].value: Input should be a valid number, got true"],
        ),
        ({"kind": "number"}, ["R.json: rubrics[0].checks[0].value: required field missing"]),
        (
            {"kind": "json_path", "path": "a.b", "expect": {"equals": 1, "contains": "x"}},
            [
                "R.json: rubrics[0].checks[0].expect: exactly one of equals, any_of, contains must be given"
            ],
        ),
        (
            {"kind": "csv_value", "column": "rent", "aggregate": "median", "expect": {"equals": 1}},
            [
                "R.json: rubrics[0].checks[0].aggregate: Input should be 'sum', 'mean', 'min', 'max', 'count' or 'nunique', got \"median\""
            ],
        ),
        (
            {"kind": "file_exists", "file": "a/../../b"},
            [
                'R.json: rubrics[0].checks[0].file: must be a glob inside the deliverables, got "a/../../b"'
            ],
        ),
        (
            {"kind": "file_exists", "file": " "},
            ['R.json: rubrics[0].checks[0].file: must be a glob inside the deliverables, got " "'],
        ),
        (
            {"kind": "regex", "pattern": "x", "min_count": 0},
            [
                "R.json: rubrics[0].checks[0].min_count: Input should be greater than or equal to 1, got 0"
            ],
        ),
    ],
)
def test_check_problems(check, expected) -> None:
    assert msgs({"rubrics": [ok(checks=[check])]}) == expected


def test_checks_not_a_list() -> None:
    assert msgs({"rubrics": [ok(checks={"kind": "regex"})]}) == [
        'R.json: rubrics[0].checks: must be a list aligned with criterion, got {"kind": "regex"}'
    ]


@pytest.mark.parametrize(
    "glob", ["/abs/*.md", "~/x.md", "C:/x.md", "a\\..\\..\\b", "\\\\server\\share"]
)
def test_escaping_file_globs(glob) -> None:
    assert msgs({"rubrics": [ok(files=["ok.md", glob])]}) == [
        f"R.json: rubrics[0].files[1]: must stay inside the deliverables, got {json.dumps(glob)}"
    ]


def test_files_must_be_a_non_empty_list() -> None:
    assert msgs({"rubrics": [ok(files=[])]}) == [
        "R.json: rubrics[0].files: must be a non-empty list of non-empty glob strings, got []"
    ]
    rubrics, _, problems = parse_rubrics({"rubrics": [ok(files=["reports/**/*.md", "a..b.md"])]}, F)
    assert problems == [] and rubrics[0].files == ["reports/**/*.md", "a..b.md"]


# ------------------------------------------------------------------ task-level edge cases


def _task(root: Path, occ: str = "lawyers", name: str = "task1", split: str = "main") -> Path:
    t = root / split / occ / name
    (t / "task_folder").mkdir(parents=True)
    (t / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Do it.\n")
    (t / "task_card.md").write_text("# card\n")
    (t / "RUBRICS.json").write_text(json.dumps({"rubrics": [ok()]}))
    return t


def test_bad_slug_reported_once_per_occupation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _task(tmp_path, "Bad Slug", "task1")
    _task(tmp_path, "Bad Slug", "task2")
    ds = load_dataset(".")
    assert [str(p) for p in ds.problems] == [
        "main/Bad Slug: occupation slug 'Bad Slug' must match [a-z0-9][a-z0-9_-]*"
    ]


def test_split_names_must_be_path_safe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    t = _task(tmp_path)
    with pytest.raises(TaskLoadError) as info:
        load_task(t, split="my split")
    assert str(info.value) == "main: split name 'my split' must match [A-Za-z0-9][A-Za-z0-9._-]*"


def test_wrong_entry_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    t = _task(tmp_path)
    (t / "files_required_to_search").write_text("not a dir")
    (t / "solution").write_text("a file named solution is just an extra entry")
    (t / "task_card.md").unlink()
    (t / "task_card.md").mkdir()
    with pytest.raises(TaskLoadError) as info:
        load_task(t)
    assert [str(p) for p in info.value.problems] == [
        "main/lawyers/task1/task_card.md: must be a regular file",
        "main/lawyers/task1/files_required_to_search: must be a directory",
    ]
    t2 = _task(tmp_path, name="task2")
    import shutil

    shutil.rmtree(t2 / "task_folder")
    (t2 / "task_folder").write_text("x")
    with pytest.raises(TaskLoadError) as info:
        load_task(t2)
    assert str(info.value) == "main/lawyers/task2/task_folder: must be a directory"


def test_bom_accepted_and_non_utf8_json_and_deep_nesting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    t = _task(tmp_path)
    (t / "RUBRICS.json").write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"rubrics": [ok(weight=4)]}).encode()
    )
    assert load_task(t).total_weight == 4.0
    (t / "RUBRICS.json").write_bytes(b'{"rubrics": [{"rubric": "Caf\xe9"}]}')
    with pytest.raises(TaskLoadError) as info:
        load_task(t)
    assert (
        str(info.value)
        == "main/lawyers/task1/RUBRICS.json: not valid UTF-8 (invalid continuation byte at byte 28, line 1)"
    )
    (t / "RUBRICS.json").write_text("[" * 200_000)
    with pytest.raises(TaskLoadError) as info:
        load_task(t)
    assert str(info.value) == "main/lawyers/task1/RUBRICS.json: invalid JSON: nested too deeply"


def test_missing_path_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such directory"):
        load_dataset(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no tasks found"):
        load_dataset(tmp_path)


def test_misnamed_task_given_directly_is_an_error(fixtures: Path) -> None:
    ds = load_dataset("invalid/dataset/main/lawyers/task01")
    assert [str(p) for p in ds.problems] == [
        "invalid/dataset/main/lawyers/task01: task directory must be named taskN (N = 1, 2, …)"
    ]
    assert ds.tasks == [] and not ds.ok


def test_public_dataset_dir_beside_raw_easy_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _task(
        tmp_path / "dataset", "lawyers", "task1", split="main"
    )  # public: dataset/main/lawyers/task1
    _task(tmp_path, "lawyers", "task2", split="dataset_easy")  # raw: dataset_easy/lawyers/task2
    (tmp_path / "runs/r1/trials/main/lawyers/task1").mkdir(parents=True)  # never a task
    (tmp_path / "runs/r1/trials/main/lawyers/task1/RUBRICS.json").write_text("{}")
    ds = load_dataset(".")
    assert [t.id for t in ds.tasks] == [
        "easy/lawyers/task2",
        "main/lawyers/task1",
    ] and ds.problems == []


def test_weight_total_must_be_finite() -> None:
    # each weight is finite, but 7 × 1e308 overflows to inf: s_t would be undefined
    assert msgs({"rubrics": [ok(weight=1e308)] * 7}) == [
        "R.json: rubrics: weights sum to infinity; use smaller weights (the total must be a finite number)"
    ]
    assert msgs({"rubrics": [ok(weight=1e308)]}) == []
