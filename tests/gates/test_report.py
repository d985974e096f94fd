"""Gate report, exit codes and CLI; a clean task passes and each deliberate break of a copy
is caught by the right gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.gates import GateOptions, render_markdown, run_gates, write_gate_report


def _statuses(report) -> dict[str, str]:
    (t,) = report.tasks
    return {g: r.status for g, r in t.gates.items()}


def test_clean_task_passes_static_gates(tmp_path: Path, fx) -> None:
    fx.write_task(tmp_path, fx.clean_spec())
    rep = run_gates(tmp_path, evaluate=fx.fake_evaluate)
    assert _statuses(rep) == {"validate": "pass", "audit": "pass", "lint": "pass", "decoy": "pass"}
    assert rep.exit_code == 0
    md = render_markdown(rep)
    assert "**Result: PASS**" in md
    assert f"| {rep.tasks[0].task_id} | pass | pass | pass | pass |" in md


BREAKS = {
    # name: (mutation of the spec, gate that must fail, rule that must be reported)
    "missing reference file": (lambda s, fx: s.workspace.pop("invoices.csv"), "audit", "A1"),
    "leaked answer": (
        lambda s, fx: s.workspace.__setitem__("memo_from_ap.md", fx.AP_MEMO + fx.SOLUTION_SUMMARY),
        "audit",
        "A6",
    ),
    "vague criterion": (
        lambda s, fx: s.rubrics["rubrics"][2]["criterion"].__setitem__(
            1, "The memo summary.md gives an appropriate justification."
        ),
        "lint",
        "OB1",
    ),
    "wrong gold number": (
        lambda s, fx: s.rubrics["rubrics"][1]["checks"][1].__setitem__("value", 1000.0),
        "decoy",
        "D1",
    ),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_each_break_is_caught_by_the_right_gate(tmp_path: Path, fx, name) -> None:
    mutate, gate, rule = BREAKS[name]
    spec = fx.clean_spec()
    mutate(spec, fx)
    fx.write_task(tmp_path, spec)
    rep = run_gates(tmp_path, evaluate=fx.fake_evaluate)
    st = _statuses(rep)
    assert {g for g, s in st.items() if s == "fail"} == {gate}, st
    assert rule in [f.rule for f in rep.tasks[0].gates[gate].findings]
    assert rep.exit_code == 1


def test_wrong_gold_number_also_warned_by_lint(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    BREAKS["wrong gold number"][0](spec, fx)
    fx.write_task(tmp_path, spec)
    rep = run_gates(tmp_path, GateOptions(gates=["lint"]))
    (f,) = rep.tasks[0].gates["lint"].findings
    assert (f.rule, f.where) == ("CK1", "rubrics[1].criterion[1]") and "expects 1000" in f.message


def test_all_breaks_in_one_copy(tmp_path: Path, fx) -> None:
    clean = tmp_path / "clean"
    fx.write_task(clean, fx.clean_spec())
    broken = tmp_path / "broken"
    shutil.copytree(clean, broken)
    spec = fx.clean_spec()
    for mutate, _, _ in BREAKS.values():
        mutate(spec, fx)
    shutil.rmtree(broken / "sample" / fx.OCC / "task1")
    fx.write_task(broken, spec)
    rep = run_gates(broken, evaluate=fx.fake_evaluate)
    rules = {
        g: sorted({f.rule for f in r.findings if f.severity == "error"})
        for g, r in rep.tasks[0].gates.items()
    }
    assert rules == {"validate": [], "audit": ["A1", "A6"], "lint": ["OB1"], "decoy": ["D1"]}
    assert run_gates(clean, evaluate=fx.fake_evaluate).exit_code == 0


def test_invalid_task_fails_validate(tmp_path: Path, fx) -> None:
    t = fx.write_task(tmp_path, fx.clean_spec())
    fx.write_task(tmp_path, fx.clean_spec(), number=2)
    (t.root / "RUBRICS.json").write_text(
        '{"rubrics": [{"rubric": "q", "weight": -1, "criterion": ["x"]}]}'
    )
    rep = run_gates(tmp_path, evaluate=fx.fake_evaluate)
    first, second = rep.tasks
    assert first.gates["validate"].status == "fail" and list(first.gates) == ["validate"]
    (f,) = first.gates["validate"].findings
    assert (
        f.rule == "V1"
        and "rubrics[0].weight" in f.message
        and f.file.endswith("task1/RUBRICS.json")
    )
    assert second.status == "pass" and rep.exit_code == 1


def test_strict_turns_warnings_into_failures(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.workspace["old_notes.txt"] = "unused"
    fx.write_task(tmp_path, spec)
    assert run_gates(tmp_path, GateOptions(gates=["audit"])).exit_code == 0
    rep = run_gates(tmp_path, GateOptions(gates=["audit"], strict=True))
    assert rep.tasks[0].gates["audit"].status == "fail" and rep.exit_code == 1


def test_unknown_gate_is_rejected(tmp_path: Path, fx) -> None:
    fx.write_task(tmp_path, fx.clean_spec())
    with pytest.raises(ValueError, match="unknown gate"):
        run_gates(tmp_path, GateOptions(gates=["audit", "vibes"]))


def test_written_report_files(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    BREAKS["vague criterion"][0](spec, fx)
    fx.write_task(tmp_path / "ds", spec)
    rep = run_gates(tmp_path / "ds", evaluate=fx.fake_evaluate)
    md, js = write_gate_report(rep, tmp_path / "out")
    data = json.loads(js.read_text())
    assert data["exit_code"] == 1 and data["tasks"][0]["status"] == "fail"
    assert data["counts"]["lint"] == {"fail": 1} and data["counts"]["audit"] == {"pass": 1}
    lint = data["tasks"][0]["gates"]["lint"]
    assert (
        lint["findings"][0]["rule"] == "OB1"
        and lint["findings"][0]["where"] == "rubrics[2].criterion[1]"
    )
    text = md.read_text()
    assert "**OB1** unanchored-judgement (error)" in text and "fix: Replace the word" in text


def test_cli_gate(tmp_path: Path, fx) -> None:
    runner = CliRunner()
    fx.write_task(tmp_path / "ds", fx.clean_spec())
    res = runner.invoke(app, ["gate", str(tmp_path / "ds"), "--gates", "validate,audit,lint"])
    assert res.exit_code == 0, res.output
    assert "**Result: PASS**" in res.output
    spec = fx.clean_spec()
    BREAKS["missing reference file"][0](spec, fx)
    fx.write_task(tmp_path / "bad", spec)
    out = tmp_path / "report"
    res = runner.invoke(
        app, ["gate", str(tmp_path / "bad"), "--gates", "audit", "--json", "--out", str(out)]
    )
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert [f["rule"] for f in data["tasks"][0]["gates"]["audit"]["findings"]] == ["A1"]
    assert (out / "gates.md").is_file() and (out / "gates.json").is_file()
    res = runner.invoke(app, ["gate", str(tmp_path / "nowhere")])
    assert res.exit_code == 2
    res = runner.invoke(app, ["gate", str(tmp_path / "ds"), "--leak-threshold", "1.5"])
    assert res.exit_code == 2


def test_gate_reports_progress_per_task(tmp_path: Path, fx, monkeypatch) -> None:
    # run_gates calls on_progress(stage, done, total, task_id) before and after each task;
    # the CLI prints a line per task on stderr when stderr is not a terminal
    fx.write_task(tmp_path / "ds", fx.clean_spec(), number=1)
    fx.write_task(tmp_path / "ds", fx.clean_spec(), number=2)
    seen: list[tuple[str, int, int, str | None]] = []
    run_gates(
        tmp_path / "ds",
        GateOptions(gates=["validate", "lint"]),
        on_progress=lambda *a: seen.append(a),
    )
    # the stage names the requested per-task gates (validate runs before, for all at once)
    assert [x[:3] for x in seen] == [("lint", 0, 2), ("lint", 1, 2), ("lint", 2, 2)], seen
    assert seen[0][3] is None
    assert [x[3].split("/")[::2] for x in seen[1:]] == [["sample", "task1"], ["sample", "task2"]]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["gate", "ds", "--gates", "validate,lint"], env={"COLUMNS": "30"})
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("gate [")]
    # one line per task, never wrapped to the terminal width
    assert [ln.split(":")[0] for ln in lines] == ["gate [1/2] lint", "gate [2/2] lint"], res.stderr
    assert all(ln.endswith(("task1", "task2")) for ln in lines), res.stderr
    assert "**Result: PASS**" in res.stdout and "gate [" not in res.stdout
    quiet = CliRunner().invoke(app, ["gate", "ds", "--gates", "validate,lint", "--no-progress"])
    assert quiet.exit_code == 0 and "gate [" not in quiet.stderr


def test_cli_gate_missing_run_directory_is_bad_input(tmp_path: Path, fx, monkeypatch) -> None:
    # a --runs / --oracle-run / --consistency path that does not exist is a typo (exit 2,
    # named on stderr), not a gate that could not run (exit 3, "grade the run first")
    fx.write_task(tmp_path / "ds", fx.clean_spec())
    monkeypatch.chdir(tmp_path)
    for opt in ("--runs", "--oracle-run", "--consistency"):
        res = CliRunner().invoke(app, ["gate", "ds", opt, "runs/nope"])
        assert res.exit_code == 2, (opt, res.output)
        assert "runs/nope: no such directory" in res.stderr, opt
        assert res.stdout == "", opt
    with pytest.raises(FileNotFoundError, match="runs/nope: no such directory"):
        run_gates(tmp_path / "ds", GateOptions(runs=[Path("runs/nope")]))


def test_cli_gate_llm_and_runs(tmp_path: Path, fx, rb, monkeypatch) -> None:
    from jobbench.testing import FakeOpenAIServer, chat_reply

    t = fx.write_task(tmp_path / "ds", fx.clean_spec())
    run = tmp_path / "run"
    rb.write_lock(run, tmp_path / "ds", [t])
    rb.add_trial(run, t, "builtin", "m", 1, {}, default="pass")
    ok = json.dumps({"criteria": [{"criterion": 1, "ok": True}, {"criterion": 2, "ok": True}]})
    with FakeOpenAIServer(lambda req: chat_reply(ok)) as srv:
        monkeypatch.setenv("JUDGE_API_BASE", srv.base_url)
        monkeypatch.setenv("JUDGE_MODEL", "rev")
        res = CliRunner().invoke(
            app,
            [
                "gate",
                str(tmp_path / "ds"),
                "--gates",
                "lint",
                "--llm",
                "--runs",
                str(run),
                "--json",
            ],
        )
        assert srv.calls == 3
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    gates = data["tasks"][0]["gates"]
    assert {g: gates[g]["status"] for g in gates} == {
        "lint": "pass",
        "llm": "pass",
        "solve": "pass",
    }
    assert data["solve"]["reachability"] == 1.0
    monkeypatch.delenv("JUDGE_MODEL")
    res = CliRunner().invoke(app, ["gate", str(tmp_path / "ds"), "--llm"])
    assert res.exit_code == 2


def test_docs_list_every_rule() -> None:
    from jobbench.gates import RULES

    docs = (Path(__file__).resolve().parents[2] / "docs" / "gates.md").read_text(encoding="utf-8")
    missing = [r.id for r in RULES.values() if f"| `{r.id}` | {r.gate} | {r.name} |" not in docs]
    assert missing == []
