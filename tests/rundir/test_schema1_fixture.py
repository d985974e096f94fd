"""A run directory written by JobBench before records carried ``schema_version`` (the
fixture ``tests/fixtures/rundir-v1``, made at commit 5eec170) loads and reports exactly as
that code reported it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir-v1"
KEYS = ("checks", "scripted-judge.rubric.llm")


@pytest.fixture()
def run_copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "sample", tmp_path / "sample")
    shutil.copytree(FIXTURE / "run", tmp_path / "run")
    lock_path = tmp_path / "run" / "lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    assert lock["dataset_root"] == "/tmp/fixgen/sample"
    lock["dataset_root"] = str(tmp_path / "sample")
    lock_path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    return tmp_path / "run"


def _summary(text: str) -> dict:
    data = json.loads(text)
    data.pop("generated_at")
    for run in data["runs"]:
        run.pop("path")
    for c in data["configurations"]:  # added after the fixture was made (checked below)
        c.pop("comparability", None)
    return data


def _rows(text: str) -> list[list]:
    """Each line of a ``results.jsonl`` as its keys and values in order (the fixture's lines
    were written with spaces after ``,`` and ``:``, today's without)."""
    assert text.endswith("\n")
    return [json.loads(line, object_pairs_hook=list) for line in text.splitlines()]


def _markdown(text: str) -> list[str]:
    lines = text.splitlines()
    if "## Comparable with the published leaderboard" in lines:  # added after the fixture was made
        start = lines.index("## Comparable with the published leaderboard")
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
        lines = lines[:start] + lines[end:]
    return [line for line in lines if not line.startswith("Runs: run. Judge key:")]


@pytest.mark.parametrize("key", KEYS)
def test_schema1_run_reports_as_before(run_copy: Path, key: str, tmp_path: Path) -> None:
    expected = FIXTURE / "expected" / key
    out = tmp_path / "report"
    res = CliRunner().invoke(app, ["report", str(run_copy), "--judge-key", key, "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = (out / "summary.json").read_text()
    assert _summary(got) == _summary((expected / "summary.json").read_text())
    assert _rows((out / "results.jsonl").read_text()) == _rows(
        (expected / "results.jsonl").read_text()
    )
    got_md = _markdown((out / "leaderboard.md").read_text())
    want_md = _markdown((expected / "leaderboard.md").read_text())
    assert got_md == want_md
    assert len(want_md) > 20 and any("| oracle" in line for line in want_md)
    # records from before protocols count as the jobbench protocol, never as comparable
    verdicts = [c["comparability"] for c in json.loads(got)["configurations"]]
    assert verdicts and all(v["protocol"] == "jobbench" and not v["comparable"] for v in verdicts)
