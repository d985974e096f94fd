"""The per-trial disk quota (``--disk-quota-mb``): a trial writing past it into ``output/``,
HOME and ``/tmp`` is stopped at the quota on the host, flagged, and what it wrote within the
quota is collected; a quota mount left by a killed run is removed at the next start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from runner_helpers import SAMPLE, run_easy_civil

from jobbench.rundir import RunDir
from jobbench.runner._orphans import sweep_scratch

MiB = 2**20

# Writes a small deliverable first, then 20 MiB into each of output/, HOME and /tmp (dd
# fails with ENOSPC at the quota; `|| true` lets the script go on), then records how far each
# write got in HOME/sizes.txt (which may fail too) and exits 0.
AGENT_SH = textwrap.dedent("""\
    #!/bin/sh
    echo "the answer is 42" > "$JOBBENCH_OUTPUT_DIR/answer.txt"
    dd if=/dev/zero of="$JOBBENCH_OUTPUT_DIR/big.bin" bs=1M count=20 2>/dev/null || true
    dd if=/dev/zero of="$HOME/big.bin" bs=1M count=20 2>/dev/null || true
    dd if=/dev/zero of=/tmp/big.bin bs=1M count=20 2>/dev/null || true
    sleep 1
    exit 0
""")


def _host_bytes(scratch: Path) -> int:
    """Bytes allocated under ``scratch`` on the host (``du``-like, symlinks not followed)."""
    total = 0
    for dirpath, _dirs, filenames in os.walk(scratch):
        for n in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, n)).st_blocks * 512
            except OSError:
                pass
    return total


def _run(tmp_path: Path, cwd: Path, scratch: Path, *extra: str) -> tuple[int, str]:
    env = {"JOBBENCH_SCRATCH": str(scratch)}
    return run_easy_civil(cwd, tmp_path / "runs", "--no-grade", *extra, env=env)


def test_quota_stops_a_trial_writing_past_it(tmp_path: Path) -> None:
    d = tmp_path / "agent"
    d.mkdir()
    script = d / "hog.sh"
    script.write_text(AGENT_SH)
    script.chmod(0o755)
    scratch = tmp_path / "scratch"
    peak = {"bytes": 0}
    import threading

    stop = threading.Event()

    def sample() -> None:  # the host usage of the scratch root while the trial runs
        while not stop.is_set():
            peak["bytes"] = max(peak["bytes"], _host_bytes(scratch))
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    t0 = time.monotonic()
    try:
        code, out = _run(
            tmp_path, d, scratch, "--agent", "command:./hog.sh@m", "--disk-quota-mb", "5"
        )
    finally:
        stop.set()
        t.join()
    seconds = time.monotonic() - t0
    assert code == 0, out
    rd = RunDir(tmp_path / "runs" / "r")
    tid = "easy/civil_engineers/task1/command:._hog.sh@m/epoch-1"
    rec = rd.read_trial(tid).record
    assert rec is not None
    quota = rec.details["disk_quota"]
    assert quota["reached"] is True, quota
    assert quota["note"] == "disk quota reached (5 MiB)"
    assert quota["limit_mb"] == 5
    assert rec.status.value != "infra_error"
    # the three 20 MiB writes together never held more than the quota (plus the small task
    # folder copy and the harness's own files) on the host
    task_bytes = _host_bytes(SAMPLE / "easy" / "civil_engineers" / "task1" / "task_folder")
    assert peak["bytes"] <= 5 * MiB + task_bytes + 1 * MiB, (peak, task_bytes)
    # the small deliverable written first is collected whole
    names = {f.path: f.size for f in rec.deliverables}
    assert names.get("answer.txt") == len("the answer is 42\n"), names
    assert (rd.deliverables_dir(tid) / "answer.txt").read_text() == "the answer is 42\n"
    # the tmpfs is larger than the quota by the task folder copy (pages): the agent can add
    # 5 MiB to what it was given
    assert 4 * MiB < sum(names.values()) <= 5 * MiB + task_bytes + 256 * 1024, names
    # nothing of the trial is left on the host, and no mount under the scratch root
    assert not list(scratch.glob("jb-*"))
    assert str(scratch) not in Path("/proc/self/mountinfo").read_text()
    print(f"host peak {peak['bytes']} bytes, trial {seconds:.1f} s, {rec.status.value}, {quota}")


def test_report_warns_about_a_trial_that_reached_its_quota(tmp_path: Path) -> None:
    d = tmp_path / "agent"
    d.mkdir()
    script = d / "hog.sh"
    script.write_text(AGENT_SH)
    script.chmod(0o755)
    code, out = _run(
        tmp_path, d, tmp_path / "scratch", "--agent", "command:./hog.sh@m", "--disk-quota-mb", "5"
    )
    assert code == 0, out
    from jobbench.report import build_report

    data = build_report([tmp_path / "runs" / "r"], allow_ungraded=True)
    hits = [w for w in data.warnings if "disk quota" in w]
    assert len(hits) == 1, data.warnings
    assert "1 trial(s) reached the disk quota (5 MiB;" in hits[0]
    assert "easy/civil_engineers/task1/command:._hog.sh@m/epoch-1" in hits[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_leftover_quota_mount_of_a_killed_run_is_removed_at_next_start(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # a harness process that prepares a quota workspace, then is killed with SIGKILL
    code = textwrap.dedent(f"""\
        import sys, time
        from pathlib import Path
        from jobbench.sandbox import prepare_workspace
        tf = Path(sys.argv[1])
        ws = prepare_workspace(tf, Path({str(scratch)!r}), disk_quota_bytes=4 * 2**20)
        (ws.output / "x.bin").write_bytes(b"x" * 100_000)
        print(ws.root, flush=True)
        time.sleep(600)
    """)
    tf = tmp_path / "tf"
    tf.mkdir()
    (tf / "TASK_INSTRUCTIONS.txt").write_text("do it\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(tf)], stdout=subprocess.PIPE, text=True)
    root = Path(p.stdout.readline().strip())
    p.kill()
    p.wait()
    mp = str(root / "writable")
    assert f" {mp} " in Path("/proc/self/mountinfo").read_text()
    sweep = sweep_scratch(scratch)
    assert sweep.removed == 1
    assert f" {mp} " not in Path("/proc/self/mountinfo").read_text()
    assert not root.exists()


def test_cli_refuses_a_non_positive_quota(tmp_path: Path) -> None:
    code, out = _run(
        tmp_path, tmp_path, tmp_path / "scratch", "--agent", "null", "--disk-quota-mb", "0"
    )
    assert code == 2 and "--disk-quota-mb" in out and "must be greater than 0, got 0" in out


# Appends 1 MiB to output/big.bin every 50 ms, 200 times (10 s, 200 MiB) unless stopped.
SLOW_SH = textwrap.dedent("""\
    #!/bin/sh
    echo "the answer is 42" > "$JOBBENCH_OUTPUT_DIR/answer.txt"
    i=0
    while [ $i -lt 200 ]; do
      dd if=/dev/zero bs=1M count=1 2>/dev/null >> "$JOBBENCH_OUTPUT_DIR/big.bin"
      sleep 0.05
      i=$((i + 1))
    done
    exit 0
""")


def test_watchdog_stops_the_trial_where_mounting_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobbench.sandbox import _quota

    def refuse(*_a, **_k):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(_quota, "mount_tmpfs", refuse)
    d = tmp_path / "agent"
    d.mkdir()
    (d / "slow.sh").write_text(SLOW_SH)
    (d / "slow.sh").chmod(0o755)
    scratch = tmp_path / "scratch"
    import threading

    peak = {"bytes": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak["bytes"] = max(peak["bytes"], _host_bytes(scratch))
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        code, out = _run(
            tmp_path, d, scratch, "--agent", "command:./slow.sh@m", "--disk-quota-mb", "5"
        )
    finally:
        stop.set()
        t.join()
    assert code == 0, out
    rd = RunDir(tmp_path / "runs" / "r")
    rec = rd.read_trial("easy/civil_engineers/task1/command:._slow.sh@m/epoch-1").record
    assert rec is not None
    q = rec.details["disk_quota"]
    assert q["mechanism"] == "watchdog" and q["reached"] is True, q
    assert q["mount_error"] == "mount: Operation not permitted"
    assert rec.status.value != "infra_error"
    # stopped long before the loop's 10 s and 200 MiB
    assert rec.wall_seconds < 6, rec.wall_seconds
    sizes = {f.path: f.size for f in rec.deliverables}
    assert sizes["answer.txt"] == 17
    assert 4 * MiB < sizes["big.bin"] < 15 * MiB, sizes
    assert peak["bytes"] < 15 * MiB, peak
    print(f"watchdog: host peak {peak['bytes']} bytes, {rec.wall_seconds} s, {rec.status.value}")


def test_run_config_refuses_a_non_positive_quota(tmp_path: Path) -> None:
    from jobbench.runner import RunConfig, run_trials
    from jobbench.runner._lock import RunConfigError
    from jobbench.runner._spec import AgentSpec

    cfg = RunConfig(
        dataset=SAMPLE, agents=[AgentSpec("null")], run_dir=tmp_path / "r", disk_quota_mb=-1
    )
    with pytest.raises(RunConfigError, match="disk_quota_mb must be greater than 0, got -1"):
        run_trials(cfg)
    assert not (tmp_path / "r").exists()
