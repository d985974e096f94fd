"""jobbench.rundir: ids, identity, schemas, confinement and the schema-1 fixture."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.records import (
    SCHEMA_VERSION,
    GradeRecord,
    JudgeUnit,
    RubricGrade,
    TrialRecord,
    TrialStatus,
)
from jobbench.rundir import (
    RunDir,
    RunDirError,
    RunLock,
    UnsafeIdError,
    check_component,
    parse_trial_id,
    trial_id,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir-v1"
TID = "main/lawyers/task1/oracle@-/epoch-1"


def _trial(tid: str = TID, **kw) -> TrialRecord:
    k = parse_trial_id(tid)
    fields = dict(
        trial_id=tid,
        task_id=k.task_id,
        task_digest="d" * 64,
        agent=k.agent,
        model=k.model,
        epoch=k.epoch,
        status=TrialStatus.ok,
    )
    return TrialRecord(**{**fields, **kw})


def _grade(tid: str = TID, **kw) -> GradeRecord:
    fields = dict(
        trial_id=tid,
        task_id=parse_trial_id(tid).task_id,
        judge={"key": "checks"},
        rubrics=[],
        score=1.0,
        max_score=1.0,
        passed_weight=1.0,
        status="complete",
    )
    return GradeRecord(**{**fields, **kw})


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for d, _, fs in os.walk(root):
        for n in fs:
            p = Path(d, n)
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a\\b", "a\x00b", "a\nb", "x" * 256, "/abs"])
def test_unsafe_components_are_refused(bad: str) -> None:
    with pytest.raises(UnsafeIdError):
        check_component(bad)


@pytest.mark.parametrize(
    "bad",
    [
        "../../../../escaped",
        "/tmp/x/y/z@-/epoch-1",
        "main/lawyers/task1/oracle@-/epoch-0",
        "main/lawyers/task1/oracle@-/epoch-01",
        "main/lawyers/task1/oracle/epoch-1",
        "main/../task1/oracle@-/epoch-1",
        "main/lawyers/task1/oracle@-/epoch-1/extra",
        "main/lawyers/task1/@-/epoch-1",
        "main/lawyers//oracle@-/epoch-1",
    ],
)
def test_malformed_trial_ids_are_refused(tmp_path: Path, bad: str) -> None:
    rd = RunDir(tmp_path / "run")
    with pytest.raises(UnsafeIdError):
        rd.trial_dir(bad)
    with pytest.raises(UnsafeIdError):
        rd.grade_file("checks", bad)
    with pytest.raises(UnsafeIdError):
        rd.write_trial(_trial().model_copy(update={"trial_id": bad}))
    assert not (tmp_path / "run").exists()


def test_trial_ids_round_trip() -> None:
    tid = trial_id("main/lawyers/task1", "builtin", "openai/gpt-4.1", 3)
    assert tid == "main/lawyers/task1/builtin@openai_gpt-4.1/epoch-3"
    k = parse_trial_id(tid)
    assert (k.task_id, k.agent, k.model, k.epoch, k.trial_id) == (
        "main/lawyers/task1",
        "builtin",
        "openai_gpt-4.1",
        3,
        tid,
    )
    # a path separator of an agent reference (command:./my_agent.sh) becomes "_"
    assert trial_id("main/lawyers/task1", "command:./a.sh", None, 1) == (
        "main/lawyers/task1/command:._a.sh@-/epoch-1"
    )
    with pytest.raises(UnsafeIdError):
        trial_id("main/lawyers/task1", "builtin", None, 0)


def test_records_are_written_and_read_at_their_own_paths(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    rd.write_lock(RunLock(tasks={"main/lawyers/task1": "d" * 64}))
    rd.write_trial(_trial())
    rd.write_grade("checks", _grade())
    assert (
        rd.trial_file(TID) == tmp_path / "run/trials/main/lawyers/task1/oracle@-/epoch-1/trial.json"
    )
    assert (
        rd.grade_file("checks", TID)
        == tmp_path / "run/grades/checks/main/lawyers/task1/oracle@-/epoch-1.json"
    )
    for path in (rd.lock_file, rd.trial_file(TID), rd.grade_file("checks", TID)):
        assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION == 2
    assert list(rd.trials().records) == [TID] and list(rd.grades("checks").records) == [TID]
    assert rd.read_lock().schema_version == 2


def test_a_record_that_is_not_its_locations_is_foreign(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    other = "main/lawyers/task1/oracle@-/epoch-2"
    rd.write_trial(_trial())
    path = rd.trial_file(TID)
    path.write_text(_trial(other).model_dump_json())
    loaded = rd.read_trial(TID)
    assert loaded.record is None and [(p.kind, p.field) for p in loaded.problems] == [
        ("foreign", "trial_id")
    ]
    assert str(loaded.problems[0]).endswith(
        f"field trial_id: {other!r} is not the trial id of its folder, {TID!r}"
    )
    path.write_text(_trial(task_id="main/lawyers/task2").model_dump_json())
    assert [(p.kind, p.field) for p in rd.read_trial(TID).problems] == [("foreign", "task_id")]
    scan = rd.trials()
    assert (
        scan.records == {}
        and scan.unfinished == []
        and [p.kind for p in scan.problems] == ["foreign"]
    )
    g = rd.grade_file("checks", TID)
    g.parent.mkdir(parents=True)
    g.write_text(_grade(other).model_dump_json())
    gs = rd.grades("checks")
    assert gs.records == {} and [(p.kind, p.field) for p in gs.problems] == [
        ("foreign", "trial_id")
    ]


def test_problems_name_file_field_and_kind(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    assert [(p.kind, str(p)) for p in rd.read_lock().problems] == [
        ("missing", f"{tmp_path}/run/lock.json: missing (not a JobBench run directory)")
    ]
    rd.write_trial(_trial())
    path = rd.trial_file(TID)
    path.write_text("{ nope")
    assert [(p.kind, p.field) for p in rd.read_trial(TID).problems] == [("corrupt", "(top level)")]
    path.write_text(json.dumps({**json.loads(_trial().model_dump_json()), "schema_version": 3}))
    (p,) = rd.read_trial(TID).problems
    assert (p.kind, p.field) == (
        "foreign",
        "schema_version",
    ) and "newer JobBench (schema 3" in p.message
    path.write_text(json.dumps({**json.loads(_trial().model_dump_json()), "surprise": 1}))
    assert [(p.kind, p.field) for p in rd.read_trial(TID).problems] == [("corrupt", "surprise")]
    path.write_text(json.dumps({**json.loads(_trial().model_dump_json()), "epoch": "first"}))
    assert [(p.kind, p.field) for p in rd.read_trial(TID).problems] == [("corrupt", "epoch")]
    with pytest.raises(RunDirError, match="field epoch"):
        rd.read_trial(TID).get()


def test_schema_1_drops_nothing_and_reads_every_field(tmp_path: Path) -> None:
    """Every field of the schema-1 fixture's records is a declared field: the migration
    drops nothing, and the records read equal the files' content."""
    before = _tree(FIXTURE / "run")
    rd = RunDir(FIXTURE / "run")
    lock = rd.read_lock()
    assert lock.schema_version == 1 and lock.record is not None
    raw_lock = json.loads(rd.lock_file.read_text())
    assert set(raw_lock) <= set(RunLock.model_fields) and lock.record.sandboxes == ["bwrap"]
    scan = rd.trials()
    assert len(scan.records) == 4 and scan.problems == [] and scan.unfinished == []
    for tid, rec in scan.records.items():
        raw = json.loads(rd.trial_file(tid).read_text())
        assert "schema_version" not in raw and rd.read_trial(tid).schema_version == 1
        got = rec.model_dump(mode="json")
        assert {k: got[k] for k in raw} == raw
    for key in rd.judge_keys():
        grades = rd.grades(key)
        assert len(grades.records) == 4 and grades.problems == []
        for tid, g in grades.records.items():
            raw = json.loads(grades.paths[tid].read_text())
            got = g.model_dump(mode="json", exclude={"schema_version"})
            assert set(raw) <= set(got)
            for k, v in raw.items():
                if k == "rubrics":
                    assert len(v) == len(got[k])
                    for rr, rg in zip(v, got[k], strict=True):
                        assert {kk: rg[kk] for kk in rr if kk != "criteria"} == {
                            kk: x for kk, x in rr.items() if kk != "criteria"
                        }
                        assert [
                            {kk: cg[kk] for kk in cr}
                            for cr, cg in zip(rr["criteria"], rg["criteria"], strict=True)
                        ] == rr["criteria"]
                elif k == "units":
                    assert [{kk: u[kk] for kk in ru} for ru, u in zip(v, got[k], strict=True)] == v
                else:
                    assert got[k] == v, k
    assert any(
        g.units and g.rubrics[0].overall_reasoning
        for g in rd.grades("scripted-judge.rubric.llm").records.values()
    )
    assert _tree(FIXTURE / "run") == before  # reading never writes


def test_schema_1_run_resumes_and_redoes_only_outdated_grades(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE / "sample", tmp_path / "sample")
    shutil.copytree(FIXTURE / "run", tmp_path / "runs" / "run")
    run = tmp_path / "runs" / "run"
    lock = json.loads((run / "lock.json").read_text())
    lock["dataset_root"] = str(tmp_path / "sample")
    (run / "lock.json").write_text(json.dumps(lock))
    before = _tree(run)
    env = {"JOBBENCH_SCRATCH": str(tmp_path / "scratch"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    res = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path / "sample"),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "run",
            "--no-progress",
        ],
        env=env,
    )
    assert res.exit_code == 0, res.output
    assert "0 trial(s) run, 4 already finished" in res.output
    after = _tree(run)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # resume rewrites the lock (now schema 2) and the report; trial records stay as they were.
    # The fixture's checks grades were made by EXTRACTOR_VERSION 4: a grade's inputs_digest
    # covers the extractor version, so they are redone (docs/judge.md, Records), with the
    # same verdicts and scores
    from jobbench.extract import EXTRACTOR_VERSION

    assert EXTRACTOR_VERSION != "4"
    regraded = {k for k in changed if k.startswith("grades/checks")}
    others = {k for k in changed if not k.startswith("report/")} - regraded
    assert others == {"lock.json", ".run.lock"}
    for rel in sorted(k for k in regraded if k.endswith(".json") and "/epoch-" in k):
        old = json.loads((FIXTURE / "run" / rel).read_text())
        new = json.loads((run / rel).read_text())
        assert new["score"] == old["score"], rel
        assert [[c["verdict"] for c in r["criteria"]] for r in new["rubrics"]] == [
            [c["verdict"] for c in r["criteria"]] for r in old["rubrics"]
        ], rel
        assert new["status"] == ("no_deliverable" if "/null@-/" in rel else old["status"]), rel
    assert len([k for k in regraded if "/epoch-" in k]) == 4
    assert json.loads((run / "lock.json").read_text())["schema_version"] == 2


def test_writes_never_pass_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    rd = RunDir(tmp_path / "run")
    rd.write_trial(_trial())
    rd.grades_dir.mkdir()
    (rd.grades_dir / "checks").symlink_to(outside)
    with pytest.raises(RunDirError, match="symbolic link") as err:
        rd.write_grade("checks", _grade())
    assert err.value.problems[0].kind == "unsafe"
    assert rd.judge_keys() == [] and rd.remove_grade("checks", TID) is False
    (rd.trials_dir / "other").symlink_to(outside)
    with pytest.raises(RunDirError, match="symbolic link"):
        rd.reset_trial_dir("other/lawyers/task1/oracle@-/epoch-1")
    assert [p.kind for p in rd.trials().problems] == ["unsafe"]
    assert list(outside.iterdir()) == []
    # a link where a record should be is not followed
    (outside / "trial.json").write_text(_trial().model_dump_json())
    rd.trial_file(TID).unlink()
    rd.trial_file(TID).symlink_to(outside / "trial.json")
    assert [p.kind for p in rd.read_trial(TID).problems] == ["unsafe"]
    # a trial folder that is a link is removed (never followed) when the trial is redone
    tdir = rd.trial_dir(TID)
    shutil.rmtree(tdir)
    tdir.symlink_to(outside)
    rd.reset_trial_dir(TID)
    assert tdir.is_dir() and not tdir.is_symlink() and (outside / "trial.json").exists()


def test_scans_find_a_link_on_the_way_whatever_they_have_seen(tmp_path: Path) -> None:
    """The folders a scan already found not to be links (``seen``) spare it looking at them
    again, never at a folder it has not seen: a link there is a problem, as without
    ``seen``, and a plain folder joins ``seen``."""
    rd = RunDir(tmp_path / "run")
    plain = rd.root / "trials" / "a"
    (plain / "b").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (plain / "link").symlink_to(tmp_path / "outside")
    seen = {str(rd.root / "trials"), str(plain)}
    through_link = plain / "link" / "trial.json"
    problem = rd._unlinked_path(through_link, seen=seen)
    assert problem is not None and problem.kind == "unsafe"
    assert problem.path == plain / "link"
    assert rd._unlinked_path(through_link) == problem
    assert rd._unlinked_path(plain / "b" / "trial.json", seen=seen) is None
    assert str(plain / "b") in seen and str(plain / "link") not in seen
    assert rd._unlinked_path(plain / "gone" / "trial.json", seen=seen) is None


def test_deliverables_are_read_back_without_following_links(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    d = rd.reset_trial_dir(TID) / "deliverables"
    (d / "sub").mkdir(parents=True)
    (d / "trial.json").write_text("{}")
    (d / "sub" / "memo.md").write_text("memo")
    (tmp_path / "secret").write_text("secret")
    (d / "link.txt").symlink_to(tmp_path / "secret")
    view = rd.deliverables(TID)
    assert view.problem is None
    manifest = dict(view.manifest())
    assert manifest["trial.json"] == hashlib.sha256(b"{}").hexdigest()
    assert manifest["sub/memo.md"] == hashlib.sha256(b"memo").hexdigest()
    assert manifest["link.txt"].startswith("refused:symlink")
    assert view.copy_to(tmp_path / "copy") == ["sub/memo.md", "trial.json"]
    assert sorted(
        p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")
    ) == ["sub", "sub/memo.md", "trial.json"]
    shutil.rmtree(d)
    d.symlink_to(tmp_path)
    assert rd.deliverables(TID).problem is not None and rd.deliverables(TID).manifest() == []


def test_grade_records_declare_every_field() -> None:
    with pytest.raises(ValueError, match="inputs_digset"):
        _grade(inputs_digset="x")
    rg = RubricGrade(
        index=0,
        id="r0",
        weight=1,
        criteria=[],
        passed=True,
        overall_reasoning="fine",
        images=["a.png"],
    )
    rec = _grade(
        rubrics=[rg],
        units=[JudgeUnit(unit="rubric:0", cached=True)],
        inputs_digest="abc",
        agent="oracle",
    )
    back = GradeRecord.model_validate_json(rec.model_dump_json())
    assert (
        back == rec and back.rubrics[0].overall_reasoning == "fine" and back.units[0].cached is True
    )


def test_current_schema_files_read_the_same_by_bytes_and_by_parsed_json(tmp_path):
    """A trial record of the current schema is validated from its bytes; the record equals
    the one validated from parsed JSON, and files the fast path must not take (a
    ``schema_version`` of ``2.0`` or ``true``, no ``schema_version``, an unknown field) give
    what :func:`parse_record` gives for their parsed JSON."""
    import hashlib
    import json

    from jobbench.records import SCHEMA_VERSION, TrialRecord
    from jobbench.rundir import parse_record, read_record_file

    doc = {
        "schema_version": SCHEMA_VERSION,
        "trial_id": "main/lawyers/task1/a@m/epoch-1",
        "task_id": "main/lawyers/task1",
        "task_digest": "0" * 64,
        "agent": "a",
        "model": "m",
        "epoch": 1,
        "status": "ok",
        "wall_seconds": 12.5,
        "details": {"exit": 0, "nested": [1, 2.5, None]},
    }
    variants = {
        "current": doc,
        "float version": {**doc, "schema_version": 2.0},
        "bool version": {**doc, "schema_version": True},
        "schema 1": {k: v for k, v in doc.items() if k != "schema_version"} | {"x": 1},
        "unknown field": {**doc, "surprise": 1},
        "newer": {**doc, "schema_version": SCHEMA_VERSION + 1},
    }
    for name, d in variants.items():
        path = tmp_path / f"{name}.json"
        raw = json.dumps(d).encode()
        path.write_bytes(raw)
        got = read_record_file(path, TrialRecord)
        want = parse_record(path, json.loads(raw), TrialRecord)
        assert got.record == want.record, name
        assert got.problems == want.problems, name
        assert got.schema_version == want.schema_version, name
        assert got.sha256 == hashlib.sha256(raw).hexdigest(), name
    assert read_record_file(tmp_path / "current.json", TrialRecord).record.wall_seconds == 12.5
    assert read_record_file(tmp_path / "float version.json", TrialRecord).record is None
    assert read_record_file(tmp_path / "schema 1.json", TrialRecord).schema_version == 1


def test_trajectory_events_never_follow_a_link_or_wait_on_a_fifo(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    tid = "main/lawyers/task1/null@-/epoch-1"
    folder = rd.trial_dir(tid)
    folder.mkdir(parents=True)
    assert rd.trajectory_events(tid) is None  # no file
    (folder / "trajectory.jsonl").write_text('{"type": "a"}\n\n  \n{"type": "b"}\n{"c": 1}')
    assert rd.trajectory_events(tid) == 3  # blank lines are not events
    (folder / "trajectory.jsonl").unlink()
    outside = tmp_path / "passwd"
    outside.write_text("a\nb\nc\nd\n")
    (folder / "trajectory.jsonl").symlink_to(outside)
    assert rd.trajectory_events(tid) is None
    (folder / "trajectory.jsonl").unlink()
    os.mkfifo(folder / "trajectory.jsonl")  # nobody writes it: a blocking open would hang
    assert rd.trajectory_events(tid) is None
