"""Every command fails with a clear message naming the file and column when a data file
is missing or has the wrong columns; loaders name the line of a bad value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.selection import (
    DataFileError,
    load_attention_mapping,
    load_leaderboard,
    load_task_metadata,
    load_worker_desires,
)

runner = CliRunner()

# file (relative to the mini data dir) → a required column to break
FILES = {
    "desires": ("workbank/domain_worker_desires.csv", "Automation Desire Rating"),
    "capability": (
        "workbank/expert_rated_technological_capability.csv",
        "Automation Capacity Rating",
    ),
    "task_metadata": ("workbank/task_statement_with_metadata.csv", "O*NET-SOC Code"),
    "oews": ("oews/M2024_bls_wage_data.csv", "A_MEAN"),
    "onet_tasks": ("onet/Task Statements.txt", "Task ID"),
    "onet_occupations": ("onet/onet_soc2010_occupation_data.txt", "Title"),
    "crosswalk": ("crosswalk.csv", "workbank_occupation"),
    "papers": ("workbank/external/paper_to_workflow_mapping_aggregated.csv", "paper_ids"),
    "companies": ("workbank/external/company_to_workflow_aggregation.csv", "company_count"),
}

COMMANDS = {
    "select": (
        ["select", "--out", "{tmp}/out", "--no-plots"],
        [
            "desires",
            "capability",
            "task_metadata",
            "oews",
            "onet_tasks",
            "onet_occupations",
            "crosswalk",
        ],
    ),
    "attention": (
        ["attention", "--boot", "10", "--config", "m1", "--tasks", "rated"],
        ["papers", "companies", "crosswalk", "desires"],
    ),
    "figures": (["selection", "figures"], ["desires", "capability"]),
}
CASES = [(cmd, key) for cmd, (_, keys) in COMMANDS.items() for key in keys]


def _invoke(cmd: str, data: Path, tmp: Path):
    args = [a.replace("{tmp}", str(tmp)) for a in COMMANDS[cmd][0]] + ["--data-dir", str(data)]
    if cmd != "figures":
        args += ["--crosswalk", str(data / "crosswalk.csv")]
    return runner.invoke(app, args)


def test_commands_succeed_on_intact_data(mini_data: Path, tmp_path: Path) -> None:
    for cmd in COMMANDS:
        res = _invoke(cmd, mini_data, tmp_path)
        assert res.exit_code == 0, (cmd, res.output)


@pytest.mark.parametrize(("cmd", "key"), CASES)
def test_missing_file(cmd: str, key: str, mini_data: Path, tmp_path: Path) -> None:
    path = mini_data / FILES[key][0]
    path.unlink()
    res = _invoke(cmd, mini_data, tmp_path)
    assert res.exit_code == 2, res.output
    assert f"error: {path}: " in res.stderr and "not found" in res.stderr
    assert "jobbench selection fetch" in res.stderr or key == "crosswalk"
    assert "Traceback" not in res.output


@pytest.mark.parametrize(("cmd", "key"), CASES)
def test_wrong_columns(cmd: str, key: str, mini_data: Path, tmp_path: Path) -> None:
    rel, column = FILES[key]
    path = mini_data / rel
    text = path.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    assert column in header
    path.write_text(header.replace(column, column + "_renamed") + "\n" + rest, encoding="utf-8")
    res = _invoke(cmd, mini_data, tmp_path)
    assert res.exit_code == 2, res.output
    assert f"error: {path}, column {column!r}: " in res.stderr
    assert f"lacks column(s) {column!r}; found columns" in res.stderr


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (
            lambda d: d["leaderboard"][0].pop("categoryBreakdown"),
            "leaderboard[0].categoryBreakdown",
        ),
        (
            lambda d: d["leaderboard"][1]["categoryBreakdown"]["alpha"].update(score_pct="high"),
            "leaderboard[1].categoryBreakdown.alpha.score_pct",
        ),
        (lambda d: d.pop("leaderboard"), "leaderboard"),
    ],
)
def test_leaderboard_errors(mutate, where: str, mini_data: Path, tmp_path: Path) -> None:
    path = mini_data / "jobbench" / "leaderboard.json"
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    res = _invoke("attention", mini_data, tmp_path)
    assert res.exit_code == 2 and f"error: {path}, column {where!r}: " in res.stderr
    path.unlink()
    res = _invoke("attention", mini_data, tmp_path)
    assert res.exit_code == 2 and f"error: {path}: leaderboard file not found" in res.stderr


def test_bad_values_name_line_and_column(tmp_path: Path, csv_file) -> None:
    header = [
        "Task ID",
        "Occupation (O*NET-SOC Title)",
        "Task",
        "User ID",
        "Automation Desire Rating",
    ]
    path = csv_file(
        tmp_path / "d.csv",
        header,
        [["1", "Occ", "Do it.", "u1", "3"], ["1", "Occ", "Do it.", "u2", "7"]],
    )
    with pytest.raises(DataFileError) as e:
        load_worker_desires(path)
    assert (
        str(e.value)
        == f"{path}, line 3, column 'Automation Desire Rating': rating '7' is not an integer 1–5"
    )
    path = csv_file(
        tmp_path / "d2.csv",
        header,
        [["1", "Occ", "Do it.", "u1", "3"], ["1", "Occ", "Other.", "u2", "3"]],
    )
    with pytest.raises(
        DataFileError, match="line 3, column 'Task': Task ID 1 has a different occupation/task text"
    ):
        load_worker_desires(path)
    meta = csv_file(
        tmp_path / "m.csv",
        ["O*NET-SOC Code", "Occupation (O*NET-SOC Title)", "Task ID", "Task", "Task Type"],
        [["15-20410", "Occ", "1", "Do it.", "Core"]],
    )
    with pytest.raises(
        DataFileError, match="line 2, column 'O\\*NET-SOC Code': '15-20410' is not an O\\*NET-SOC"
    ):
        load_task_metadata(meta)
    mapping = csv_file(
        tmp_path / "p.csv",
        ["task", "occupation", "paper_count", "paper_ids"],
        [["Do it.", "Occ", "3", "a,b"]],
    )
    with pytest.raises(
        DataFileError, match="line 2, column 'paper_count': says 3 but 'paper_ids' lists 2"
    ):
        load_attention_mapping(mapping, "papers")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(DataFileError, match="is empty; expected a header"):
        load_worker_desires(empty)
    latin = tmp_path / "l.csv"
    latin.write_bytes(",".join(header).encode() + b"\n1,Occ,Caf\xe9,u,3\n")
    with pytest.raises(DataFileError, match="not UTF-8"):
        load_worker_desires(latin)
    with pytest.raises(DataFileError, match="is not a regular file"):
        load_worker_desires(tmp_path)
    bad_json = tmp_path / "lb.json"
    bad_json.write_text("{")
    with pytest.raises(DataFileError, match="not valid JSON"):
        load_leaderboard(bad_json)


def test_explicit_file_option_overrides_data_dir(mini_data: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere.csv"
    (mini_data / FILES["desires"][0]).rename(moved)
    res = runner.invoke(
        app,
        ["selection", "figures", "--data-dir", str(mini_data), "--desires", str(moved), "--json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_tasks"] == 8


def test_occupation_missing_from_task_metadata(mini_data: Path, tmp_path: Path) -> None:
    path = mini_data / FILES["task_metadata"][0]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if "Delta Agents" not in line), encoding="utf-8")
    res = _invoke("select", mini_data, tmp_path)
    assert res.exit_code == 2, res.output
    assert (
        f"error: {path}, column 'Occupation (O*NET-SOC Title)': occupation 'Delta Agents' of the rating files "
        "has no row here"
    ) in res.stderr
