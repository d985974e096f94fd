"""The one reader of ``expected.json``: the verdicts a deliverable set should get.

A deliverable set with known-correct verdicts (a decoy under ``solution/decoys/<name>/``, or
any set used to calibrate a judge) carries ``expected.json``::

    {"rubrics": [{"index": 0, "criteria": [true, false]}, ...], "note": "...", "score": 0.4}

``index`` is the 0-based rubric position in RUBRICS.json; ``criteria`` holds one entry per
criterion of that rubric, in order: ``true`` (pass), ``false`` (fail) or ``null`` (not
known). A rubric left out is not known either. Other keys (``score``) are informative only:
the expected score is recomputed with the chain rule (:func:`jobbench.scoring.verdict_score`).

Both users read the file here (:mod:`jobbench.gates` for the decoy gate,
:mod:`jobbench.calibrate` for judge calibration), so a missing rubric means the same thing
to both: unknown. The decoy gate additionally requires every criterion to be known
(:func:`unknown_problems`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ._load import display_path
from ._model import Task

EXPECTED = "expected.json"

ExpectedVerdicts = dict[tuple[int, int], bool | None]
"""(rubric index, criterion index) → True (pass) / False (fail) / None (not known)."""


@dataclass
class ExpectedFile:
    """One parsed ``expected.json``.

    Attributes:
        verdicts: an entry for every criterion of the task (None where not known); usable
            only when ``problems`` is empty.
        note: the file's ``note`` ("" when absent or not a string).
        problems: every problem found, each ``<file>: <JSON path>: <what is wrong>``.
    """

    verdicts: ExpectedVerdicts = field(default_factory=dict)
    note: str = ""
    problems: list[str] = field(default_factory=list)


def read_expected(path: Path, task: Task) -> ExpectedFile:
    """Read and validate one ``expected.json`` against its task; never raises for file
    content (missing, unreadable, invalid JSON and misfit fields are listed in
    :attr:`ExpectedFile.problems`).

    Args:
        path: the file.
        task: the task whose rubrics the file describes.

    Returns:
        The :class:`ExpectedFile`.
    """
    where = display_path(Path(path))
    out = ExpectedFile()

    def problem(msg: str) -> ExpectedFile:
        out.problems.append(f"{where}: {msg}")
        return out

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return problem("missing")
    except (OSError, UnicodeDecodeError) as exc:
        return problem(f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
    except json.JSONDecodeError as exc:
        return problem(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    if not isinstance(data, dict) or not isinstance(data.get("rubrics"), list):
        return problem('rubrics: must be a list of {"index", "criteria"} objects')
    out.verdicts = {(r.index, c.index): None for r in task.rubrics for c in r.criteria}
    by_index = {r.index: r for r in task.rubrics}
    seen: set[int] = set()
    for k, item in enumerate(data["rubrics"]):
        loc = f"rubrics[{k}]"
        if not isinstance(item, dict):
            problem(f"{loc}: must be an object")
            continue
        idx = item.get("index")
        if isinstance(idx, bool) or not isinstance(idx, int) or idx not in by_index:
            problem(
                f"{loc}.index: must be a rubric index of {task.id} "
                f"(0..{len(task.rubrics) - 1}), got {idx!r}"
            )
            continue
        if idx in seen:
            problem(f"{loc}.index: rubric {idx} listed twice")
            continue
        seen.add(idx)
        crit = item.get("criteria")
        n = len(by_index[idx].criteria)
        if not isinstance(crit, list):
            problem(f"{loc}.criteria: must be a list of {n} verdict(s), got {crit!r}")
            continue
        if len(crit) != n:
            problem(f"{loc}.criteria: has {len(crit)} verdict(s), rubric {idx} has {n} criteria")
            continue
        for j, v in enumerate(crit):
            if v is not None and not isinstance(v, bool):
                problem(f"{loc}.criteria[{j}]: must be true, false or null, got {v!r}")
            else:
                out.verdicts[(idx, j)] = v
    note = data.get("note")
    out.note = note if isinstance(note, str) else ""
    return out


def unknown_problems(path: Path, task: Task, verdicts: ExpectedVerdicts) -> list[str]:
    """One message per rubric with a criterion whose expectation is not known (None).

    Returns:
        ``<file>: no expected verdicts for rubric <r>`` when the whole rubric is unknown,
        ``<file>: rubric <r>: no expected verdict for criteria [<j>, …]`` otherwise.
    """
    where = display_path(Path(path))
    out = []
    for r in task.rubrics:
        unknown = [c.index for c in r.criteria if verdicts.get((r.index, c.index)) is None]
        if len(unknown) == len(r.criteria):
            out.append(f"{where}: no expected verdicts for rubric {r.index}")
        elif unknown:
            out.append(f"{where}: rubric {r.index}: no expected verdict for criteria {unknown}")
    return out
