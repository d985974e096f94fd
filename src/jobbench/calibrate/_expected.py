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
recomputed from the criteria with the chain rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..rundir import trial_id
from ..tasks import Task, display_path
from ._metrics import ScorePoint

EXPECTED = "expected.json"
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


def load_expected(path: Path, task: Task) -> tuple[dict[tuple[int, int], bool | None], str]:
    """Read and validate one ``expected.json`` against its task.

    Args:
        path: the file.
        task: the task whose rubrics the file describes.

    Returns:
        (verdicts for every criterion of the task — None where not given, the ``note``).

    Raises:
        ExpectedFileError: unreadable file, invalid JSON, or a field that does not fit the
            task (the message names the file and the JSON path, e.g. ``rubrics[2].criteria``).
    """
    where = display_path(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExpectedFileError(f"{where}: cannot read ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise ExpectedFileError(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("rubrics"), list):
        raise ExpectedFileError(
            f'{where}: field rubrics: must be a list of {{"index", "criteria"}} objects'
        )
    out: dict[tuple[int, int], bool | None] = {
        (r.index, c.index): None for r in task.rubrics for c in r.criteria
    }
    by_index = {r.index: r for r in task.rubrics}
    seen: set[int] = set()
    for i, item in enumerate(data["rubrics"]):
        loc = f"rubrics[{i}]"
        if not isinstance(item, dict):
            raise ExpectedFileError(f"{where}: field {loc}: must be an object")
        idx = item.get("index")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise ExpectedFileError(f"{where}: field {loc}.index: must be an integer, got {idx!r}")
        if idx not in by_index:
            raise ExpectedFileError(
                f"{where}: field {loc}.index: {idx} is not a rubric of {task.id} "
                f"(0..{len(task.rubrics) - 1})"
            )
        if idx in seen:
            raise ExpectedFileError(f"{where}: field {loc}.index: rubric {idx} listed twice")
        seen.add(idx)
        crit = item.get("criteria")
        n = len(by_index[idx].criteria)
        if not isinstance(crit, list) or len(crit) != n:
            got = f"{len(crit)} item(s)" if isinstance(crit, list) else repr(crit)
            raise ExpectedFileError(
                f"{where}: field {loc}.criteria: must list {n} verdict(s) for rubric {idx} "
                f"of {task.id}, got {got}"
            )
        for j, v in enumerate(crit):
            if v is not None and not isinstance(v, bool):
                raise ExpectedFileError(
                    f"{where}: field {loc}.criteria[{j}]: must be true, false or null, got {v!r}"
                )
            out[(idx, j)] = v
    note = data.get("note")
    return out, note if isinstance(note, str) else ""


def expected_score(task: Task, verdicts: dict[tuple[int, int], bool | None]) -> ScorePoint | None:
    """Points a deliverable set should earn: z_r = every criterion of r passes and every
    rubric r requires passes; s_t = Σ w_r z_r / Σ w_r (DESIGN.md §2-3).

    Returns:
        The :class:`ScorePoint`, or None when any criterion's expectation is unknown.
    """
    own: dict[int, bool] = {}
    for r in task.rubrics:
        vals = [verdicts.get((r.index, c.index)) for c in r.criteria]
        if any(v is None for v in vals):
            return None
        own[r.index] = all(vals)  # type: ignore[arg-type]
    memo: dict[int, bool] = {}
    by_index = {r.index: r for r in task.rubrics}

    def z(i: int, stack: tuple[int, ...] = ()) -> bool:
        if i in memo:
            return memo[i]
        if i in stack:  # cycles are rejected by task validation; be safe anyway
            return False
        val = own[i] and all(z(q, stack + (i,)) for q in by_index[i].requires)
        memo[i] = val
        return val

    passed = sum(r.weight for r in task.rubrics if z(r.index))
    return ScorePoint(
        passed_weight=float(passed), max_score=float(sum(r.weight for r in task.rubrics))
    )


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
