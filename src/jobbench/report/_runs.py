"""Reading run directories for the report, through :mod:`jobbench.rundir`.

Nothing here writes. Every malformed record raises :class:`ReportInputError` naming the file
and the field, after all files were read, so one run of ``jobbench report`` lists every
problem at once; a record that is not its location's (``foreign``) or a symbolic link in the
run directory (``unsafe``) is left out with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import CriterionVerdict, GradeRecord, RubricGrade, TrialRecord
from ..rundir import (
    GradeScan,
    JudgeKeyError,
    Listing,
    RunDir,
    RunLock,
    TrialScan,
    choose_judge_key,
)
from ..scoring import TaskMeta
from ..tasks import Task, display_path, load_dataset, task_digest
from ._fork import in_parts, processes_for


class ReportInputError(ValueError):
    """A run directory cannot be read: the message names each file and field at fault."""


def judge_keys(run_dir: Path) -> list[str]:
    """Judge keys graded in ``run_dir`` (sub-directories of ``grades/``), sorted."""
    return RunDir(run_dir).judge_keys()


def resolve_judge_key(
    run_dirs: list[Path], judge_key: str | None = None, allow_ungraded: bool = False
) -> str | None:
    """The judge key a report shows: :func:`jobbench.rundir.choose_judge_key` (the rule and
    its Returns), with its error as a :class:`ReportInputError`.

    Raises:
        ReportInputError: ``judge_key`` is graded in no run, or several keys exist and none
            is graded in every run (the message lists them per run).
    """
    try:
        return choose_judge_key(run_dirs, judge_key, allow_ungraded=allow_ungraded)
    except JudgeKeyError as exc:
        raise ReportInputError(str(exc)) from exc


@dataclass
class LoadedTrial:
    """A trial record with where it came from and its grade under the chosen judge key.

    Attributes:
        record: ``trial.json``; rel: the trial id; dir: the trial's folder.
        grade: the grade (its verdicts without texts when read with ``slim``, see
            :func:`load_run`); grade_path: its file.
        trajectory_events: lines of ``trajectory.jsonl`` (None without one).
        record_sha256, grade_sha256: SHA-256 (hex) of ``trial.json`` and of the grade file
            as read (None when not known).
        text_stats: the grade's :class:`TextStats` noted before it was slimmed (None when
            the grade is whole: then they are computed from it).
    """

    record: TrialRecord
    rel: str
    dir: Path
    grade: GradeRecord | None = None
    grade_path: Path | None = None
    trajectory_events: int | None = None
    record_sha256: str | None = None
    grade_sha256: str | None = None
    text_stats: TextStats | None = None


_VerdictKey = tuple[int, int, str, str]

TEXT_CAP = 2000
"""Longest reasoning or evidence (characters) a drill-down shows; the grade file keeps it
whole."""


def needs_detail(cv: CriterionVerdict) -> bool:
    """Whether a drill-down must show this verdict with its reasoning and evidence even when
    it shows passing criteria compactly: any verdict but ``pass``, a quote not found in the
    deliverables, or a second opinion that differs."""
    if cv.verdict != "pass" or cv.evidence_found is False:
        return True
    other = (cv.second_opinion or {}).get("verdict")
    return other is not None and other != cv.verdict


@dataclass(frozen=True)
class TextStats:
    """Sizes of a grade's verdict texts (characters, each text counted up to
    :data:`TEXT_CAP`): ``chars`` over every verdict, ``detail_chars`` and ``detail`` (the
    number of verdicts) over those :func:`needs_detail` selects."""

    chars: int = 0
    detail_chars: int = 0
    detail: int = 0

    @classmethod
    def of(cls, grade: GradeRecord) -> TextStats:
        """The stats of ``grade``, counted by the pass that slims grades (:func:`_slim`, the
        one place that counts them; the slim copy made on the way is dropped)."""
        return _slim(grade, {}, None)[1]


class GradeSlimmer:
    """Makes :func:`slim_grade` copies, sharing verdict objects across grades (``pool``)
    and noting each grade's :class:`TextStats` before its texts go (``stats``: trial id →
    stats)."""

    def __init__(self) -> None:
        self.pool: dict[_VerdictKey, CriterionVerdict] = {}
        self.rubric_pool: dict[tuple, RubricGrade] = {}
        self.stats: dict[str, TextStats] = {}

    def __call__(self, grade: GradeRecord) -> GradeRecord:
        slim, self.stats[grade.trial_id] = _slim(grade, self.pool, self.rubric_pool)
        return slim


def slim_grade(
    grade: GradeRecord,
    pool: dict[_VerdictKey, CriterionVerdict],
    rubric_pool: dict[tuple, RubricGrade] | None = None,
) -> GradeRecord:
    """``grade`` without what only a drill-down shows: every criterion verdict keeps its
    positions, verdict and source (the rest at their defaults: no reasoning, evidence or
    second opinion), rubric items lose their overall reasoning, and the judge units (raw
    replies) are dropped. Verdicts equal on those four fields are one shared object from
    ``pool`` (updated here), so that a paper-scale report holds a few hundred verdict
    objects instead of one per criterion and trial. With ``rubric_pool`` (updated here),
    slim rubric items equal on every field they keep (the same shared verdicts included)
    are one shared object too: the trials of one task repeat the same few verdict patterns
    per item. The figures of :func:`jobbench.scoring.trial_result` are the same as for
    ``grade``; the shared objects must not be mutated."""
    return _slim(grade, pool, rubric_pool)[0]


def _slim(
    grade: GradeRecord,
    pool: dict[_VerdictKey, CriterionVerdict],
    rubric_pool: dict[tuple, RubricGrade] | None,
) -> tuple[GradeRecord, TextStats]:
    """:func:`slim_grade` of ``grade`` and, from the same pass over its verdicts, the
    :class:`TextStats` of ``grade`` (each text up to :data:`TEXT_CAP`, detail as
    :func:`needs_detail` selects). A rubric item
    found in ``rubric_pool`` (keyed by its kept fields and its verdicts' pool keys) is taken
    from there without looking its verdicts up one by one."""
    cap = TEXT_CAP
    chars = detail_chars = detail = 0
    rubrics = []
    for rg in grade.rubrics:
        keys: list[_VerdictKey] = []
        for cv in rg.criteria:
            n_r, n_e = len(cv.reasoning), len(cv.evidence)
            n = (n_r if n_r < cap else cap) + (n_e if n_e < cap else cap)
            chars += n
            verdict = cv.verdict
            # needs_detail(cv), asked only when a second opinion could make a pass need it
            if (
                verdict != "pass"
                or cv.evidence_found is False
                or (cv.second_opinion and needs_detail(cv))
            ):
                detail_chars += n
                detail += 1
            keys.append((cv.rubric_index, cv.criterion_index, verdict, cv.source))
        rkey: tuple = ()
        if rubric_pool is not None:
            rkey = (
                rg.index,
                rg.id,
                rg.weight,
                rg.passed,
                tuple(rg.requires),
                rg.model_verdict,
                rg.disagreement,
                rg.chain_break,
                rg.undecided,
                tuple(rg.images),
                tuple(rg.images_left_out),
                tuple(keys),
            )
            slim = rubric_pool.get(rkey)
            if slim is not None:
                rubrics.append(slim)
                continue
        crits = []
        for key in keys:
            shared = pool.get(key)
            if shared is None:
                shared = pool[key] = CriterionVerdict(
                    rubric_index=key[0], criterion_index=key[1], verdict=key[2], source=key[3]
                )
            crits.append(shared)
        slim = rg.model_copy(update={"criteria": crits, "overall_reasoning": None})
        if rubric_pool is not None:
            rubric_pool[rkey] = slim
        rubrics.append(slim)
    out = grade.model_copy(update={"rubrics": rubrics, "units": []})
    return out, TextStats(chars, detail_chars, detail)


@dataclass
class RunData:
    """Everything read from one run directory.

    Attributes:
        name: the directory name; path: its absolute path.
        lock: ``lock.json``.
        task_ids: tasks of the run (``lock.json`` ``tasks`` keys, in file order).
        digests: task id → digest from ``lock.json``.
        lock_agents: (agent, model) pairs declared in ``lock.json``.
        epochs: ``lock.json`` ``epochs`` (>= 1).
        judge_key: grades read from ``grades/<judge_key>/`` (None: no grades).
        trials: every finished trial with its grade.
        tasks: task id → :class:`jobbench.tasks.Task` from the dataset, when it can be read.
        metas: task id → :class:`jobbench.scoring.TaskMeta` (maximum and counts).
        warnings: things the report must show (changed tasks, orphan grades, …).
        invalid: ``lock.json`` ``invalid_tasks``: tasks invalid when the run was made
            (``--skip-invalid``), not run, counted as missing; id → problems and maximum.
        dataset_problems: ``lock.json`` ``dataset_problems`` (errors outside any task).
    """

    name: str
    path: Path
    lock: RunLock
    task_ids: list[str]
    digests: dict[str, str]
    lock_agents: list[tuple[str, str]]
    epochs: int
    judge_key: str | None
    trials: list[LoadedTrial] = field(default_factory=list)
    tasks: dict[str, Task] = field(default_factory=dict)
    metas: dict[str, TaskMeta] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    invalid: dict[str, dict[str, Any]] = field(default_factory=dict)
    dataset_problems: list[str] = field(default_factory=list)


def _load_dataset_tasks(run: RunData) -> None:
    root = run.lock.dataset_root
    if not root:
        run.warnings.append(
            f"{run.name}: lock.json has no dataset_root; rubric and criterion texts are not shown"
        )
        return
    try:
        ds = load_dataset(Path(root))
    except (FileNotFoundError, OSError) as exc:
        run.warnings.append(
            f"{run.name}: dataset {root} not readable ({exc}); "
            "rubric and criterion texts are not shown"
        )
        return
    by_id = {t.id: t for t in ds.tasks}
    changed = []
    for task_id in run.task_ids:
        if task_id in run.invalid:  # judged as it was when the run was made: invalid, not run
            continue
        t = by_id.get(task_id)
        if t is None:
            continue
        run.tasks[task_id] = t
        try:
            if run.digests.get(task_id) and task_digest(t) != run.digests[task_id]:
                changed.append(task_id)
        except OSError:
            changed.append(task_id)
    absent = [t for t in run.task_ids if t not in by_id and t not in run.invalid]
    if absent:
        run.warnings.append(
            f"{run.name}: {len(absent)} task(s) of lock.json not in dataset {root}: "
            f"{', '.join(absent[:10])}"
        )
    if changed:
        run.warnings.append(
            f"{run.name}: {len(changed)} task(s) changed in the dataset since the run "
            "(digest differs): "
            f"{', '.join(changed[:10])}; texts shown are today's"
        )


READ_PER_PROCESS = 200
"""Fewest records (trial records and grades) worth a forked reader (each takes about 0.25 ms
to read and validate)."""


@dataclass
class _Part:
    """One slice of a run's records (:func:`_read_part`): ``trials`` with each one's
    ``trajectory_events``; ``grades`` (None without a judge key) with ``text_stats`` (trial
    id → :class:`TextStats`, when slimmed)."""

    trials: TrialScan
    trajectory_events: dict[str, int | None]
    grades: GradeScan | None
    text_stats: dict[str, TextStats]


def _read_part(
    what: tuple[RunDir, str | None, bool, Listing, Listing | None], part: tuple[int, int]
) -> _Part:
    """Slice ``part`` (see :meth:`jobbench.rundir.RunDir.trials`) of the trial records and
    of the grades under ``judge_key`` of ``run_dir`` as listed, grades slimmed when
    ``slim`` (``what = (run_dir, judge_key, slim, trial listing, grade listing)``)."""
    rd, judge_key, slim, trial_listing, grade_listing = what
    scan = rd.trials(part=part, listing=trial_listing)
    events = {tid: rd.trajectory_events(tid) for tid in scan.records}
    if judge_key is None:
        return _Part(scan, events, None, {})
    slimmer = GradeSlimmer() if slim else None
    grades = rd.grades(judge_key, transform=slimmer, part=part, listing=grade_listing)
    return _Part(scan, events, grades, slimmer.stats if slimmer is not None else {})


def load_run(run_dir: Path | str, judge_key: str | None, *, slim: bool = False) -> RunData:
    """Read one run directory; every record is validated once, as it is read. The records
    are read in slices by several processes where :func:`jobbench.report._fork.in_parts`
    can fork (the result is the same as read by one).

    Args:
        run_dir: ``runs/<name>``.
        judge_key: read grades from ``grades/<judge_key>/`` (None: ignore grades).
        slim: keep each grade as :func:`slim_grade` makes it, right after it is validated
            (the report does: its drill-downs read the texts again, one task at a time, from
            the grade files, checked against ``grade_sha256``).

    Returns:
        A :class:`RunData`; trials sorted by trial id.

    Raises:
        ReportInputError: missing/malformed ``lock.json``, or any ``trial.json`` or grade file
            that is not a valid record (all problems listed, each with file and field).
    """
    run_dir = Path(run_dir).resolve()
    problems: list[str] = []
    if not run_dir.is_dir():
        raise ReportInputError(f"{display_path(run_dir)}: no such run directory")
    rd = RunDir(run_dir)
    loaded_lock = rd.read_lock()
    if loaded_lock.record is None:
        raise ReportInputError("\n".join(str(p) for p in loaded_lock.problems))
    lock = loaded_lock.record
    run = RunData(
        name=run_dir.name,
        path=run_dir,
        lock=lock,
        task_ids=list(lock.tasks),
        digests=dict(lock.tasks),
        lock_agents=[(a.agent, a.model) for a in lock.agents],
        epochs=lock.epochs,
        judge_key=judge_key,
        invalid={k: v.model_dump() for k, v in lock.invalid_tasks.items()},
        dataset_problems=list(lock.dataset_problems),
    )
    run.task_ids += [t for t in run.invalid if t not in run.task_ids]
    listings = (rd.trial_listing(), rd.grade_listing(judge_key) if judge_key else None)
    records = len(listings[0].ids) + (len(listings[1].ids) if listings[1] else 0)
    parts = in_parts(
        _read_part, (rd, judge_key, slim, *listings), processes_for(records, READ_PER_PROCESS)
    )
    ignored: list[str] = []
    for part in parts:
        for p in part.trials.problems:
            (problems if p.kind == "corrupt" else ignored).append(str(p))
    by_id: dict[str, LoadedTrial] = {}
    for part in parts:
        scan = part.trials
        for tid, rec in scan.records.items():
            by_id[tid] = LoadedTrial(
                record=rec,
                rel=tid,
                dir=scan.dirs[tid],
                trajectory_events=part.trajectory_events[tid],
                record_sha256=scan.sha256.get(tid),
            )
    if judge_key is not None:
        orphans = []
        for part in parts:
            grades = part.grades
            assert grades is not None  # read whenever there is a judge key
            for p in grades.problems:
                (problems if p.kind == "corrupt" else ignored).append(str(p))
            for tid, grade in grades.records.items():
                lt = by_id.get(tid)
                if lt is None:
                    orphans.append(tid)
                    continue
                lt.grade, lt.grade_path = grade, grades.paths[tid]
                lt.grade_sha256 = grades.sha256.get(tid)
                lt.text_stats = part.text_stats.get(grade.trial_id)
        if orphans:
            run.warnings.append(
                f"{run.name}: {len(orphans)} grade(s) under {judge_key} without a trial.json: "
                f"{', '.join(orphans[:10])}"
            )
    if ignored:
        more = f"; … {len(ignored) - 5} more" if len(ignored) > 5 else ""
        run.warnings.append(
            f"{run.name}: {len(ignored)} record(s) left out because they are not "
            "the run's own (a record whose identity differs from its path, a "
            "newer schema, or a symbolic link): " + "; ".join(ignored[:5]) + more
        )
    if problems:
        raise ReportInputError("\n".join(problems))
    run.trials = sorted(by_id.values(), key=lambda t: t.record.trial_id)
    dropped = [t.record.trial_id for t in run.trials if t.record.task_id in run.invalid]
    if dropped:
        run.trials = [t for t in run.trials if t.record.task_id not in run.invalid]
        run.warnings.append(
            f"{run.name}: {len(dropped)} trial(s) of task(s) now listed as invalid "
            "in lock.json are "
            f"left out (they ran on an earlier, valid version): {', '.join(dropped[:10])}"
        )
    if run.invalid:
        listed = [
            f"{tid} ({(entry.get('problems') or ['invalid'])[0]})"
            for tid, entry in run.invalid.items()
        ]
        run.warnings.append(
            f"{run.name}: {len(run.invalid)} task(s) were invalid and not run "
            "(--skip-invalid); each "
            "counts as missing (0) in micro and macro: "
            + "; ".join(listed[:10])
            + (f"; … {len(listed) - 10} more" if len(listed) > 10 else "")
        )
    if run.dataset_problems:
        run.warnings.append(
            f"{run.name}: the dataset had {len(run.dataset_problems)} problem(s) outside any task "
            "directory when the run was made (they may hide tasks that were never run): "
            + "; ".join(run.dataset_problems[:5])
        )
    extra = sorted({t.record.task_id for t in run.trials} - set(run.task_ids))
    if extra:
        run.warnings.append(
            f"{run.name}: {len(extra)} trial task(s) not in lock.json, reported anyway: "
            f"{', '.join(extra[:10])}"
        )
        run.task_ids += extra
    _load_dataset_tasks(run)
    graded: dict[str, GradeRecord] = {}
    for lt in run.trials:
        if lt.grade is not None:
            graded.setdefault(lt.record.task_id, lt.grade)
    for task_id in run.task_ids:
        t = run.tasks.get(task_id)
        g = graded.get(task_id)
        if task_id in run.invalid:
            entry = run.invalid[task_id]
            mp = entry.get("max_points")
            run.metas[task_id] = TaskMeta(
                task_id=task_id,
                max_points=float(mp) if mp is not None else None,
                invalid=list(entry.get("problems") or ["invalid"]),
            )
        elif t is not None:
            run.metas[task_id] = TaskMeta(
                task_id=task_id,
                max_points=t.total_weight,
                rubrics=len(t.rubrics),
                criteria=t.criterion_count,
            )
        elif g is not None:  # no dataset: any grade of the task knows its maximum and counts
            run.metas[task_id] = TaskMeta(
                task_id=task_id,
                max_points=g.max_score,
                rubrics=len(g.rubrics),
                criteria=sum(len(r.criteria) for r in g.rubrics),
            )
        else:
            run.metas[task_id] = TaskMeta(task_id=task_id)
    return run
