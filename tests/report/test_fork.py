"""The report's work split over forked processes gives what one process gives.

Reading a run (slices of its trial records and grades), computing the figures (aggregates and
comparisons) and writing the drill-down pages (claimed from both ends of the task list) are
each compared with the same work done in one process; workers that die or raise leave their
part to this process.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from jobbench.report import _build, _fork, _runs, _write, build_report
from jobbench.report._tables import leaderboard_csv, results_jsonl_lines, summary_json
from jobbench.rundir import RunDir
from jobbench.rundir._store import part_of

from .conftest import T1, T2, T4, build_run_b, write_trial


def pid_and_part(shared: int, part: tuple[int, int]) -> tuple[int, tuple[int, int]]:
    """A part's work for :func:`_fork.in_parts`: which process ran it."""
    return os.getpid(), part


def die_outside(shared: int, part: tuple[int, int]) -> tuple[int, int]:
    """Ends any process but the test's own (``shared``) without a result."""
    if os.getpid() != shared:
        os._exit(3)
    return part


def raise_in_part_1(shared: int, part: tuple[int, int]) -> tuple[int, int]:
    if part[0] == 1:
        raise ValueError(f"part 1 failed in {os.getpid()}")
    return part


LOG: list[Path] = []
"""The file the logged wrappers below append to (set by :func:`_logging`; forked workers
inherit it)."""

_REAL = {"read": _runs._read_part, "aggregate": _build._aggregate_part}


def logged_read_part(what, part):  # noqa: ANN001, ANN201
    with open(LOG[0], "a") as f:
        f.write(f"read {os.getpid()} {part[0]} {part[1]}\n")
    return _REAL["read"](what, part)


def logged_aggregate_part(shared, part):  # noqa: ANN001, ANN201
    with open(LOG[0], "a") as f:
        f.write(f"aggregate {os.getpid()} {part[0]} {part[1]}\n")
    return _REAL["aggregate"](shared, part)


def _logging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "parts.log"
    LOG[:] = [log]
    monkeypatch.setattr(_runs, "_read_part", logged_read_part)
    monkeypatch.setattr(_build, "_aggregate_part", logged_aggregate_part)
    return log


def _who(log: Path, what: str) -> dict[tuple[int, int], list[int]]:
    """part → process ids that computed it, from the log."""
    out: dict[tuple[int, int], list[int]] = {}
    for line in log.read_text().splitlines():
        kind, pid, i, n = line.split()
        if kind == what:
            out.setdefault((int(i), int(n)), []).append(int(pid))
    return out


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forks allowed whatever the machine and however little the work (the split is what is
    tested, not its speed)."""
    monkeypatch.setattr(_fork, "can_fork", lambda: True)
    monkeypatch.setattr(_runs, "READ_PER_PROCESS", 1)
    monkeypatch.setattr(_build, "AGGREGATES_PER_PROCESS", 1)
    monkeypatch.setattr(_build, "COMPARISONS_PER_PROCESS", 1)


def test_part_of_cuts_contiguous_slices_that_join_to_the_whole() -> None:
    for size in range(10):
        items = list(range(size))
        for n in range(1, 5):
            slices = [part_of(items, (i, n)) for i in range(n)]
            assert [x for s in slices for x in s] == items
            assert max(map(len, slices)) - min(map(len, slices)) <= 1
    assert part_of(list("abcde"), (1, 2)) == ["c", "d", "e"]  # from 5 * 1 // 2 to 5 * 2 // 2
    assert part_of(list("abcde"), (0, 2)) == ["a", "b"]
    with pytest.raises(ValueError, match="part 2 of 2"):
        part_of([1], (2, 2))


def test_parts_run_in_other_processes_in_order(forking: None) -> None:
    results = _fork.in_parts(pid_and_part, 0, processes=3)
    assert [part for _, part in results] == [(0, 3), (1, 3), (2, 3)]
    assert results[0][0] == os.getpid()
    assert os.getpid() not in {results[1][0], results[2][0]}


def test_a_part_whose_worker_dies_or_raises_is_computed_here(forking: None) -> None:
    assert _fork.in_parts(die_outside, os.getpid(), processes=2) == [(0, 2), (1, 2)]
    with pytest.raises(ValueError, match=f"part 1 failed in {os.getpid()}"):
        _fork.in_parts(raise_in_part_1, 0, processes=2)


def test_without_fork_one_part_is_computed_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOBBENCH_REPORT_FORK", "0")
    assert _fork.parts_available() == 1
    assert _fork.in_parts(pid_and_part, 0) == [(os.getpid(), (0, 1))]
    assert _fork.in_parts(pid_and_part, 0, processes=3) == [(os.getpid(), (0, 1))]


def _plant_problems(run: Path) -> None:
    """A corrupt trial record, a foreign grade and a symbolic link among the trials."""
    (run / "trials" / T2 / "alpha@m1" / "epoch-1" / "trial.json").write_text("{not json")
    grade = run / "grades" / "checks" / T1 / "beta@m2" / "epoch-1.json"
    data = json.loads(grade.read_text())
    data["trial_id"] = f"{T1}/beta@m2/epoch-2"
    grade.write_text(json.dumps(data))
    (run / "trials" / T1 / "zeta@m9").symlink_to(run / "trials" / T1 / "alpha@m1")


def _scan_view(scan) -> tuple:  # noqa: ANN001
    return (
        list(scan.records),
        [r.model_dump() for r in scan.records.values()],
        dict(getattr(scan, "dirs", getattr(scan, "paths", {}))),
        dict(scan.sha256),
        list(getattr(scan, "unfinished", [])),
        [str(p) for p in scan.problems],
    )


def _joined(scans: list) -> tuple:  # noqa: ANN001
    views = [_scan_view(s) for s in scans]
    out: tuple = ([], [], {}, {}, [], [])
    for v in views:
        out[0].extend(v[0])
        out[1].extend(v[1])
        out[2].update(v[2])
        out[3].update(v[3])
        out[4].extend(v[4])
        out[5].extend(v[5])
    return out


def test_record_scans_in_parts_join_to_the_whole_scan(run_a: Path) -> None:
    _plant_problems(run_a)
    rd = RunDir(run_a)
    whole_trials, whole_grades = _scan_view(rd.trials()), _scan_view(rd.grades("checks"))
    assert len(whole_trials[5]) == 2  # the corrupt record and the link
    assert any("zeta@m9" in p for p in whole_trials[5])
    assert len(whole_grades[5]) == 1 and "epoch-2" in whole_grades[5][0]
    for n in (1, 2, 3, 5, 20):
        assert _joined([rd.trials(part=(i, n)) for i in range(n)]) == whole_trials
        assert _joined([rd.grades("checks", part=(i, n)) for i in range(n)]) == whole_grades
    # the parts of one scan read what one listing found (a trial added later is not read)
    listing = rd.trial_listing()
    write_trial(run_a, T4, "alpha", "m1", 1)
    assert f"{T4}/alpha@m1/epoch-1" in rd.trials().records
    late = [rd.trials(part=(i, 2), listing=listing) for i in range(2)]
    assert _joined(late) == whole_trials
    # the walk's own problem (the link) is reported once, by part 0
    assert any("zeta@m9" in str(p) for p in rd.trials(part=(0, 3)).problems)
    assert not any("zeta@m9" in str(p) for p in rd.trials(part=(2, 3)).problems)


def _run_view(run: _runs.RunData) -> tuple:
    return (
        run.warnings,
        [
            (
                lt.rel,
                lt.record.model_dump(),
                lt.grade.model_dump() if lt.grade else None,
                lt.dir,
                lt.grade_path,
                lt.record_sha256,
                lt.grade_sha256,
                lt.text_stats,
                lt.trajectory_events,
            )
            for lt in run.trials
        ],
        {k: m.model_dump() for k, m in run.metas.items()},
    )


def test_a_run_read_by_several_processes_is_the_run_read_by_one(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forking: None
) -> None:
    (run_a / "grades" / "checks" / T1 / "beta@m2" / "epoch-2.json").unlink()
    one = _run_view(_runs.load_run(run_a, "checks", slim=True))
    assert len(one[1]) == 14  # alpha 6 and beta 8 trials
    assert sum(t[2] is not None for t in one[1]) == 12  # beta's infra_error and one removed
    log = _logging(tmp_path, monkeypatch)
    for n in (2, 3):
        log.write_text("")
        monkeypatch.setattr(_fork, "parts_available", lambda n=n: n)
        assert _run_view(_runs.load_run(run_a, "checks", slim=True)) == one
        who = _who(log, "read")  # each part read once, by its own process: no fallback
        assert sorted(who) == [(i, n) for i in range(n)]
        assert who[(0, n)] == [os.getpid()]
        assert all(len(p) == 1 and p[0] != os.getpid() for k, p in who.items() if k[0] > 0)


def _outputs(data) -> tuple:  # noqa: ANN001
    summary = summary_json(data)
    summary.pop("generated_at", None)
    return leaderboard_csv(data), list(results_jsonl_lines(data)), summary


def test_figures_computed_by_several_processes_are_those_computed_by_one(
    run_a: Path, tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch, forking: None
) -> None:
    run_b = build_run_b(tmp_path / "runs", dataset)
    monkeypatch.setattr(_fork, "can_fork", lambda: False)
    one = _outputs(build_report([run_a, run_b], n_resamples=500))
    monkeypatch.setattr(_fork, "can_fork", lambda: True)
    pids: list[int] = []
    real = _fork.ProcessPoolExecutor

    def executor(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        ex = real(*args, **kwargs)
        pids.append(os.getpid())
        return ex

    monkeypatch.setattr(_fork, "ProcessPoolExecutor", executor)
    log = _logging(tmp_path, monkeypatch)
    for n in (2, 3):
        log.write_text("")
        monkeypatch.setattr(_fork, "parts_available", lambda n=n: n)
        assert _outputs(build_report([run_a, run_b], n_resamples=500)) == one
        who = _who(log, "aggregate")
        assert sorted(who) == [(i, n) for i in range(n)]
        assert all(len(p) == 1 and p[0] != os.getpid() for k, p in who.items() if k[0] > 0)
    assert len(pids) == 2 * 4  # per build: two runs read, aggregates, comparisons


def _page_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Log (in a file, written by whichever process renders) the task of every page
    rendered, with its process id."""
    log = tmp_path / "pages.log"
    real = _write.render_drilldown_pages

    def render(data, out_dir=None, tasks=None):  # noqa: ANN001, ANN202
        for task_id, page in zip(tasks, real(data, out_dir, tasks)):
            with open(log, "a") as f:
                f.write(f"{os.getpid()} {task_id}\n")
            yield page

    monkeypatch.setattr(_write, "render_drilldown_pages", render)
    return log


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("slow", ["parent", "child"])
def test_pages_claimed_from_both_ends_are_each_rendered_once(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: str
) -> None:
    data = build_report([run_a], n_resamples=200)
    monkeypatch.setattr(_write, "can_fork", lambda: False)
    _write.write_data(data, tmp_path / "here", drilldowns="pages")
    log = _page_log(tmp_path, monkeypatch)
    me = os.getpid()
    if slow == "parent":  # the child renders every page while this process writes the data
        real_md = _write.leaderboard_markdown

        def slow_md(d):  # noqa: ANN001, ANN202
            time.sleep(3)
            return real_md(d)

        monkeypatch.setattr(_write, "leaderboard_markdown", slow_md)
    else:  # this process renders every page while the child draws the figures
        real_draw = _write.draw_figures

        def slow_draw(d):  # noqa: ANN001, ANN202
            if os.getpid() != me:
                time.sleep(3)
            return real_draw(d)

        monkeypatch.setattr(_write, "draw_figures", slow_draw)
    monkeypatch.setattr(_write, "can_fork", lambda: True)
    _write.write_data(data, tmp_path / "forked", drilldowns="pages")
    lines = [line.split() for line in log.read_text().splitlines()]
    tasks = [t for _, t in lines]
    assert sorted(tasks) == sorted(set(tasks)) and len(tasks) == 4  # each page once
    renderers = {int(pid) for pid, _ in lines}
    assert (me in renderers) == (slow == "child") and len(renderers) == 1
    assert _files(tmp_path / "forked") == _files(tmp_path / "here")


def test_a_claimed_page_stops_the_other_end(run_a: Path, tmp_path: Path) -> None:
    data = build_report([run_a], n_resamples=200)
    tasks = _write.page_tasks(data)
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / _write.page_name(tasks[0])).write_text("claimed elsewhere")
    assert _write._render_pages_into(data, tmp_path, folder, tasks[::-1], claim=True) == 3
    assert (folder / _write.page_name(tasks[0])).read_text() == "claimed elsewhere"
    assert all("<html" in (folder / _write.page_name(t)).read_text() for t in tasks[1:])
    assert _write._render_pages_into(data, tmp_path, folder, tasks, claim=True) == 0


def test_little_work_is_not_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fork, "parts_available", lambda: 4)
    assert _fork.processes_for(0, 50) == 1
    assert _fork.processes_for(99, 50) == 1  # one forked process needs 50 of its own
    assert _fork.processes_for(100, 50) == 2
    assert _fork.processes_for(10_000, 50) == 4  # never more than available
    monkeypatch.setattr(_fork, "parts_available", lambda: 1)
    assert _fork.processes_for(10_000, 50) == 1


def test_no_worker_started_means_one_part_here(
    monkeypatch: pytest.MonkeyPatch, forking: None
) -> None:
    class Refused:
        def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            pass

        def submit(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
            raise BlockingIOError(11, "Resource temporarily unavailable")  # fork's EAGAIN

        def shutdown(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            pass

    monkeypatch.setattr(_fork, "ProcessPoolExecutor", Refused)
    assert _fork.in_parts(pid_and_part, 0, processes=3) == [(os.getpid(), (0, 1))]
    monkeypatch.setattr(_write.os, "fork", lambda: (_ for _ in ()).throw(BlockingIOError(11, "x")))
    assert _write._fork_page_child() == -1


def test_no_fork_in_a_daemonic_worker_or_with_sigchld_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import multiprocessing
    import signal

    monkeypatch.setenv("JOBBENCH_REPORT_FORK", "1")
    monkeypatch.setattr(_fork.sys, "platform", "linux")
    monkeypatch.setattr(_fork.threading, "active_count", lambda: 1)  # other tests' threads
    assert _fork.can_fork()
    monkeypatch.setitem(multiprocessing.current_process()._config, "daemon", True)
    assert not _fork.can_fork()
    monkeypatch.setitem(multiprocessing.current_process()._config, "daemon", False)
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert not _fork.can_fork()
    finally:
        signal.signal(signal.SIGCHLD, old)
    assert _fork.can_fork()


def report_in_worker(run: str, out: str) -> str:
    """In a daemonic multiprocessing worker: write the report, return its leaderboard."""
    _write.write_report([Path(run)], Path(out), drilldowns="pages")
    return (Path(out) / "leaderboard.csv").read_text()


def test_a_report_made_inside_a_pool_worker(run_a: Path, tmp_path: Path) -> None:
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        csv = pool.apply(report_in_worker, (str(run_a), str(tmp_path / "in-pool")))
    _write.write_report([run_a], tmp_path / "here", drilldowns="pages")
    assert csv == (tmp_path / "here" / "leaderboard.csv").read_text()

    def pages(out: Path) -> dict[str, bytes]:  # the time each was generated left out
        return {
            k: re.sub(rb"Generated \S+ by", b"", v) for k, v in _files(out / "drilldowns").items()
        }

    assert len(pages(tmp_path / "here")) == 4
    assert pages(tmp_path / "in-pool") == pages(tmp_path / "here")


_ORPHAN_SCRIPT = """
import os, sys, time
from pathlib import Path
from jobbench.report import _fork, _write
out = Path(sys.argv[1])
def slow(shared, part):
    if part[0] == 1:
        (out / "worker").write_text(str(os.getpid()))
        time.sleep(60)
    return part
child = _write._fork_page_child()
if child == 0:
    (out / "page-child").write_text(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
_fork.in_parts(slow, None, processes=2)
"""


def test_helpers_die_with_a_killed_report(tmp_path: Path) -> None:
    """A report process killed from outside (SIGKILL: no clean-up runs) takes its forked
    worker and its page child with it."""
    import signal
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(_fork.__file__).parents[2]))
    proc = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT, str(tmp_path)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        (tmp_path / "worker").exists() and (tmp_path / "page-child").exists()
    ):
        time.sleep(0.05)
    pids = [int((tmp_path / n).read_text()) for n in ("worker", "page-child")]
    assert all(_fork_alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_fork_alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(_fork_alive(p) for p in pids)


def _fork_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def test_a_dead_reports_new_page_directory_is_removed_by_the_next(
    run_a: Path, tmp_path: Path
) -> None:
    from jobbench._proc import PID_MAX

    out = tmp_path / "r"
    out.mkdir()
    dead = out / f"{_write.NEW_PAGES_PREFIX}{PID_MAX}-abc"  # no process has that id
    live = out / f"{_write.NEW_PAGES_PREFIX}{os.getpid()}-abc"
    older = out / f"{_write.NEW_PAGES_PREFIX}abcdef"  # no owner in the name: left alone
    for d in (dead, live, older):
        (d / "x").mkdir(parents=True)
    _write.write_report([run_a], out, drilldowns="pages")
    assert not dead.exists() and live.is_dir() and older.is_dir()
    assert sorted(p.name for p in out.glob(f"{_write.NEW_PAGES_PREFIX}*")) == sorted(
        [live.name, older.name]
    )
