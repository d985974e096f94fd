"""`jobbench dataset pull` against a local fake Hub driven by the real huggingface_hub client.

No network: the fake Hub (``FakeHub`` in tests/tasks/conftest.py) listens on 127.0.0.1."""

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.tasks import MANIFEST, DatasetPullError, load_dataset, pull_dataset, read_manifest

HF = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "hf"
SRC = Path(__file__).resolve().parents[2] / "src"
REPO = "JobBench/job-bench"
A = "a" * 40
B = "b" * 40
CSV = "dataset/civil_engineers/task2/task_folder/design.csv"
RUB = "dataset/lawyers/task1/RUBRICS.json"


def _commits(helpers) -> tuple[dict[str, bytes], dict[str, bytes]]:
    a = helpers.tree_bytes(HF)
    a[".gitattributes"] = b"*.csv filter=lfs diff=lfs merge=lfs -text\n"
    a["tasks.parquet"] = b"PAR1 not selected PAR1"
    b = dict(a)
    doc = json.loads(b[RUB])
    doc["rubrics"][0]["weight"] = 9
    b[RUB] = json.dumps(doc).encode()
    for name in (
        "RUBRICS.json",
        "task_card.md",
        "task_folder/TASK_INSTRUCTIONS.txt",
        "task_folder/design.csv",
    ):
        del b[f"dataset/civil_engineers/task2/{name}"]
    for name in ("RUBRICS.json", "task_card.md", "task_folder/TASK_INSTRUCTIONS.txt"):
        b[f"dataset/lawyers/task2/{name}"] = a[f"dataset/lawyers/task1/{name}"]
    return a, b


def _selected(files: dict[str, bytes]) -> dict[str, bytes]:
    return {
        k: v
        for k, v in files.items()
        if k.startswith(("dataset/", "dataset_easy/")) or k == "README.md"
    }


@pytest.fixture
def hub(make_hub, helpers):
    a, b = _commits(helpers)
    h = make_hub(REPO, {A: a, B: b}, {"main": A, "v1.0": A}, lfs={CSV})
    h.a, h.b = a, b
    return h


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _snapshot(root: Path) -> dict[str, tuple]:
    return {
        p.relative_to(root).as_posix(): (
            p.stat().st_mtime_ns,
            p.stat().st_size,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _leftovers(parent: Path, name: str = "data") -> list[str]:
    return sorted(
        p.name
        for p in parent.iterdir()
        if p.name.startswith(f".{name}.") and not p.name.endswith(".pull.lock")
    )


def _pull(hub, dest: Path, **kw):
    return pull_dataset(dest, endpoint=hub.url, token=False, **kw)


def test_success_pins_the_commit_and_verifies_every_file(hub, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    m = _pull(hub, dest)
    want = _selected(hub.a)
    assert (m.repo_id, m.revision, m.commit, m.changed) == (REPO, "main", A, True)
    assert m.tasks == {"easy": 1, "main": 2}
    # on disk: exactly the selected files plus the manifest
    assert _tree(dest) == {**want, MANIFEST: (dest / MANIFEST).read_bytes()}
    # per-file provenance, hashes computed independently here
    assert [(f.path, f.size, f.sha256) for f in m.files] == [
        (k, len(v), hashlib.sha256(v).hexdigest()) for k, v in sorted(want.items())
    ]
    hub_hashes = {f.path: f.hub_hash for f in m.files}
    assert hub_hashes[CSV] == "sha256:" + hashlib.sha256(hub.a[CSV]).hexdigest()
    blob = hub.a[RUB]
    assert (
        hub_hashes[RUB] == "git-sha1:" + hashlib.sha1(b"blob %d\0" % len(blob) + blob).hexdigest()
    )
    # the manifest file says the same, and the dataset loads
    assert read_manifest(dest) == m
    on_disk = json.loads((dest / MANIFEST).read_text())
    assert on_disk["commit"] == A and on_disk["endpoint"] == hub.url and "changed" not in on_disk
    assert [t.id for t in load_dataset(dest).tasks] == [
        "easy/lawyers/task1",
        "main/civil_engineers/task2",
        "main/lawyers/task1",
    ]
    # one resolution of the branch, then every file fetched at the commit, never at "main"
    api = [r for r in hub.requests if r[1].startswith("/api/")]
    assert api == [("GET", f"/api/datasets/{REPO}/revision/main")]
    files = [r for r in hub.requests if "/resolve/" in r[1]]
    assert files and all(f"/resolve/{A}/" in p for _, p in files)
    assert {p.split(f"/resolve/{A}/")[1] for _, p in files} == set(want)
    assert _leftovers(tmp_path) == []


def test_same_commit_again_downloads_nothing(hub, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    before = _snapshot(dest)
    n = len(hub.requests)
    m = _pull(hub, dest)
    assert (m.changed, m.commit) == (False, A)
    assert [r for r in hub.requests[n:] if "/resolve/" in r[1]] == []
    assert _snapshot(dest) == before
    # a locally modified file is noticed and repaired
    (dest / RUB).write_text("{}")
    m = _pull(hub, dest)
    assert m.changed and (dest / RUB).read_bytes() == hub.a[RUB]


def _backup(dest: Path) -> Path:
    (one,) = sorted((dest / ".setup" / "backups").iterdir())
    return one


def test_update_replaces_the_previous_copy(hub, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    hub.refs["main"] = B
    m = _pull(hub, dest)
    assert (m.commit, m.tasks) == (B, {"easy": 1, "main": 2})
    backup = _backup(dest)
    b = backup.relative_to(dest).as_posix()
    retired = "dataset/civil_engineers/task2"
    assert _tree(dest) == {
        **_selected(hub.b),
        MANIFEST: (dest / MANIFEST).read_bytes(),
        # the replaced RUBRICS.json and the retired task are kept aside, as the public sync does
        f"{b}/sources/{RUB}": hub.a[RUB],
        **{f"{b}/retired/{k}": v for k, v in hub.a.items() if k.startswith(retired)},
        f"{b}/refresh.json": (backup / "refresh.json").read_bytes(),
    }
    assert not (dest / "dataset/civil_engineers").exists()
    assert json.loads((dest / RUB).read_text())["rubrics"][0]["weight"] == 9
    assert _leftovers(tmp_path) == []
    assert load_dataset(dest).ok  # the backup folder is hidden from the loader


LOCAL = {  # results and notes a user keeps inside the pulled dataset
    "dataset/lawyers/task1/model_output/gpt-5/memo.md": b"# Memo\nDeadline 14 March 2025.\n",
    "dataset/lawyers/task1/model_traj/gpt-5/gpt-5_attempt1.jsonl": b'{"step": 1}\n',
    "dataset/lawyers/task1/eval_result/eval_gpt-5/gpt-5_judge.json": b'{"rubrics": []}\n',
    "dataset/lawyers/task1/notes.md": b"re-check rubric 0 after the update\n",
    "dataset_easy/lawyers/task1/eval_result/eval_gpt-5/gpt-5_judge.json": b'{"rubrics": [1]}\n',
    "my_notes.txt": b"pulled for the Q3 study\n",
}
RETIRED_LOCAL = {
    "dataset/civil_engineers/task2/model_output/gpt-5/design_check.csv": b"a,b\n1,2\n",
    "dataset/civil_engineers/task2/notes.md": b"odd task\n",
}
STRAY = "dataset/lawyers/task1/task_folder/scratch.txt"  # unlisted file in a source folder


def _add_local(dest: Path) -> dict[str, int]:
    for rel, data in {**LOCAL, **RETIRED_LOCAL, STRAY: b"scratch\n"}.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
    (dest / "dataset/lawyers/task1/model_output/empty-label").mkdir()
    return {rel: (dest / rel).stat().st_ino for rel in LOCAL}


def test_repull_keeps_results_backs_up_sources_and_moves_retired_tasks(hub, tmp_path: Path) -> None:
    """The public sync's refresh rules (DESIGN §8), on a fake Hub with two revisions: every
    non-source file inside task folders (and elsewhere) survives, a changed RUBRICS.json is
    backed up, a retired task is moved aside with its results, and the command says so."""
    dest = tmp_path / "data"
    _pull(hub, dest)
    inodes = _add_local(dest)
    hub.refs["main"] = B
    m = _pull(hub, dest)
    tree = _tree(dest)
    # local files are where they were, same bytes, same inodes (linked, not copied)
    assert {rel: tree[rel] for rel in LOCAL} == LOCAL
    assert {rel: (dest / rel).stat().st_ino for rel in LOCAL} == inodes
    assert (dest / "dataset/lawyers/task1/model_output/empty-label").is_dir()
    # the sources are exactly revision B's
    backup = _backup(dest)
    b = backup.relative_to(dest).as_posix()
    sources = {
        k: v
        for k, v in tree.items()
        if k not in LOCAL and not k.startswith(".setup/") and k != MANIFEST
    }
    assert sources == _selected(hub.b)
    # aside: the replaced RUBRICS.json, the stray file, the retired task with its results
    aside = {
        k.removeprefix(b + "/"): v
        for k, v in tree.items()
        if k.startswith(b + "/") and not k.endswith("refresh.json")
    }
    retired = "dataset/civil_engineers/task2"
    assert aside == {
        f"sources/{RUB}": hub.a[RUB],
        f"sources/{STRAY}": b"scratch\n",
        **{
            f"retired/{k}": v
            for k, v in {**hub.a, **RETIRED_LOCAL}.items()
            if k.startswith(retired)
        },
    }
    record = json.loads((backup / "refresh.json").read_text())
    assert record == {
        "repo_id": REPO,
        "from_commit": A,
        "to_commit": B,
        "backed_up": sorted([RUB, STRAY]),
        "retired_tasks": [retired],
        "updated": [RUB],
        "deleted": [],
    }
    r = m.refresh
    assert (r.from_commit, r.updated, r.deleted) == (A, [RUB], [])
    assert (r.retired_tasks, r.backup) == ([retired], str(backup))
    assert r.added == sorted(k for k in _selected(hub.b) if k.startswith("dataset/lawyers/task2/"))
    assert r.kept == sorted(LOCAL) and r.backed_up == sorted([RUB, STRAY])
    assert read_manifest(dest).commit == B
    assert "refresh" not in json.loads((dest / MANIFEST).read_text())
    assert _leftovers(tmp_path) == []
    # pulling the same commit again changes nothing, results included
    before = _snapshot(dest)
    assert _pull(hub, dest).changed is False and _snapshot(dest) == before
    # a forced re-pull of the same commit keeps them and needs no new backup
    m = _pull(hub, dest, force=True)
    assert (m.refresh.backed_up, m.refresh.backup, m.refresh.kept) == ([], None, sorted(LOCAL))
    assert {rel: (dest / rel).read_bytes() for rel in LOCAL} == LOCAL
    assert len(list((dest / ".setup" / "backups").iterdir())) == 1  # the earlier backup is kept


def test_cli_prints_what_the_repull_did(hub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(app, ["dataset", "pull", "--dest", "data"], terminal_width=400)
    assert r.exit_code == 0, r.output
    _add_local(tmp_path / "data")
    hub.refs["main"] = B
    r = runner.invoke(app, ["dataset", "pull", "--dest", "data"], terminal_width=400)
    assert r.exit_code == 0, r.output
    backup = _backup(tmp_path / "data").relative_to(tmp_path).as_posix()
    assert r.stdout.strip().splitlines()[1:] == [
        f"from {A[:12]}: 3 source file(s) added, 1 updated, 0 deleted; {len(LOCAL)} local "
        "file(s) kept in place (outputs, results, notes)",
        "2 replaced or unlisted source file(s) backed up and 1 retired task(s) moved aside with "
        f"their results, to {backup}/ (refresh.json lists them)",
        "  retired: dataset/civil_engineers/task2",
    ]


@pytest.mark.parametrize("revision, commit", [("v1.0", A), (B, B)])
def test_pull_by_tag_or_commit(hub, tmp_path: Path, revision: str, commit: str) -> None:
    m = _pull(hub, tmp_path / "data", revision=revision)
    assert (m.revision, m.commit) == (revision, commit)
    assert all(f"/resolve/{commit}/" in p for _, p in hub.requests if "/resolve/" in p)


@pytest.mark.parametrize(
    "path, algo",
    [(RUB, "git-sha1"), (CSV, "sha256")],
)
def test_hash_mismatch_leaves_the_previous_copy_untouched(
    hub, tmp_path: Path, path: str, algo: str
) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    before = _snapshot(dest)
    # update to B; the LFS csv exists only in A, so for it re-pull A (force)
    hub.refs["main"] = B if path in hub.b else A
    good = (hub.b if hub.refs["main"] == B else hub.a)[path]
    evil = bytes([good[0] ^ 1]) + good[1:]  # same size, one bit flipped
    hub.serve_instead[path] = evil
    with pytest.raises(DatasetPullError) as info:
        _pull(hub, dest, force=True)
    if algo == "sha256":
        got, want = hashlib.sha256(evil).hexdigest(), hashlib.sha256(good).hexdigest()
    else:
        got = hashlib.sha1(b"blob %d\0" % len(evil) + evil).hexdigest()
        want = hashlib.sha1(b"blob %d\0" % len(good) + good).hexdigest()
    commit = hub.refs["main"]
    assert str(info.value) == (
        f"verification of {REPO}@{commit[:12]} failed; nothing was installed:\n"
        f"  {path}: {algo} {got} does not match the Hub's {want}"
    )
    assert _snapshot(dest) == before
    assert _leftovers(tmp_path) == []


def test_wrong_size_and_missing_file_fail_cleanly(hub, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    before = _snapshot(dest)
    hub.refs["main"] = B
    hub.serve_instead[RUB] = hub.b[RUB] + b"\n\n"
    with pytest.raises(DatasetPullError) as info:
        _pull(hub, dest)
    n = len(hub.b[RUB])
    assert str(info.value) == (
        f"verification of {REPO}@{B[:12]} failed; nothing was installed:\n"
        f"  {RUB}: size {n + 2} bytes, the Hub says {n}"
    )
    hub.serve_instead.clear()
    hub.status_for["dataset_easy/lawyers/task1/task_card.md"] = 404
    with pytest.raises(DatasetPullError) as info:
        _pull(hub, dest)
    assert str(info.value).startswith(
        f"download of {REPO}@{B[:12]} failed: dataset_easy/lawyers/task1/task_card.md: HTTP 404: "
    )
    assert _snapshot(dest) == before
    assert _leftovers(tmp_path) == []


def _run_pull_subprocess(hub, dest: Path, hf_home: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        PYTHONPATH=str(SRC), HF_HOME=str(hf_home), HF_ENDPOINT=hub.url, HF_HUB_DISABLE_TELEMETRY="1"
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jobbench.cli",
            "dataset",
            "pull",
            "--dest",
            str(dest),
            "--workers",
            "1",
            *args,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_stalled(hub, proc) -> None:
    for _ in range(600):
        if hub.stalled.wait(0.05):
            return
        assert proc.poll() is None, proc.communicate()
    raise AssertionError("the pull never reached the stalled file")


def test_ctrl_c_during_download(hub, tmp_path: Path, hub_env: Path) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    _add_local(dest)  # local results are part of what an interrupted pull must not touch
    before = _snapshot(dest)
    hub.refs["main"] = B
    hub.stall.add(RUB)
    proc = _run_pull_subprocess(hub, dest, hub_env)
    _wait_stalled(hub, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    hub.release.set()
    assert proc.returncode == 130, err
    assert "interrupted; " in err and "is unchanged" in err
    assert _snapshot(dest) == before
    assert read_manifest(dest).commit == A
    assert _leftovers(tmp_path) == []


def test_killed_pull_leaves_previous_copy_and_next_pull_cleans_up(
    hub, tmp_path: Path, hub_env: Path
) -> None:
    dest = tmp_path / "data"
    _pull(hub, dest)
    before = _snapshot(dest)
    hub.refs["main"] = B
    hub.stall.add(RUB)
    proc = _run_pull_subprocess(hub, dest, hub_env)
    _wait_stalled(hub, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert _snapshot(dest) == before
    stale = _leftovers(tmp_path)
    assert len(stale) == 1 and stale[0].startswith(f".data.pull-{proc.pid}-")
    hub.stall.clear()
    hub.release.set()
    m = _pull(hub, dest)
    assert m.commit == B and _leftovers(tmp_path) == []


def test_offline_fails_fast_without_any_request(
    hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DatasetPullError) as info:
        _pull(hub, tmp_path / "data")
    assert str(info.value).startswith(
        "offline mode is on (HF_HUB_OFFLINE is set): cannot download JobBench/job-bench."
    )
    assert hub.requests == [] and not (tmp_path / "data").exists()


def test_unreachable_endpoint(hub_env, tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(DatasetPullError) as info:
        pull_dataset(tmp_path / "data", endpoint=f"http://127.0.0.1:{port}", token=False, timeout=2)
    assert str(info.value).startswith(
        f"cannot reach the Hugging Face Hub at http://127.0.0.1:{port} (ConnectError"
    )
    assert "HF_HUB_OFFLINE=1" in str(info.value)
    assert not (tmp_path / "data").exists()


def test_silent_hub_times_out(hub, tmp_path: Path) -> None:
    hub.api_delay = 30
    with pytest.raises(DatasetPullError) as info:
        _pull(hub, tmp_path / "data", timeout=0.3)
    hub.release.set()
    assert str(info.value).startswith(f"cannot reach the Hugging Face Hub at {hub.url} (")
    assert "Timeout" in str(info.value)


def test_unknown_repository_and_revision(hub, tmp_path: Path) -> None:
    with pytest.raises(
        DatasetPullError,
        match=r"^dataset repository someone/else not found on http://127\.0\.0\.1:\d+ ",
    ):
        pull_dataset(tmp_path / "d", repo_id="someone/else", endpoint=hub.url, token=False)
    with pytest.raises(
        DatasetPullError, match=r"^revision 'v9' not found in dataset JobBench/job-bench on "
    ):
        _pull(hub, tmp_path / "d", revision="v9")


def test_unsafe_listing_is_refused_before_any_download(hub, tmp_path: Path) -> None:
    hub.commits[A]["dataset/lawyers/../../../escape.txt"] = b"x"
    with pytest.raises(
        DatasetPullError,
        match=r"lists an unsafe path 'dataset/lawyers/\.\./\.\./\.\./escape\.txt'; refusing",
    ):
        _pull(hub, tmp_path / "data")
    assert [r for r in hub.requests if "/resolve/" in r[1]] == []
    assert not (tmp_path / "escape.txt").exists()


def test_foreign_destination_is_refused(hub, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    dest.mkdir()
    (dest / "thesis.docx").write_bytes(b"precious")
    with pytest.raises(
        DatasetPullError, match="exists, is not empty and was not made by `jobbench dataset pull`"
    ):
        _pull(hub, dest)
    assert _tree(dest) == {"thesis.docx": b"precious"} and hub.requests == []


def test_commit_without_tasks_installs_nothing(make_hub, tmp_path: Path) -> None:
    h = make_hub(REPO, {A: {"README.md": b"card", "dataset/notes.txt": b"n"}}, {"main": A})
    with pytest.raises(
        DatasetPullError,
        match="^the downloaded files hold no JobBench tasks; nothing was installed$",
    ):
        pull_dataset(tmp_path / "data", endpoint=h.url, token=False)
    assert not (tmp_path / "data").exists() and _leftovers(tmp_path) == []


def test_cli_pull_uses_hf_endpoint(hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(
        app, ["dataset", "pull", "--dest", "data", "--revision", "v1.0"], terminal_width=400
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == (
        f"{REPO}@v1.0 = {A}: {len(_selected(hub.a))} files verified, 1 easy, 2 main tasks; "
        f"installed at data (provenance: data/{MANIFEST})"
    )
    r = runner.invoke(
        app, ["dataset", "pull", "--dest", "data", "--revision", "v1.0"], terminal_width=400
    )
    assert "already up to date at data" in r.stdout
    r = runner.invoke(app, ["validate", "data"])
    assert r.exit_code == 0 and r.stdout.strip() == "3 valid task(s) in data; valid"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    r = runner.invoke(app, ["dataset", "pull", "--dest", "data2"], terminal_width=400)
    assert r.exit_code == 3 and "offline mode is on" in r.stderr  # as `selection fetch` offline


def test_cli_unreachable_hub_exits_3_and_other_failures_exit_1(
    hub_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one convention for "the network is unreachable": exit 3, as `jobbench selection fetch`
    from typer.testing import CliRunner

    from jobbench.cli import app

    monkeypatch.chdir(tmp_path)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = CliRunner().invoke(
        app,
        [
            "dataset",
            "pull",
            "--dest",
            "d",
            "--endpoint",
            f"http://127.0.0.1:{port}",
            "--timeout",
            "2",
        ],
        terminal_width=400,
    )
    assert r.exit_code == 3, r.output
    assert "cannot reach the Hugging Face Hub" in r.stderr and not (tmp_path / "d").exists()
    (tmp_path / "f").write_text("x")  # a destination that is a file: not a network problem
    r = CliRunner().invoke(
        app,
        [
            "dataset",
            "pull",
            "--dest",
            "f",
            "--endpoint",
            f"http://127.0.0.1:{port}",
            "--timeout",
            "2",
        ],
        terminal_width=400,
    )
    assert r.exit_code == 1 and "exists and is not a directory" in r.stderr
