"""No host-side action follows a symbolic link the agent planted in its workspace or HOME.

The builtin agent's file tools and the search tool's copy into
``task_folder/search_downloads/``, deliverable collection, HOME seeding and the ownership
changes before each sandboxed command run on the host (as root in CI). An agent controls
every component below its workspace, so each of them is planted here as a symlink to a host
file, to a host folder and to another task's ``RUBRICS.json`` in the dataset, and nothing
outside the workspace may be read, created or overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from runner_helpers import OCC, tree_digest

from jobbench.agents import AgentLimits, Endpoint, ModelSettings, SearchIndex, WorkspaceTools
from jobbench.agents._builtin import ToolError
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import UnsafePath, collect_deliverables, safefs
from jobbench.sandbox._sandbox import _chown_tree
from jobbench.testing import FakeOpenAIServer, chat_reply

HOST_TEXT = "host file, must stay as it is\n"


def call(name: str, **args) -> dict:
    return {"name": name, "arguments": args}


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A host folder (root-owned when the tests run as root) with one file."""
    h = tmp_path / "host"
    (h / "sub").mkdir(parents=True)
    (h / "secret.txt").write_text(HOST_TEXT)
    (h / "sub" / "deep.txt").write_text(HOST_TEXT)
    return h


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _tools(tmp_path: Path, search_root: Path | None = None, files=()) -> WorkspaceTools:
    ws = tmp_path / "ws"
    (ws / "task_folder").mkdir(parents=True)
    (ws / "output").mkdir()
    priv = tmp_path / "private"
    priv.mkdir()
    return WorkspaceTools(
        ws,
        "/workspace",
        SearchIndex(search_root, list(files)),
        ws / "task_folder" / "search_downloads",
        scratch=priv,
    )


def test_search_copy_in_never_follows_a_planted_symlink(tmp_path, host, dataset):
    search = dataset / OCC / "task1" / "files_required_to_search"
    rubrics2 = dataset / OCC / "task2" / "RUBRICS.json"
    before_rubrics = _sha(rubrics2)
    before_host = tree_digest(host)
    t = _tools(tmp_path, search, ["expense_policy.txt", "holiday_calendar.txt"])
    ws = t.workspace
    # 1. search_downloads itself is a symlink to a host folder
    os.symlink(host, ws / "task_folder" / "search_downloads")
    with pytest.raises(ToolError, match="symbolic link"):
        t.search(download="expense_policy.txt")
    assert not (host / "expense_policy.txt").exists()
    # 2. the download's file name is a symlink to another task's rubric / a host file
    os.unlink(ws / "task_folder" / "search_downloads")
    (ws / "task_folder" / "search_downloads").mkdir()
    os.symlink(rubrics2, ws / "task_folder" / "search_downloads" / "expense_policy.txt")
    os.symlink(
        host / "secret.txt", ws / "task_folder" / "search_downloads" / "holiday_calendar.txt"
    )
    with pytest.raises(ToolError, match="symbolic link"):
        t.search(download="R1")
    with pytest.raises(ToolError, match="symbolic link"):
        t.search(download="holiday_calendar.txt")
    # 3. task_folder (an intermediate component) is a symlink to a host folder
    (ws / "task_folder").rename(ws / "old_tf")
    os.symlink(host, ws / "task_folder")
    with pytest.raises(ToolError, match="symbolic link"):
        t.search(download="expense_policy.txt")
    assert _sha(rubrics2) == before_rubrics
    assert tree_digest(host) == before_host
    assert [r["tool"] for r in t.refusals] == ["search"] * 4
    assert t.refusals[0] == {
        "tool": "search",
        "path": "/workspace/task_folder/search_downloads/expense_policy.txt",
        "reason": "task_folder/search_downloads: is a symbolic link (not followed), "
        "not a directory",
    }
    # with nothing planted, the copy lands in the workspace
    os.unlink(ws / "task_folder")
    (ws / "old_tf").rename(ws / "task_folder")
    for n in os.listdir(ws / "task_folder" / "search_downloads"):
        os.unlink(ws / "task_folder" / "search_downloads" / n)
    assert t.search(download="R1").endswith("search_downloads/expense_policy.txt")
    got = ws / "task_folder" / "search_downloads" / "expense_policy.txt"
    assert got.read_bytes() == (search / "expense_policy.txt").read_bytes()


def test_file_tools_refuse_symlinks_at_every_component(tmp_path, host):
    t = _tools(tmp_path)
    ws = t.workspace
    before = tree_digest(host)
    os.symlink(host, ws / "output" / "dirlink")  # directory symlink, intermediate component
    os.symlink(host / "secret.txt", ws / "output" / "filelink")  # file symlink, last component
    (ws / "output" / "real").mkdir()
    os.symlink(host / "sub", ws / "output" / "real" / "inner")  # deeper intermediate
    cases = [
        ("write_file", "output/dirlink/new.txt"),
        ("write_file", "output/dirlink/secret.txt"),
        ("write_file", "output/filelink"),
        ("write_file", "output/real/inner/deep.txt"),
        ("write_file", "/workspace/output/real/inner/more/x.txt"),
        ("read_file", "output/dirlink/secret.txt"),
        ("read_file", "output/filelink"),
        ("read_file", "output/real/inner/deep.txt"),
        ("list_files", "output/dirlink"),
        ("list_files", "output/real/inner"),
    ]
    for tool, path in cases:
        with pytest.raises(ToolError, match="symbolic link"):
            if tool == "write_file":
                t.write_file(path, "pwned")
            elif tool == "read_file":
                t.read_file(path)
            else:
                t.list_files(path)
    assert tree_digest(host) == before
    assert (host / "secret.txt").read_text() == HOST_TEXT
    assert [(r["tool"], r["path"]) for r in t.refusals] == cases
    assert t.refusals[2]["reason"] == (
        "output/filelink: is a symbolic link (not followed), not a regular file"
    )
    # a listing shows the links as links and does not descend into them
    listing = t.list_files("output")
    assert "/workspace/output/dirlink\t" in listing and "deep.txt" not in listing
    assert "secret" not in listing


def test_file_tools_refuse_fifos_and_hard_links(tmp_path, host):
    t = _tools(tmp_path)
    ws = t.workspace
    os.mkfifo(ws / "output" / "pipe")
    with pytest.raises(ToolError, match="special file"):
        t.read_file("output/pipe")  # would block forever if opened blocking
    with pytest.raises(ToolError, match="special file"):
        t.write_file("output/pipe", "x")
    (ws / "output" / "a.txt").write_text("a")
    os.link(ws / "output" / "a.txt", ws / "output" / "b.txt")
    with pytest.raises(ToolError, match="hard links"):
        t.write_file("output/b.txt", "x")
    assert (ws / "output" / "a.txt").read_text() == "a"


def test_collection_never_reads_through_a_symlink(tmp_path, host):
    out = tmp_path / "output"
    (out / "real").mkdir(parents=True)
    (out / "real" / "ok.txt").write_text("ok")
    os.symlink(host, out / "dirlink")
    os.symlink(host / "sub", out / "real" / "inner")
    os.symlink(host / "secret.txt", out / "real" / "file.txt")
    got = collect_deliverables(out, tmp_path / "dest")
    assert [f.path for f in got.files] == ["real/ok.txt"]
    assert sorted(got.refused) == [
        f"dirlink: symlink refused (points to {host})",
        f"real/file.txt: symlink refused (points to {host / 'secret.txt'})",
        f"real/inner: symlink refused (points to {host / 'sub'})",
    ]
    dest = tmp_path / "dest"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "real",
        "real/ok.txt",
    ]
    # output itself replaced by a symlink
    os.rename(out, tmp_path / "gone")
    os.symlink(host, out)
    got = collect_deliverables(out, tmp_path / "dest2")
    assert got.files == [] and got.refused == ["output: not a directory"]


def test_safefs_refuses_a_component_swapped_after_a_check(tmp_path, host):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    fd = safefs.open_root(root)
    try:
        dfd = safefs.open_dir(fd, ["a"])
        os.close(dfd)
        os.rename(root / "a", root / "a.old")  # the agent swaps the checked folder
        os.symlink(host, root / "a")
        with pytest.raises(UnsafePath, match="a: is a symbolic link"):
            safefs.open_dir(fd, ["a"])
        with pytest.raises(UnsafePath):
            safefs.write_bytes(fd, "a/secret.txt", b"pwned")
        with pytest.raises(UnsafePath):
            safefs.read_bytes(fd, "a/secret.txt")
    finally:
        os.close(fd)
    assert (host / "secret.txt").read_text() == HOST_TEXT
    with pytest.raises(UnsafePath, match="'..' refused"):
        safefs.split_rel("a/../../x")


def test_home_seed_and_config_replace_planted_links(tmp_path, host):
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(host, home / ".config")  # planted by an earlier attempt
    os.symlink(host / "secret.txt", home / "settings.json")
    seed = tmp_path / "seed"
    (seed / ".config").mkdir(parents=True)
    (seed / ".config" / "secret.txt").write_text("seeded")
    (seed / "settings.json").write_text("{}")
    notes = safefs.copy_tree_into(seed, home)
    assert (home / ".config").is_dir() and not (home / ".config").is_symlink()
    assert (home / ".config" / "secret.txt").read_text() == "seeded"
    assert (home / "settings.json").read_text() == "{}"
    assert (host / "secret.txt").read_text() == HOST_TEXT
    assert sorted(notes) == [
        ".config: replaced a symbolic link (not followed)",
        "settings.json: replaced a symbolic link (not followed)",
    ]
    os.symlink(host, home / ".openclaw")
    safefs.put_file(home, ".openclaw/openclaw.json", b"{}")
    assert not (host / "openclaw.json").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="ownership changes need root")
def test_chown_before_a_command_changes_links_not_their_targets(tmp_path, host):
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    os.symlink(host, ws / "d" / "dirlink")
    os.symlink(host / "secret.txt", ws / "filelink")
    _chown_tree(ws, 160_999)
    assert os.lstat(ws / "filelink").st_uid == 160_999
    assert os.lstat(ws / "d").st_uid == 160_999
    assert os.stat(host / "secret.txt").st_uid == 0
    assert os.stat(host / "sub" / "deep.txt").st_uid == 0 and os.stat(host).st_uid == 0


def test_builtin_agent_run_with_planted_symlinks(tmp_path, host, dataset):
    """End to end: the agent plants links with its bash tool, then asks the host-side tools
    to follow them; nothing outside its workspace changes and the trial records each
    refusal."""
    rubrics2 = dataset / OCC / "task2" / "RUBRICS.json"
    before_dataset = tree_digest(dataset)
    before_host = tree_digest(host)
    sd = "task_folder/search_downloads"
    script = [
        chat_reply(tool_calls=[call("bash", command=f"ln -s {host} {sd}")]),
        chat_reply(tool_calls=[call("search", download="expense_policy.txt")]),
        chat_reply(
            tool_calls=[
                call(
                    "bash",
                    command=f"rm {sd} && mkdir {sd} && ln -s {rubrics2} {sd}/expense_policy.txt"
                    f" && ln -s {host}/secret.txt {sd}/holiday_calendar.txt"
                    f" && ln -s {host} output/dirlink",
                )
            ]
        ),
        chat_reply(
            tool_calls=[
                call("search", download="expense_policy.txt"),
                call("search", download="holiday_calendar.txt"),
                call("write_file", path="output/dirlink/evil.txt", content="pwned"),
                call("read_file", path="output/dirlink/secret.txt"),
                call("write_file", path="output/memo.md", content="The vendor is Acme Supplies."),
            ]
        ),
        chat_reply(tool_calls=[call("finish", summary="done")]),
    ]
    with FakeOpenAIServer(script) as srv:
        cfg = RunConfig(
            dataset=dataset,
            agents=[AgentSpec("builtin", "fake-model", ModelSettings(), {"client_retries": 0})],
            run_dir=tmp_path / "runs" / "r",
            task_glob="*task1",
            limits=AgentLimits(),
            endpoint=Endpoint(base_url=srv.base_url, api_key="test-key"),
            infra_retries=0,
        )
        summary = run_trials(cfg)
        requests = list(srv.requests)
    rec = summary.records[0]
    assert rec.status == TrialStatus.ok, rec.error
    assert tree_digest(dataset) == before_dataset
    assert tree_digest(host) == before_host
    refused = rec.details["refused_paths"]
    # paths as the agent sees them (/workspace/… in the sandbox, the host path without one)
    assert [(r["tool"], r["path"].rsplit("workspace/", 1)[-1]) for r in refused] == [
        ("search", f"{sd}/expense_policy.txt"),
        ("search", f"{sd}/expense_policy.txt"),
        ("search", f"{sd}/holiday_calendar.txt"),
        ("write_file", "output/dirlink/evil.txt"),
        ("read_file", "output/dirlink/secret.txt"),
    ]
    assert all("symbolic link" in r["reason"] for r in refused)
    tool_out = [m["content"] for m in requests[4]["messages"] if m["role"] == "tool"]
    assert sum("refused" in m for m in tool_out) == 5
    assert HOST_TEXT not in json.dumps(requests[-1])
    assert [d.path for d in rec.deliverables] == ["memo.md"]
    assert f"dirlink: symlink refused (points to {host})" in rec.refused
