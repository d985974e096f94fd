"""Sandbox isolation, limits and deliverable collection."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runner_helpers import needs_bwrap

import jobbench.sandbox._sandbox as sbx
from jobbench.sandbox import (
    DeliverableLimits,
    Limits,
    Mount,
    Sandbox,
    collect_deliverables,
    prepare_workspace,
)


@pytest.fixture
def ws(tmp_path: Path):
    tf = tmp_path / "task" / "task_folder"
    tf.mkdir(parents=True)
    (tf / "TASK_INSTRUCTIONS.txt").write_text("do it\n")
    (tf / "sub").mkdir()
    (tf / "sub" / "data.csv").write_text("a,b\n1,2\n")
    w = prepare_workspace(tf, tmp_path / "scratch")
    yield w
    w.cleanup()


def test_workspace_is_a_fresh_copy_with_empty_output(ws, tmp_path):
    assert (ws.task_folder / "TASK_INSTRUCTIONS.txt").read_text() == "do it\n"
    assert (ws.task_folder / "sub" / "data.csv").read_text() == "a,b\n1,2\n"
    assert list(ws.output.iterdir()) == []
    # a copy, not the original: changing it leaves the task untouched
    (ws.task_folder / "TASK_INSTRUCTIONS.txt").write_text("changed")
    assert (tmp_path / "task" / "task_folder" / "TASK_INSTRUCTIONS.txt").read_text() == "do it\n"
    assert ws.root.parent == tmp_path / "scratch"


def test_scratch_inside_forbidden_directory_is_refused(tmp_path):
    tf = tmp_path / "ds" / "task_folder"
    tf.mkdir(parents=True)
    with pytest.raises(ValueError, match="inside"):
        prepare_workspace(tf, tmp_path / "ds" / "scratch", forbidden=[tmp_path / "ds"])


def test_collect_copies_regular_files_with_sha256_and_refuses_the_rest(tmp_path):
    out = tmp_path / "output"
    (out / "sub").mkdir(parents=True)
    (out / "report.md").write_bytes(b"# hi\n")
    (out / "sub" / "t.csv").write_bytes(b"x,y\n1,2\n")
    (out / "big.bin").write_bytes(b"0" * 2000)
    os.symlink("/etc/passwd", out / "link.txt")
    os.symlink("/etc", out / "dirlink")
    os.mkfifo(out / "pipe")
    (out / "bad\nname.txt").write_text("x")
    dest = tmp_path / "deliverables"
    got = collect_deliverables(out, dest, DeliverableLimits(max_file_bytes=1000))
    expected = {
        "report.md": hashlib.sha256(b"# hi\n").hexdigest(),
        "sub/t.csv": hashlib.sha256(b"x,y\n1,2\n").hexdigest(),
    }
    assert {f.path: f.sha256 for f in got.files} == expected
    assert {f.path: f.size for f in got.files} == {"report.md": 5, "sub/t.csv": 8}
    assert (dest / "sub" / "t.csv").read_bytes() == b"x,y\n1,2\n"
    refused = "\n".join(got.refused)
    assert "link.txt: symlink refused (points to /etc/passwd)" in refused
    assert "dirlink: symlink refused (points to /etc)" in refused
    assert "pipe: named pipe refused" in refused
    assert "big.bin: 2000 bytes exceeds the per-file limit of 1000" in refused
    assert "not printable UTF-8" in refused
    assert sorted(p.name for p in dest.rglob("*")) == ["report.md", "sub", "t.csv"]


def test_collect_count_and_total_limits(tmp_path):
    out = tmp_path / "output"
    out.mkdir()
    for i in range(5):
        (out / f"f{i}.txt").write_bytes(b"x" * 10)
    got = collect_deliverables(out, tmp_path / "d1", DeliverableLimits(max_files=3))
    assert [f.path for f in got.files] == ["f0.txt", "f1.txt", "f2.txt"]
    assert got.refused == ["f3.txt: more than 3 files", "f4.txt: more than 3 files"]
    got = collect_deliverables(out, tmp_path / "d2", DeliverableLimits(max_total_bytes=25))
    assert [f.path for f in got.files] == ["f0.txt", "f1.txt"]
    assert len(got.refused) == 3 and all("total size" in r for r in got.refused)


def test_plain_backend_runs_in_the_workspace(ws):
    sb = Sandbox(ws.workspace, home=ws.home, backend="none")
    r = sb.run(["bash", "-c", "pwd; cat task_folder/sub/data.csv; echo out > output/a.txt"])
    assert r.exit_code == 0 and r.backend == "none"
    assert r.stdout.splitlines() == [str(ws.workspace), "a,b", "1,2"]
    assert (ws.output / "a.txt").read_text() == "out\n"
    assert sb.path_of(ws.output) == str(ws.output)


def test_fallback_without_bwrap_warns_loudly(monkeypatch, capsys, ws):
    monkeypatch.setattr(sbx, "bwrap_available", lambda: (False, "bwrap is not installed"))
    monkeypatch.setattr(sbx, "_warned_fallback", False)
    monkeypatch.delenv("JOBBENCH_SANDBOX", raising=False)
    with pytest.warns(RuntimeWarning, match="sandbox disabled"):
        sb = Sandbox(ws.workspace, backend="auto")
    assert sb.backend == "none"
    assert "NO SANDBOX" in capsys.readouterr().err
    with pytest.raises(sbx.SandboxError, match="not installed"):
        Sandbox(ws.workspace, backend="bwrap")


def test_output_is_capped_head_and_tail(ws):
    sb = Sandbox(ws.workspace, backend="none")
    r = sb.run(["python3", "-c", "print('A'*5000 + 'Z'*5000)"], max_output_chars=1000)
    assert r.stdout_truncated
    assert r.stdout.startswith("A" * 500) and r.stdout.rstrip().endswith("Z" * 499)


@needs_bwrap
def test_bwrap_sees_only_workspace_and_system(ws, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    sb = Sandbox(ws.workspace, home=ws.home, backend="bwrap")
    r = sb.run(
        [
            "bash",
            "-c",
            f"pwd; ls /workspace; cat {secret} 2>&1; cat {ws.task_folder}/sub/data.csv 2>&1; "
            "touch /usr/x 2>&1; touch /etc/x 2>&1; echo $HOME; id -u; "
            "touch /tmp/t /dev/shm/s $HOME/h && echo scratch-writable",
        ]
    )
    lines = r.stdout.splitlines()
    assert lines[0] == "/workspace"
    assert lines[1:3] == ["output", "task_folder"]
    assert "No such file or directory" in lines[3]  # host path of a file outside the workspace
    assert (
        "No such file or directory" in lines[4]
    )  # the workspace's host path is not visible either
    assert "Read-only file system" in lines[5] or "Permission denied" in lines[5]
    assert "Read-only file system" in lines[6] or "Permission denied" in lines[6]
    assert lines[7] == "/home/agent"
    if os.geteuid() == 0:
        assert int(lines[8]) >= 160_000  # never root inside
    assert lines[9] == "scratch-writable"
    assert sb.path_of(ws.output) == "/workspace/output"


@needs_bwrap
def test_bwrap_network_policy(ws):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    port = srv.getsockname()[1]
    accepted = []

    def accept():
        try:
            while True:
                c, _ = srv.accept()
                accepted.append(1)
                c.close()
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
    try:
        closed = Sandbox(ws.workspace, backend="bwrap", network=False).run(["python3", "-c", probe])
        assert closed.exit_code != 0 and "connected" not in closed.stdout
        assert "ConnectionRefused" in closed.stderr
        opened = Sandbox(ws.workspace, backend="bwrap", network=True).run(["python3", "-c", probe])
        assert opened.stdout.strip() == "connected"
        assert len(accepted) == 1
    finally:
        srv.close()


@needs_bwrap
def test_bwrap_timeout_kills_background_processes(ws):
    sb = Sandbox(ws.workspace, backend="bwrap")
    r = sb.run(
        ["bash", "-c", "(sleep 1.5; touch /workspace/output/late) & sleep 30"],
        limits=Limits(timeout=0.5),
    )
    assert r.timed_out and r.exit_code == -9
    time.sleep(2.0)  # give an escaped child the time to write its marker
    assert not (ws.output / "late").exists()


@needs_bwrap
def test_bwrap_finished_command_leaves_no_process_behind(ws):
    sb = Sandbox(ws.workspace, backend="bwrap")
    r = sb.run(
        [
            "bash",
            "-c",
            "(sleep 1; touch /workspace/output/late) & disown; setsid sleep 1 & echo started",
        ]
    )
    assert r.stdout.strip() == "started" and not r.timed_out
    time.sleep(1.5)
    assert not (ws.output / "late").exists()


@needs_bwrap
def test_bwrap_memory_and_process_limits(ws):
    sb = Sandbox(ws.workspace, backend="bwrap")
    r = sb.run(
        ["python3", "-c", "x = bytearray(600 * 1024 * 1024); print('allocated')"],
        limits=Limits(memory_mb=256),
    )
    assert r.exit_code != 0 and "allocated" not in r.stdout and "MemoryError" in r.stderr
    spawn = (
        "import subprocess\nps = []\nfor i in range(60):\n    try:\n        ps.append(subprocess.Popen(['sleep', '5']))\n"
        "    except OSError:\n        break\nprint(len(ps))\n"
    )
    r = sb.run(["python3", "-c", spawn], limits=Limits(max_processes=20, timeout=30))
    assert 0 < int(r.stdout.strip()) < 20


@needs_bwrap
def test_bwrap_masks_forbidden_paths_under_a_bound_directory(ws, tmp_path):
    tree = tmp_path / "tools"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "tool.txt").write_text("ok")
    (tree / "dataset").mkdir()
    (tree / "dataset" / "RUBRICS.json").write_text("secret")
    for p in (tree, tree / "bin", tree / "dataset"):
        p.chmod(0o755)
    sb = Sandbox(
        ws.workspace, backend="bwrap", mounts=[Mount(tree, "/opt/tools")], mask=[tree / "dataset"]
    )
    r = sb.run(
        ["bash", "-c", "cat /opt/tools/bin/tool.txt; echo; ls -A /opt/tools/dataset | wc -l"]
    )
    assert r.stdout.split() == ["ok", "0"]


@needs_bwrap
def test_command_scratch_lives_in_tmp_root_and_is_removed(ws, tmp_path, monkeypatch):
    """With ``tmp_root`` (the runner passes the trial's private folder) each command's own
    scratch (its /etc/passwd, captured output) is made there, never in the system temp
    directory, and is gone after the command; the agent still sees the passwd entry."""
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(sbx.tempfile, "tempdir", str(system_tmp))
    seen: list[list[str]] = []
    real = sbx.tempfile.mkdtemp

    def spy(*a, **kw):
        d = real(*a, **kw)
        seen.append([d])
        return d

    monkeypatch.setattr(sbx.tempfile, "mkdtemp", spy)
    box = Sandbox(ws.workspace, home=ws.home, backend="bwrap", tmp_root=ws.private)
    res = box.run(["sh", "-c", "grep -c '^agent:' /etc/passwd"], limits=Limits(timeout=30))
    assert res.exit_code == 0 and res.stdout.strip() == "1"
    assert len(seen) == 1 and Path(seen[0][0]).parent == ws.private
    assert not Path(seen[0][0]).exists()
    assert list(system_tmp.iterdir()) == [] and list(ws.private.iterdir()) == []


def test_sandbox_user_ids_are_exclusive_across_processes():
    """Two harness processes never hand out the same sandbox uid (RLIMIT_NPROC is per uid)."""
    from jobbench.sandbox._sandbox import UID_POOL

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from jobbench.sandbox._sandbox import UID_POOL\n"
            "import sys, time\nprint(UID_POOL.acquire(), UID_POOL.acquire(), flush=True)\n"
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        theirs = {int(x) for x in holder.stdout.readline().split()}
        assert len(theirs) == 2
        mine = UID_POOL.acquire()
        try:
            assert mine not in theirs and mine >= UID_POOL.BASE
        finally:
            UID_POOL.release(mine)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
