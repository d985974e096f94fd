"""The README's scripted-model example runs as written (in a temporary directory)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_scripted_model_example_runs(tmp_path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### A scripted model instead of an API key") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)  # the `jobbench` console script of this Python
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    res = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "2 chat requests"
    trial = tmp_path / "runs/scripted/trials/main/civil_engineers/task1/builtin@fake-model/epoch-1"
    record = json.loads((trial / "trial.json").read_text())
    assert record["status"] == "ok"
    assert [d["path"] for d in record["deliverables"]] == ["answer.md"]
    assert (trial / "deliverables" / "answer.md").read_text() == "42"


def test_gate_paragraph_names_the_run_options() -> None:
    # the oracle/null gate reads the run given with --oracle-run; a run passed to --runs feeds
    # the solve trial, which leaves the oracle and null agents out. The README must say which.
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Quality gates and judge calibration") :]
    para = section[: section.index("\n\n", section.index("`jobbench gate PATH`"))]
    flat = " ".join(para.split())
    assert re.search(r"oracle 100 % / null 0 %[^.;]*`--oracle-run RUN`", flat), flat
    assert re.search(r"solve trial[^.;]*`--runs RUN`", flat), flat
    from typer.testing import CliRunner

    from jobbench.cli import app

    helptext = CliRunner().invoke(app, ["gate", "--help"], env={"COLUMNS": "200"}).output
    for flag in set(re.findall(r"`(--[a-z-]+)", flat)):
        assert flag in helptext, flag
