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
