"""Deliverable sets with known-correct verdicts (``expected.json``).

A *set* is a folder holding ``deliverables/`` and ``expected.json``::

    <task>/solution/decoys/<name>/deliverables/...     (the sample split's decoys)
    <task>/solution/decoys/<name>/expected.json
    <any folder>/<name>/deliverables/ + expected.json (with the task named separately)

``expected.json``::

    {"rubrics": [{"index": 0, "criteria": [true, false]}, ...], "note": "...", "score": 0.4}

``index`` is the 0-based rubric position in RUBRICS.json; ``criteria`` holds one boolean per
criterion of that rubric, in order (``null`` = not known; rubrics left out are not known
either). Other keys (``score``, ``note``) are informative only: the expected score is
recomputed from the criteria with the chain rule. The file is parsed by
:func:`jobbench.tasks.read_expected`, the reader the decoy gate uses too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..rundir import trial_id
from ..tasks import EXPECTED, ExpectedVerdicts, Task, display_path, read_expected
from ._metrics import ScorePoint

DELIVERABLES = "deliverables"
SET_AGENT = "expected"
"""Agent name used in the trial ids of expected-verdict sets: ``<task>/expected@<set>/epoch-1``."""


class ExpectedFileError(ValueError):
    """An ``expected.json`` is malformed or does not fit its task (file and field named)."""


@dataclass
class ExpectedSet:
    """One deliverable set with expected verdicts.

    Attributes:
        name: the set's path relative to the task's ``solution/`` folder (e.g.
            ``decoys/january_prices``) or to the folder it was found in.
        task: the task whose rubrics apply.
        dir: the set folder; deliverables_dir: its ``deliverables/`` folder.
        verdicts: (rubric index, criterion index) → True (pass) / False (fail) / None (unknown),
            for every criterion of the task.
        note: the file's ``note``, if any.
        trial_id: ``<task_id>/expected@<name with / as .>/epoch-1`` (a valid trial id, so
            grades land in the usual ``grades/<key>/<trial_id>.json`` layout).
    """

    name: str
    task: Task
    dir: Path
    deliverables_dir: Path
    verdicts: dict[tuple[int, int], bool | None] = field(default_factory=dict)
    note: str = ""

    @property
    def trial_id(self) -> str:
        return trial_id(self.task.id, SET_AGENT, self.name.replace("/", "."), 1)

    @property
    def expected_score(self) -> ScorePoint | None:
        """The expected grade (chain rule over the expected verdicts), or None when some
        criterion's expectation is unknown."""
        return expected_score(self.task, self.verdicts)


def load_expected(path: Path, task: Task) -> tuple[ExpectedVerdicts, str]:
    """Read and validate one ``expected.json`` against its task with the one reader,
    :func:`jobbench.tasks.read_expected`.

    Args:
        path: the file.
        task: the task whose rubrics the file describes.

    Returns:
        (verdicts for every criterion of the task — None where not given, the ``note``).

    Raises:
        ExpectedFileError: missing or unreadable file, invalid JSON, or a field that does not
            fit the task (every problem, each naming the file and the JSON path, e.g.
            ``rubrics[2].criteria``).
    """
    parsed = read_expected(path, task)
    if parsed.problems:
        raise ExpectedFileError("; ".join(parsed.problems))
    return parsed.verdicts, parsed.note


def expected_score(task: Task, verdicts: ExpectedVerdicts) -> ScorePoint | None:
    """Points a deliverable set should earn, by the chain rule of
    :func:`jobbench.scoring.verdict_score`.

    Returns:
        The :class:`ScorePoint`, or None when any criterion's expectation is unknown.
    """
    from ..scoring import verdict_score

    _, ts = verdict_score(task.rubrics, verdicts)
    if ts.decided_count < ts.total_count:
        return None
    return ScorePoint(passed_weight=ts.passed_weight, max_score=ts.max_score)


def _set_at(folder: Path, name: str, task: Task) -> ExpectedSet:
    verdicts, note = load_expected(folder / EXPECTED, task)
    return ExpectedSet(
        name=name,
        task=task,
        dir=folder,
        deliverables_dir=folder / DELIVERABLES,
        verdicts=verdicts,
        note=note,
    )


def _set_dirs(base: Path) -> list[Path]:
    out = []
    for p in sorted(Path(base).rglob(EXPECTED)):
        d = p.parent
        if (
            p.is_file()
            and not p.is_symlink()
            and (d / DELIVERABLES).is_dir()
            and not (d / DELIVERABLES).is_symlink()
        ):
            out.append(d)
    return out


def discover_sets(tasks: Iterable[Task]) -> tuple[list[ExpectedSet], list[str]]:
    """Every set under the tasks' ``solution/`` folders (any depth: ``solution/decoys/<name>/``,
    or ``solution/`` itself when it holds ``deliverables/`` and ``expected.json``).

    Args:
        tasks: loaded tasks (``Task.solution_dir`` is used).

    Returns:
        (sets sorted by trial id, problems: one message per malformed ``expected.json``;
        a malformed file leaves only its own set out).
    """
    sets: list[ExpectedSet] = []
    problems: list[str] = []
    for task in tasks:
        sol = task.solution_dir
        if sol is None or not Path(sol).is_dir():
            continue
        for d in _set_dirs(sol):
            name = d.relative_to(sol).as_posix()
            name = "solution" if name == "." else name
            try:
                sets.append(_set_at(d, name, task))
            except ExpectedFileError as exc:
                problems.append(str(exc))
    return sorted(sets, key=lambda s: s.trial_id), problems


def sets_in_folder(folder: Path, task: Task) -> list[ExpectedSet]:
    """Sets in any folder of the same form, for one task: ``folder`` itself when it holds
    ``deliverables/`` and ``expected.json``, else every sub-folder (any depth) that does.

    Raises:
        ExpectedFileError: no set found, or a malformed ``expected.json``.
    """
    folder = Path(folder)
    dirs = _set_dirs(folder)
    if not dirs:
        raise ExpectedFileError(
            f"{display_path(folder)}: no folder with {DELIVERABLES}/ and {EXPECTED} found"
        )
    sets = []
    for d in dirs:
        rel = d.relative_to(folder).as_posix()
        sets.append(_set_at(d, folder.name if rel == "." else rel, task))
    return sorted(sets, key=lambda s: s.trial_id)


def expected_by_trial(sets: Iterable[ExpectedSet]) -> dict[str, dict[tuple[int, int], bool | None]]:
    """trial id → expected verdicts (the form :func:`jobbench.calibrate.calibrate` takes).

    Raises:
        ExpectedFileError: two sets map to the same trial id.
    """
    out: dict[str, dict[tuple[int, int], bool | None]] = {}
    src: dict[str, Any] = {}
    for s in sets:
        if s.trial_id in out:
            raise ExpectedFileError(
                f"{display_path(s.dir)} and {display_path(src[s.trial_id])}: "
                f"both map to trial id {s.trial_id}"
            )
        out[s.trial_id] = s.verdicts
        src[s.trial_id] = s.dir
    return out
