"""``jobbench export official RUN DATASET_COPY``: write a run in the public JobBench layout.

The public evaluation repository (Job-Bench/job-bench-eval: ``eval/README.md``, "Output
layout and scores", and the runners ``eval/run_benchmark_*.sh``) keeps results next to each
task::

    <dataset>/<split>/<occupation>/taskN/
        model_output/<label>/     final deliverables (only when there are any)
        model_traj/<label>/       <occupation>_taskN_<label>_attempt<K>_<YYYYmmdd_HHMMSS>.jsonl
                                  per attempt, and attempt_index.tsv (one row per attempt:
                                  task_name, model_id, model_name, attempt, status, exit_code,
                                  timeout_seconds, session_id, started_at, finished_at,
                                  traj_file)
        eval_result/eval_<label>/<judge-name>[_<RUN_LABEL>]_judge.json

The reports are written by the public-layout writer of :mod:`jobbench.judge._public` (the
same as ``jobbench grade DATASET``): one file per judge key, undecided rubrics left out so
the public tools judge them again, no report for a trial without deliverables, and no file
replaced that JobBench did not write. ``model_traj/<label>/.jobbench-export.json`` records
what the export wrote for a label; a ``model_output/<label>/`` or ``model_traj/<label>/``
without it is not ours and is never replaced without ``force`` (which first moves it to
``<task>/.jobbench-backups/<UTC time>/``). Conflicts are all found before anything is
written.

Labels: ``<model>-<agent>`` with ``/`` → ``_`` and ``.`` → ``-`` (the public runners'
convention), just ``<agent>`` for agents without a model, and ``-epoch<N>`` appended for
epochs after the first. Attempt statuses: ``success``, ``timeout`` or ``failed`` (an agent
that ended without any deliverable counts as ``failed``, as in the public runners); times
are UTC. The export never writes into the dataset the run was made from.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .._io import atomic_write_json, atomic_write_text
from ..records import GradeRecord, TrialRecord, TrialStatus
from ..rundir import RunDir, UnsafeIdError, check_component, safe_name
from ..tasks import discover_task_dirs, load_task, task_digest
from ._lock import RunConfigError, read_lock

MANIFEST = ".jobbench-export.json"
"""What the export wrote for one label of one task (inside ``model_traj/<label>/``)."""
ATTEMPT_INDEX = "attempt_index.tsv"
ATTEMPT_COLUMNS = (
    "task_name",
    "model_id",
    "model_name",
    "attempt",
    "status",
    "exit_code",
    "timeout_seconds",
    "session_id",
    "started_at",
    "finished_at",
    "traj_file",
)


@dataclass
class ExportSummary:
    """What :func:`export_official` wrote.

    Attributes:
        outputs: ``model_output`` folders written; trajectories: ``model_traj`` trajectory
        files; eval_results: report files written; partial_reports: those of them with
        undecided rubrics left out; empty: trials without deliverables (no
        ``model_output`` folder and no report, as the public runners and judge);
        missing_tasks: task ids absent from the copy; backups: files and folders moved
        aside (``force``); problems: records that could not be read (file and reason).
    """

    outputs: int = 0
    trajectories: int = 0
    eval_results: int = 0
    partial_reports: int = 0
    empty: int = 0
    missing_tasks: list[str] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def export_label(agent: str, model: str | None, epoch: int) -> str:
    """The public-layout label of a trial (see module docstring)."""
    if not model or model == "-":
        base = agent
    else:
        base = f"{model.replace('/', '_').replace('.', '-')}-{agent}"
    base = safe_name(base)
    return base if epoch == 1 else f"{base}-epoch{epoch}"


def _inside(a: Path, b: Path) -> bool:
    try:
        a.relative_to(b)
        return True
    except ValueError:
        return False


def attempt_events(trajectory: Path) -> dict[int, str]:
    """The trajectory for the public layout, per attempt (1-based): a CLI agent's raw events
    when present, split at our ``agent_attempt`` markers; otherwise our events unchanged
    (all in attempt 1)."""
    lines = trajectory.read_text(encoding="utf-8").splitlines() if trajectory.exists() else []
    raw: dict[int, list[str]] = {}
    attempt = 1
    for line in lines:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "agent_attempt" and isinstance(ev.get("attempt"), int):
            attempt = ev["attempt"]
        elif ev.get("type") == "cli_event" and isinstance(ev.get("event"), dict):
            raw.setdefault(attempt, []).append(json.dumps(ev["event"], ensure_ascii=False))
    if raw:
        return {n: "\n".join(v) + "\n" for n, v in sorted(raw.items())}
    return {1: "\n".join(lines) + ("\n" if lines else "")}


def _stamp(iso: str | None) -> str:
    """``YYYYmmdd_HHMMSS`` of an ISO time (the public trajectory names' stamp)."""
    try:
        return datetime.fromisoformat(str(iso)).strftime("%Y%m%d_%H%M%S")
    except ValueError:
        return "00000000_000000"


def _utc_z(iso: str | None) -> str:
    """An ISO time as the public index writes it (``2026-01-01T00:00:00Z``)."""
    try:
        return datetime.fromisoformat(str(iso)).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return ""


def attempt_rows(rec: TrialRecord) -> list[dict[str, Any]]:
    """One dict per attempt of the trial (``details.agent_attempts`` when recorded, else
    one from the record), with the public status names."""
    recorded = rec.details.get("agent_attempts")
    if isinstance(recorded, list) and recorded and all(isinstance(a, dict) for a in recorded):
        return [dict(a) for a in recorded]
    timeout = (rec.limits or {}).get("timeout")
    if rec.status == TrialStatus.ok:
        status = "success"
    elif rec.status == TrialStatus.agent_timeout and rec.details.get("timed_out", True):
        status = "timeout"
    else:
        status = "failed"
    exit_code = rec.details.get("exit_code")
    if exit_code is None:
        exit_code = {"success": 0, "timeout": 124}.get(status, 1)
    return [
        {
            "attempt": 1,
            "status": status,
            "exit_code": exit_code,
            "timeout_seconds": timeout,
            "session_id": rec.session_id,
            "started_at": rec.started_at,
            "finished_at": rec.finished_at,
        }
    ]


def _tsv(rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(ATTEMPT_COLUMNS)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return buf.getvalue()


def _ours(traj_dir: Path) -> dict[str, Any] | None:
    """The export manifest of a label, or None when the folder is not ours."""
    m = traj_dir / MANIFEST
    if m.is_symlink() or not m.is_file():
        return None
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("jobbench_export") is True else None


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


class _TaskLocator:
    """Finds a run's task in a dataset copy: by ``split/occupation/taskN``, else (a copy
    whose split folder has another name, e.g. ``datasets/sample`` copied to ``dscopy``) by
    ``occupation/taskN`` when exactly one task of the copy has it, or exactly one of those
    has the run's task digest."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        self.exact: dict[str, Path] = {}
        self.by_name: dict[tuple[str, str], list[Path]] = {}
        for split, occ, d in discover_task_dirs(copy):
            self.exact[f"{split}/{occ}/{d.name}"] = d
            self.by_name.setdefault((occ, d.name), []).append(d)
        self.found: dict[str, Path | None] = {}
        self.ambiguous: dict[str, list[Path]] = {}
        self.renamed: dict[str, Path] = {}
        self.different: dict[str, Path] = {}

    @staticmethod
    def _digest(task_dir: Path) -> str | None:
        try:
            return task_digest(load_task(task_dir))
        except Exception:  # an invalid or unreadable copy of the task: no digest to compare
            return None

    def __call__(self, task_id: str, digest: str | None) -> Path | None:
        if task_id in self.found:
            return self.found[task_id]
        d = self.exact.get(task_id)
        parts = task_id.split("/")
        if d is None and len(parts) == 3:
            cands = self.by_name.get((parts[1], parts[2]), [])
            if len(cands) == 1:
                d = cands[0]
            elif len(cands) > 1:
                same = [c for c in cands if digest and self._digest(c) == digest]
                if len(same) == 1:
                    d = same[0]
                else:
                    self.ambiguous[task_id] = cands
            if d is not None:
                self.renamed[task_id] = d
                if digest and self._digest(d) != digest:
                    self.different[task_id] = d
        self.found[task_id] = d
        return d

    def notes(self) -> list[str]:
        """Problems worth a warning: ambiguous matches and copies of another version."""
        out = []
        for tid, cands in self.ambiguous.items():
            out.append(
                f"task {tid}: ambiguous in {self.copy}: {len(cands)} tasks named {'/'.join(tid.split('/')[1:])} "
                f"({', '.join(str(c) for c in cands)}) and not exactly one has the run's task digest; skipped"
            )
        for tid, d in self.different.items():
            out.append(
                f"task {tid}: exported into {d}, whose files differ from the version the run used (digest)"
            )
        return out


def _check_something_matches(trials: list[TrialRecord], locate: _TaskLocator, copy: Path) -> None:
    """Raise when the run has trials and none of their tasks is found in ``copy``."""
    wanted: dict[str, str | None] = {}
    for rec in trials:
        wanted.setdefault(rec.task_id, rec.task_digest)
    if not wanted or any(locate(t, d) is not None for t, d in wanted.items()):
        return
    ids = sorted(wanted)
    shown = ", ".join(ids[:5]) + (f", … {len(ids) - 5} more" if len(ids) > 5 else "")
    why = "; ".join(locate.notes())
    raise RunConfigError(
        f"none of the run's {len(ids)} task(s) ({shown}) is in {copy} (looked for <split>/<occupation>/taskN, then "
        f"<occupation>/taskN under any split folder){': ' + why if why else ''}; nothing was written. Is it a copy of "
        "the dataset the run used (its root, a split folder, or an occupation folder)?"
    )


@dataclass
class _Unit:
    """What the export writes for one trial."""

    rec: TrialRecord
    tdir: Path
    label: str
    files: list[tuple[str, str]]
    reports: list[tuple[str, Path, dict[str, Any]]] = field(default_factory=list)

    @property
    def out_dir(self) -> Path:
        return self.tdir / "model_output" / self.label

    @property
    def traj_dir(self) -> Path:
        return self.tdir / "model_traj" / self.label


def export_official(
    run_dir: Path, dataset_copy: Path, *, judge_key: str | None = None, force: bool = False
) -> ExportSummary:
    """Write the run's deliverables, trajectories, attempt indexes and grades into
    ``dataset_copy`` in the public layout (see module docstring).

    Args:
        run_dir: a run directory (has ``lock.json``).
        dataset_copy: a copy of the dataset (public or Hugging Face layout).
        judge_key: export only grades of this judge key (default: all, one report each).
        force: replace files and folders JobBench did not write (they are moved to
            ``<task>/.jobbench-backups/<UTC time>/`` first).

    Returns:
        :class:`ExportSummary`.

    Tasks are found in the copy by ``split/occupation/taskN``, else by
    ``occupation/taskN`` when the copy's split folder has another name (unambiguous, or
    disambiguated by the run's task digest).

    Raises:
        RunConfigError: not a run directory, ``dataset_copy`` is (inside) the dataset
            the run used or the run directory, none of the run's tasks is found in
            ``dataset_copy``, or two judge keys would write the same report file (choose
            one with ``judge_key``); nothing is written then.
        OverwriteRefused: files or folders the export would replace were not written by
            JobBench (all are named; nothing is written).
        FileNotFoundError: ``dataset_copy`` is not a directory.
    """
    from ..judge import (
        OverwriteRefused,
        ReportWriter,
        backup,
        owner_key,
        public_report,
        public_report_name,
        rubric_texts,
    )

    run_dir = Path(os.path.abspath(run_dir))
    copy = Path(os.path.abspath(dataset_copy))
    lock = read_lock(run_dir)
    if lock is None:
        raise RunConfigError(f"{run_dir}: not a run directory (no lock.json)")
    if not copy.is_dir():
        raise FileNotFoundError(f"{copy}: no such directory")
    src_root = Path(os.path.abspath(lock.dataset_root or "/nonexistent"))
    for a, b in ((copy, src_root), (src_root, copy)):
        if _inside(a, b):
            raise RunConfigError(
                f"refusing to export into {copy}: it overlaps the dataset the run used "
                f"({src_root}); export into a copy"
            )
    if _inside(copy, run_dir) or _inside(run_dir, copy):
        raise RunConfigError(f"refusing to export into {copy}: it overlaps the run directory")
    summary = ExportSummary()
    locate = _TaskLocator(copy)
    texts: dict[str, list[tuple[str, list[str]]]] = {}
    rd = RunDir(run_dir)
    if judge_key is not None:
        try:
            check_component(judge_key, "judge key")
        except UnsafeIdError as exc:
            raise RunConfigError(str(exc)) from None
    scan = rd.trials()
    summary.problems += [str(p) for p in scan.problems]
    records = list(scan.records.values())
    _check_something_matches(records, locate, copy)
    keys = [judge_key] if judge_key else rd.judge_keys()

    # plan: what every trial writes; every conflict is found before anything is written
    units: list[_Unit] = []
    for rec in records:
        tdir = locate(rec.task_id, rec.task_digest)
        if tdir is None:
            if rec.task_id not in summary.missing_tasks and rec.task_id not in locate.ambiguous:
                summary.missing_tasks.append(rec.task_id)
            continue
        deliverables = rd.deliverables(rec.trial_id)
        if deliverables.problem is not None:
            summary.problems.append(f"{deliverables.problem}; its deliverables are not exported")
        unit = _Unit(
            rec, tdir, export_label(rec.agent, rec.model, rec.epoch), deliverables.manifest()
        )
        if unit.files:
            for key in keys:
                loaded = rd.read_grade(key, rec.trial_id)
                if loaded.missing:
                    continue
                if loaded.record is None:
                    summary.problems += [f"{p}: unreadable grade" for p in loaded.problems]
                    continue
                grade: GradeRecord = loaded.record
                if rec.task_id not in texts:
                    try:
                        texts[rec.task_id] = rubric_texts(load_task(tdir))
                    except Exception:  # an invalid copy of the task: reports without rubric texts
                        texts[rec.task_id] = []
                judge = {**grade.judge, "key": grade.judge.get("key") or key}
                path = tdir / "eval_result" / f"eval_{unit.label}" / public_report_name(judge)
                payload = public_report(
                    grade, texts[rec.task_id], unit.label, str(grade.judge.get("model") or key)
                )
                payload["jobbench"]["judge_key"] = judge["key"]
                unit.reports.append((judge["key"], path, payload))
        units.append(unit)
    targets: dict[Path, str] = {}
    for u in units:
        for key, path, _ in u.reports:
            if path in targets and targets[path] != key:
                raise RunConfigError(
                    f"judge keys {targets[path]} and {key} would both write {path}; export one "
                    "of them with --judge-key"
                )
            targets[path] = key
    writer = ReportWriter(force=force)
    refused: list[str] = []
    for u in units:
        if _ours(u.traj_dir) is None:
            refused += [
                f"{p} (not written by JobBench)"
                for p in (u.out_dir, u.traj_dir)
                if p.exists() or p.is_symlink()
            ]
        refused += [
            why for key, path, _ in u.reports if (why := writer.problem(path, key)) is not None
        ]
    if refused and not force:
        raise OverwriteRefused(
            refused,
            "export into a fresh copy, or rerun with --force to replace them (a backup "
            "is kept under <task>/.jobbench-backups/)",
        )

    for u in units:
        rec = u.rec
        if _ours(u.traj_dir) is None:
            for p in (u.out_dir, u.traj_dir):
                if p.exists() or p.is_symlink():
                    summary.backups.append(backup(u.tdir, p, writer._stamp))
        else:
            _remove(u.out_dir)
        u.traj_dir.mkdir(parents=True, exist_ok=True)
        old = _ours(u.traj_dir) or {}
        for name in old.get("files", []):
            p = u.traj_dir / str(name)
            if isinstance(name, str) and "/" not in name and name not in ("", ".", ".."):
                _remove(p)
        new_reports = {path for _, path, _ in u.reports}
        reports = {path.name for path in new_reports}
        for name in old.get("reports", []):  # ours from an earlier export, stale now
            p = u.tdir / "eval_result" / f"eval_{u.label}" / str(name)
            if "/" in str(name) or p in new_reports or p.is_symlink() or not p.is_file():
                continue
            ours, key = owner_key(p)
            if ours and key in keys:  # a judge key exported now that has no grade to write
                p.unlink()
            elif ours:
                reports.add(p.name)  # another judge key's: kept, and still ours
        if u.files:
            rd.deliverables(rec.trial_id).copy_to(u.out_dir)
            summary.outputs += 1
        else:
            summary.empty += 1
        occupation, task_name = rec.task_id.split("/")[1:3]
        events = attempt_events(rd.trajectory_file(rec.trial_id))
        rows = []
        written = []
        for att in attempt_rows(rec):
            n = int(att.get("attempt") or 1)
            stamp = _stamp(att.get("started_at"))
            name = f"{occupation}_{task_name}_{u.label}_attempt{n}_{stamp}.jsonl"
            atomic_write_text(u.traj_dir / name, events.get(n, ""))
            written.append(name)
            summary.trajectories += 1
            rows.append(
                [
                    f"{occupation}_{task_name}",
                    rec.model,
                    u.label,
                    n,
                    att.get("status"),
                    att.get("exit_code"),
                    _seconds_text(att.get("timeout_seconds")),
                    att.get("session_id"),
                    _utc_z(att.get("started_at")),
                    _utc_z(att.get("finished_at")),
                    str(u.traj_dir / name),
                ]
            )
        atomic_write_text(u.traj_dir / ATTEMPT_INDEX, _tsv(rows))
        written.append(ATTEMPT_INDEX)
        atomic_write_json(
            u.traj_dir / MANIFEST,
            {
                "jobbench_export": True,
                "trial_id": rec.trial_id,
                "run_dir": str(run_dir),
                "files": written,
                "reports": sorted(reports),
            },
        )
        for _, path, payload in u.reports:
            writer.write(u.tdir, path, payload)
            summary.eval_results += 1
            summary.partial_reports += bool(payload["jobbench"]["partial"])
    summary.backups += writer.backups
    summary.problems = locate.notes() + summary.problems
    return summary


def _seconds_text(x: Any) -> str:
    """Seconds as the public index writes them (``3600``)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return f"{x:g}"
    return ""
