"""Collection refuses single files with a reason and keeps the rest: an output path too long
for the run directory is refused per file, and the trial keeps the status the agent earned."""

from __future__ import annotations

import os
from pathlib import Path

from runner_helpers import run_easy_civil

from jobbench.rundir import RunDir

TASK = "easy/civil_engineers/task1"

# 19 directories of 200 characters and a 40-character file name: 3859 bytes below output/,
# short enough to create inside the sandbox, too long once prefixed by the run directory's
# deliverables folder (PATH_MAX is 4096 bytes).
DEEP = "/".join(["d" * 200] * 19) + "/" + "f" * 36 + ".txt"

AGENT_SH = f"""#!/bin/sh
set -e
cd "$JOBBENCH_OUTPUT_DIR"
echo "kept answer" > report.txt
mkdir -p "$(dirname {DEEP})"
echo "deep" > "{DEEP}"
"""


def test_a_too_long_output_path_is_refused_per_file_and_the_rest_collected(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "a"
    agent.mkdir()
    (agent / "agent.sh").write_text(AGENT_SH)
    (agent / "agent.sh").chmod(0o755)
    runs = tmp_path / ("runs-" + "r" * 200)  # a run directory deep enough to overflow PATH_MAX
    code, output = run_easy_civil(
        agent, runs, "--agent", "command:./agent.sh", "--infra-retries", "0", "--no-grade"
    )
    assert code == 0, output
    rd = RunDir(runs / "r")
    tid = f"{TASK}/command:._agent.sh@-/epoch-1"
    rec = rd.read_trial(tid).record
    assert rec is not None
    assert rec.status == "ok", rec.error
    assert [d.path for d in rec.deliverables] == ["report.txt"]
    dest = rd.trial_dir(tid) / "deliverables"
    assert (dest / "report.txt").read_text() == "kept answer\n"
    want = len(os.fsencode(dest / DEEP))
    assert want >= 4096
    assert rec.refused == [
        f"{DEEP}: path too long for the run directory ({want} bytes, limit 4095)"
    ]
