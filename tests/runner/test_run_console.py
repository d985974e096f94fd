"""`jobbench run` names its run directory one way on the console: relative to the current
directory when below it (jobbench.tasks.display_path), in every line."""

from __future__ import annotations

import subprocess
import sys


def test_run_names_the_run_directory_relatively_everywhere(tmp_path) -> None:
    cmd = [sys.executable, "-m", "jobbench", "run", "--split", "easy", "--tasks",
           "easy/statisticians/*", "--run-name", "r1", "--no-progress"]  # fmt: skip
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=True)
    out = res.stdout + res.stderr
    assert str(tmp_path) not in out
    assert "Run directory: runs/r1  ·" in out
    assert "Trials in runs/r1" in out
    assert "Report: runs/r1/report" in out
