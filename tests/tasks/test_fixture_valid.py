"""The valid fixtures load in both layouts with every extension parsed to exact values."""

from pathlib import Path

from jobbench.tasks import (
    CsvValueCheck,
    FileExistsCheck,
    JsonPathCheck,
    NumberCheck,
    RegexCheck,
    SqliteQueryCheck,
    XlsxCellCheck,
    load_dataset,
    load_task,
)


def test_public_layout_ids_and_no_problems(fixtures: Path) -> None:
    ds = load_dataset("public")
    assert ds.problems == []
    assert [t.id for t in ds.tasks] == [
        "easy/lawyers/task1",
        "main/biostatisticians/task1",
        "main/lawyers/task1",
        "main/lawyers/task2",
        "main/tide_pool_surveyors/task1",
    ]
    # the same dataset reached through dataset/, a split dir and an occupation dir
    assert [t.id for t in load_dataset("public/dataset").tasks] == [t.id for t in ds.tasks]
    assert [t.id for t in load_dataset("public/dataset/main").tasks] == [
        "main/biostatisticians/task1",
        "main/lawyers/task1",
        "main/lawyers/task2",
        "main/tide_pool_surveyors/task1",
    ]
    assert [t.id for t in load_dataset("public/dataset/main/lawyers").tasks] == [
        "main/lawyers/task1",
        "main/lawyers/task2",
    ]


def test_raw_hugging_face_layout_maps_splits(fixtures: Path) -> None:
    ds = load_dataset("hf")
    assert ds.problems == []
    assert [(t.id, t.rubrics_key) for t in ds.tasks] == [
        ("easy/lawyers/task1", "evaluation_rubrics"),
        ("main/civil_engineers/task2", "rubrics"),
        ("main/lawyers/task1", "rubrics"),
    ]
    assert [t.id for t in load_dataset("hf/dataset_easy").tasks] == ["easy/lawyers/task1"]
    assert load_dataset("hf", splits=["main"]).tasks[1].search_files == ["rule_12.txt"]


def test_fallback_key_loads_like_the_primary(fixtures: Path) -> None:
    t = load_dataset("public").get("main/biostatisticians/task1")
    assert t.rubrics_key == "evaluation_rubrics"
    assert [(r.index, r.id, r.weight, len(r.criteria)) for r in t.rubrics] == [
        (0, "0", 10.0, 1),
        (1, "1", 5.0, 1),
    ]
    assert t.total_weight == 15.0


def test_extensions_parse_to_exact_values(fixtures: Path) -> None:
    t = load_task(Path("public/dataset/main/lawyers/task1"))
    assert t.id == "main/lawyers/task1"
    assert [r.id for r in t.rubrics] == ["rent", "schedule", "2", "3", "4"]
    # requires by id ("rent") and by index (0) plus id ("schedule"), resolved to indexes
    assert [r.requires for r in t.rubrics] == [[], [0], [0, 1], [], []]
    assert [r.files for r in t.rubrics] == [
        ["memo.md"],
        None,
        None,
        ["*.png", "charts/**/*.png"],
        None,
    ]
    assert [r.vision for r in t.rubrics] == [None, None, None, True, False]
    assert [r.weight for r in t.rubrics] == [10.0, 8.0, 6.0, 4.0, 0.0]
    assert t.total_weight == 28.0 and t.criterion_count == 11

    checks = [c.check for r in t.rubrics for c in r.criteria]
    assert [type(c).__name__ if c else None for c in checks] == [
        "NumberCheck",
        "RegexCheck",
        "FileExistsCheck",
        "XlsxCellCheck",
        "XlsxCellCheck",
        "CsvValueCheck",
        "CsvValueCheck",
        "JsonPathCheck",
        "SqliteQueryCheck",
        None,
        "RegexCheck",
    ]
    number = checks[0]
    assert isinstance(number, NumberCheck)
    assert (number.value, number.abs_tol, number.near, number.window, number.file) == (
        84000.0,
        0.5,
        ["rent"],
        80,
        "memo.md",
    )
    regex = checks[1]
    assert isinstance(regex, RegexCheck) and (
        regex.pattern,
        regex.ignore_case,
        regex.min_count,
    ) == ("48,?000", True, 1)
    exists = checks[2]
    assert isinstance(exists, FileExistsCheck) and (exists.file, exists.min_bytes) == (
        "summary.xlsx",
        100,
    )
    cell, found = checks[3], checks[4]
    assert isinstance(cell, XlsxCellCheck) and (
        cell.sheet,
        cell.cell,
        cell.expect.equals,
        cell.expect.abs_tol,
    ) == ("Schedule", "B7", 89082.0, 1.0)
    assert isinstance(found, XlsxCellCheck) and (
        found.find,
        found.direction,
        found.cell,
        found.expect.rel_tol,
    ) == ("Total", "right", None, 0.001)
    row, total = checks[5], checks[6]
    assert isinstance(row, CsvValueCheck) and (row.column, row.where, row.aggregate) == (
        "rent",
        {"year": "2027"},
        None,
    )
    assert isinstance(total, CsvValueCheck) and (
        total.aggregate,
        total.where,
        total.expect.equals,
    ) == ("sum", {}, 436734.0)
    jp = checks[7]
    assert isinstance(jp, JsonPathCheck) and (jp.path, jp.expect.any_of) == (
        "conflicts[*].field",
        ["base_rent", "rent"],
    )
    sq = checks[8]
    assert isinstance(sq, SqliteQueryCheck) and (sq.query, sq.file, sq.expect.equals) == (
        "SELECT COUNT(*) FROM clauses",
        "*.db",
        12.0,
    )


def test_workspace_search_solution_and_extras(fixtures: Path) -> None:
    t = load_task(Path("public/dataset/main/lawyers/task1"))
    # extra entries (model_output/, model_traj/, eval_result/, notes.md) are not part of the task
    assert t.workspace_files == [
        "TASK_INSTRUCTIONS.txt",
        "exhibits/clauses.json",
        "lease_abstract.csv",
        "lease_signed.md",
    ]
    assert t.search_files == ["state_commercial_lease_statute.txt"]
    assert t.search_dir == (fixtures / "public/dataset/main/lawyers/task1/files_required_to_search")
    assert t.solution_dir == fixtures / "public/dataset/main/lawyers/task1/solution"
    assert t.workspace_dir == fixtures / "public/dataset/main/lawyers/task1/task_folder"
    assert t.instructions.startswith("You are outside counsel for Harbor Foods LLC.")
    assert t.task_card.startswith("# Lawyers - Task 1\n")
    easy = load_task(Path("public/dataset/easy/lawyers/task1"))
    assert (easy.split, easy.search_dir, easy.search_files, easy.solution_dir) == (
        "easy",
        None,
        [],
        None,
    )


def test_occupation_metadata_known_and_unknown(fixtures: Path) -> None:
    ds = load_dataset("public")
    lawyers = ds.get("main/lawyers/task1").occupation_info
    assert (lawyers.onet_soc_code, lawyers.soc_major_code, lawyers.soc_major_title) == (
        "23-1011.00",
        "23-0000",
        "Legal Occupations",
    )
    other = ds.get("main/tide_pool_surveyors/task1").occupation_info
    assert (other.soc_major_code, other.display_name, other.onet_soc_code) == (
        "unknown",
        "Tide Pool Surveyors",
        None,
    )
