"""An adversarial agent that knows every host path tries to read hidden files (rubrics, task
card, solution, search files), other trials, the run directory and other workspaces, and to
write outside ``output/``. It must get nothing, whether it is a CLI agent (network on) or
the builtin agent's python tool (network off)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import OCC, SECRET, make_executable, needs_bwrap, python_shebang, tree_digest

from jobbench.agents import AgentLimits, Endpoint, ModelSettings
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox._quota import unmount_under
from jobbench.testing import FakeOpenAIServer, chat_reply

PROBE = r"""
import json, os, subprocess, sys
T = json.loads(TARGETS)
out = "/workspace/output" if os.path.isdir("/workspace/output") else T["output"]
report = {}

def read(name, path):
    try:
        if os.path.isdir(path):
            report[name] = "READ: " + ",".join(sorted(os.listdir(path)))[:300]
        else:
            with open(path, "rb") as f:
                report[name] = "READ: " + f.read(300).decode("utf-8", "replace")
    except Exception as e:
        report[name] = f"DENIED: {type(e).__name__}"

def write(name, path):
    try:
        with open(path, "w") as f:
            f.write("pwned")
        report[name] = "WROTE"
    except Exception as e:
        report[name] = f"DENIED: {type(e).__name__}"

tf = os.path.join(os.path.dirname(out), "task_folder")
task = os.path.join(T["dataset"], T["occ"], "task1")
read("rel_rubrics", os.path.join(tf, "..", "RUBRICS.json"))
read("rel_card", os.path.join(tf, "..", "task_card.md"))
read("rel_solution", os.path.join(tf, "..", "solution", "answers.txt"))
read("rel_search", os.path.join(tf, "..", "files_required_to_search"))
read("abs_rubrics", os.path.join(task, "RUBRICS.json"))
read("abs_card", os.path.join(task, "task_card.md"))
read("abs_solution", os.path.join(task, "solution", "solve.py"))
read("abs_dataset_listing", T["dataset"])
read("proc1_root_listing", "/proc/1/root")
read("proc1_root_rubrics", "/proc/1/root" + os.path.join(task, "RUBRICS.json"))
read("proc1_cwd", "/proc/1/cwd")
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    read(f"proc_{pid}_rubrics", f"/proc/{pid}/root" + os.path.join(task, "RUBRICS.json"))
read("run_lock", os.path.join(T["run_dir"], "lock.json"))
read("other_trial", os.path.join(T["other_trial"], "trial.json"))
read("other_deliverable", os.path.join(T["other_trial"], "deliverables", "net.csv"))
read("other_workspace", os.path.join(T["other_ws"], "writable", "workspace", "task_folder"))
read("scratch_listing", T["scratch"])
write("write_dataset", os.path.join(task, "RUBRICS.json"))
write("write_run_dir", os.path.join(T["run_dir"], "injected.txt"))
write("write_other_trial", os.path.join(T["other_trial"], "trial.json"))
write("write_workspace_root", os.path.join(os.path.dirname(out), "evil.txt"))
write("write_tmp", "/tmp/jobbench-adversary-evil.txt")
try:
    os.symlink(os.path.join(task, "RUBRICS.json"), os.path.join(out, "rubrics_link.json"))
    os.symlink("../task_folder/TASK_INSTRUCTIONS.txt", os.path.join(out, "instr_link.txt"))
except OSError:
    pass
target = "/proc/1/root" + os.path.join(task, "RUBRICS.json")
r = subprocess.run(["unshare", "-Urm", "sh", "-c", "cat " + target],
                   capture_output=True, text=True)
read_ok = r.returncode == 0 and r.stdout
report["unshare_proc_root"] = ("READ: " + r.stdout[:100]) if read_ok else "DENIED: unshare"
found = []
skip = ("/proc", "/sys", "/usr", sys.prefix, sys.base_prefix)
for dirpath, dirnames, filenames in os.walk("/"):
    dirnames[:] = [d for d in dirnames if not os.path.join(dirpath, d).startswith(skip)]
    for n in filenames:
        p = os.path.join(dirpath, n)
        if n in ("RUBRICS.json", "task_card.md", "solve.py", "answers.txt", "trial.json",
                 "lock.json"):
            found.append(p)
        try:
            small = os.path.isfile(p) and os.path.getsize(p) < 1_000_000
            if small and SECRET.encode() in open(p, "rb").read():
                found.append(p)
        except OSError:
            pass
report["filesystem_search"] = found
with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f, indent=1)
"""


def probe_program(targets: dict) -> str:
    # the secret is spelled backwards so that the program text itself never contains it
    return f"TARGETS = {json.dumps(json.dumps(targets))}\nSECRET = {SECRET[::-1]!r}[::-1]\n" + PROBE


def check_report(run_dir: Path, rec, dataset: Path) -> dict:
    assert rec.status == TrialStatus.ok, rec.error
    tdir = run_dir / "trials" / rec.trial_id
    assert [d.path for d in rec.deliverables] == ["report.json"]
    refused = "\n".join(rec.refused)
    assert (
        "rubrics_link.json: symlink refused" in refused
        and "instr_link.txt: symlink refused" in refused
    )
    text = (tdir / "deliverables" / "report.json").read_text()
    assert SECRET not in text
    assert SECRET not in (tdir / "trajectory.jsonl").read_text()
    report = json.loads(text)
    reads = {k: v for k, v in report.items() if not k.startswith(("write_", "filesystem_"))}
    leaked = {k: v for k, v in reads.items() if not v.startswith("DENIED")}
    # /proc/1/root of the sandbox's own init is at most the sandbox's own root
    assert leaked == {}, leaked
    assert report["filesystem_search"] == []
    for k in ("write_dataset", "write_run_dir", "write_other_trial"):
        assert report[k].startswith("DENIED"), k
    # writes inside the workspace or /tmp succeed but reach neither the deliverables nor the host
    assert report["write_workspace_root"] == "WROTE" and report["write_tmp"] == "WROTE"
    assert not Path("/tmp/jobbench-adversary-evil.txt").exists()
    return report


@needs_bwrap
@pytest.mark.parametrize("kind", ["cli", "builtin"])
def test_adversarial_agent_gets_nothing(tmp_path, dataset, kind, request):
    run_dir = tmp_path / "runs" / "adv"
    scratch = tmp_path / "scratch"
    # the kept workspace's disk quota tmpfs (when root) is detached after the test
    request.addfinalizer(lambda: unmount_under(scratch))
    # another agent's trial (and its kept workspace) exists in the same run
    first = run_trials(
        RunConfig(
            dataset=dataset,
            agents=[AgentSpec("oracle")],
            run_dir=run_dir,
            task_glob="*task1",
            scratch_root=scratch,
            keep_workspaces=True,
        )
    )
    other = first.records[0]
    other_ws = next(scratch.glob("jb-*"))
    targets = {
        "dataset": str(dataset),
        "occ": OCC,
        "run_dir": str(run_dir),
        "scratch": str(scratch),
        "other_trial": str(run_dir / "trials" / other.trial_id),
        "other_ws": str(other_ws),
        "output": "/workspace/output",
    }
    before_data = tree_digest(dataset)
    before_run = tree_digest(run_dir)
    program = probe_program(targets)
    if kind == "cli":
        bindir = tmp_path / "bin"
        (bindir / "probe.py").parent.mkdir(parents=True, exist_ok=True)
        (bindir / "probe.py").write_text(program)
        (bindir / "probe.py").chmod(0o644)
        exe = make_executable(
            bindir / "claude",
            python_shebang() + "import runpy, os\n"
            "runpy.run_path(os.path.join(os.path.dirname(__file__), 'probe.py'))\n",
        )
        spec = AgentSpec("claude-code", "adversary", ModelSettings(), {"executable": str(exe)})
        summary = run_trials(
            RunConfig(
                dataset=dataset,
                agents=[spec],
                run_dir=run_dir,
                task_glob="*task1",
                scratch_root=scratch,
                infra_retries=0,
            )
        )
    else:
        script = [
            chat_reply(tool_calls=[{"name": "python", "arguments": {"code": program}}]),
            chat_reply(
                tool_calls=[
                    {
                        "name": "bash",
                        "arguments": {
                            "command": f"cat {dataset}/{OCC}/task1/RUBRICS.json"
                            " ../RUBRICS.json /proc/1/root/etc/hostname"
                        },
                    }
                ]
            ),
            chat_reply(tool_calls=[{"name": "finish", "arguments": {"summary": "x"}}]),
        ]
        with FakeOpenAIServer(script) as srv:
            spec = AgentSpec("builtin", "adversary", ModelSettings(), {"client_retries": 0})
            summary = run_trials(
                RunConfig(
                    dataset=dataset,
                    agents=[spec],
                    run_dir=run_dir,
                    task_glob="*task1",
                    scratch_root=scratch,
                    infra_retries=0,
                    limits=AgentLimits(),
                    endpoint=Endpoint(base_url=srv.base_url, api_key="k"),
                )
            )
            tool_out = [m["content"] for m in srv.requests[2]["messages"] if m["role"] == "tool"][
                -1
            ]
        assert SECRET not in tool_out and "No such file or directory" in tool_out
    rec = next(r for r in summary.records if r.agent == spec.agent)
    check_report(run_dir, rec, dataset)
    # nothing in the dataset or in other trials changed
    assert tree_digest(dataset) == before_data
    after_run = tree_digest(run_dir)
    mine = f"trials/{rec.trial_id}"
    changed = {
        k
        for k in set(before_run) | set(after_run)
        if before_run.get(k) != after_run.get(k) and not k.startswith(mine)
    }
    assert changed <= {"lock.json", ".run.lock"} | {
        p for p in after_run if mine.startswith(p + "/") or p == mine
    }
    assert not (run_dir / "injected.txt").exists()
