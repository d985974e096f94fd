"""`jobbench tasks` and `jobbench validate` on the fixtures, both layouts."""

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.tasks import occupations

runner = CliRunner()


def test_tasks_json_public(fixtures: Path) -> None:
    r = runner.invoke(app, ["tasks", "public", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["problems"] == []
    rows = {(o["split"], o["occupation"]): o for o in data["occupations"]}
    lawyers = rows[("main", "lawyers")]
    # task1: 5 rubrics / 11 criteria / weight 28; task2: 2 / 3 / 10
    assert (lawyers["tasks"], lawyers["rubrics"], lawyers["criteria"], lawyers["total_weight"]) == (
        2,
        7,
        14,
        38.0,
    )
    assert lawyers["formats"] == {"csv": 2, "json": 1, "md": 1, "txt": 1}
    assert rows[("main", "tide_pool_surveyors")]["soc_major_code"] == "unknown"
    assert rows[("main", "biostatisticians")]["soc_major_code"] == "15-0000"


def test_tasks_table_raw_hf(fixtures: Path) -> None:
    r = runner.invoke(app, ["tasks", "hf"])
    assert r.exit_code == 0, r.output
    assert "3 tasks in hf" in r.stdout
    assert "2 occupations, 2 SOC major groups" in r.stdout.replace("\n", " ")


@pytest.mark.parametrize("name, tasks", [("public", 5), ("hf", 3)])
def test_validate_valid_fixtures(fixtures: Path, name: str, tasks: int) -> None:
    r = runner.invoke(app, ["validate", name])
    assert r.exit_code == 0
    assert r.stdout.strip() == f"{tasks} valid task(s) in {name}; valid"


def test_validate_invalid_lists_every_problem(fixtures: Path) -> None:
    r = runner.invoke(app, ["validate", "invalid", "--strict"], terminal_width=400)
    assert r.exit_code == 1
    lines = r.stdout.strip().splitlines()
    # --strict: misnamed task dirs are errors
    assert lines[-1] == "0 valid task(s) in invalid; 31 error(s)"
    assert len(lines) == 32
    # rich markup in messages is printed literally
    assert (
        "invalid/dataset/main/Lawyers_Old: occupation slug 'Lawyers_Old' must match "
        "[a-z0-9][a-z0-9_-]*" in lines
    )
    assert (
        "invalid/dataset/main/lawyers/task5/RUBRICS.json: rubrics[0].weight: must be a finite "
        "number ≥ 0, got true" in lines
    )


def test_validate_tolerant_by_default(fixtures: Path) -> None:
    r = runner.invoke(app, ["validate", "invalid"], terminal_width=400)
    assert r.exit_code == 1  # the public-format errors remain
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "8 valid task(s) in invalid; 18 error(s); 13 warning(s)"
    assert (
        "invalid/dataset/main/lawyers/task24/RUBRICS.json: rubrics[0].vision: warning: must "
        'be true or false, got "yes"; `vision` ignored for rubrics[0], as the public tools '
        "ignore it (--strict refuses the file)"
    ) in lines


def test_validate_json(fixtures: Path) -> None:
    r = runner.invoke(app, ["validate", "invalid", "--json", "--strict"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["tasks"] == 0 and len(data["problems"]) == 31
    assert data["problems"][6] == {
        "file": "invalid/dataset/main/lawyers/task3/RUBRICS.json",
        "where": "rubrics[1].weight",
        "message": "must be a finite number ≥ 0, got -2",
        "severity": "error",
    }


def test_missing_path_exits_2(fixtures: Path) -> None:
    r = runner.invoke(app, ["validate", "no-such-dir"])
    assert r.exit_code == 2


SHARED = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "data"
    / "jobbench"
    / "jobbench_35_occupations.csv"
)  # ../shared/data


@pytest.mark.skipif(not SHARED.is_file(), reason="shared data not present on this machine")
def test_occupation_table_matches_shared_join() -> None:
    with SHARED.open(encoding="utf-8") as f:
        rows = {r["jobbench_slug"]: r for r in csv.DictReader(f)}
    table = occupations()
    assert sorted(table) == sorted(rows) and len(table) == 35
    for slug, occ in table.items():
        r = rows[slug]
        assert (occ.onet_soc_code, occ.soc_major_code, occ.soc_major_title, occ.display_name) == (
            r["onet_soc2010_code"],
            r["soc_major_code"],
            r["soc_major_title"],
            r["jobbench_display_name"],
        ), slug
    assert len({o.soc_major_code for o in table.values()}) == 10


def test_tasks_table_piped_keeps_full_names() -> None:
    # piped (not a terminal, 80 columns) the table is printed at its natural width: no
    # occupation is cut to "bookkee…"
    from jobbench.tasks import load_dataset

    sample = Path(__file__).resolve().parents[2] / "datasets" / "sample"
    r = runner.invoke(app, ["tasks", str(sample)], terminal_width=80)
    assert r.exit_code == 0, r.output
    assert "…" not in r.stdout
    occs = {t.occupation for t in load_dataset(sample).tasks}
    assert len(occs) == 8
    for occ in occs:
        assert any(occ in line.split() or f" {occ} " in line for line in r.stdout.splitlines())
    assert "8 occupations, 7 SOC major groups" in r.stdout
