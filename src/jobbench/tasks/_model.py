"""Typed records for tasks, rubrics and criteria.

These are the in-memory form of the public on-disk format (DESIGN §2) plus our optional
extensions (DESIGN §3). They are produced by :func:`jobbench.tasks.load_task` and
:func:`jobbench.tasks.load_dataset`; nothing here touches the file system.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ._checks import Check
from ._occupations import Occupation, occupation_for


class Criterion(BaseModel):
    """One binary, fact-anchored check inside a rubric's chain.

    Attributes:
        index: 0-based position inside its rubric's ``criterion`` list (its identity).
        text: the criterion sentence; the authority for LLM judges.
        check: optional programmatic stand-in (``checks`` extension), or None.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    text: str
    check: Check | None = None


class Rubric(BaseModel):
    """A rubric item: a question, a weight and a chain of criteria.

    The item earns ``weight`` only if every criterion passes and every rubric listed in
    ``requires`` passes (DESIGN §1 step 4 and §3).

    Attributes:
        index: 0-based position in ``RUBRICS.json`` (the public format's only identity).
        id: the extension ``id`` if given, else ``str(index)``.
        question: the ``rubric`` text.
        weight: a finite number >= 0 (units: points).
        criteria: the chain C_r, in file order, non-empty.
        requires: 0-based indexes of rubrics this one requires (resolved from ids/indexes).
        files: optional deliverable globs the judge should read for this rubric.
        vision: True/False to force images on/off; None = decide from the text.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    id: str
    question: str
    weight: float
    criteria: list[Criterion]
    requires: list[int] = Field(default_factory=list)
    files: list[str] | None = None
    vision: bool | None = None


class Task(BaseModel):
    """One JobBench task as found on disk.

    Attributes:
        split: ``main``, ``easy``, ``sample`` or any other split directory name.
        occupation: occupation slug (``[a-z0-9][a-z0-9_-]*``).
        number: N of ``taskN`` (>= 1).
        root: absolute path of the ``taskN`` directory.
        workspace_dir: ``root/task_folder`` (the only part the agent may see).
        instructions: text of ``task_folder/TASK_INSTRUCTIONS.txt``.
        workspace_files: POSIX paths of every file under ``task_folder`` relative to it,
            sorted.
        search_dir: ``root/files_required_to_search`` if present, else None.
        search_files: files under ``search_dir`` (relative, sorted), or [].
        task_card: text of ``task_card.md``.
        rubrics: the rubric items in file order.
        solution_dir: ``root/solution`` if present (extension), else None.
        rubrics_key: which top-level key held the rubrics (``rubrics`` or
            ``evaluation_rubrics``).
    """

    model_config = ConfigDict(frozen=True)

    split: str
    occupation: str
    number: int
    root: Path
    workspace_dir: Path
    instructions: str
    workspace_files: list[str]
    search_dir: Path | None = None
    search_files: list[str] = Field(default_factory=list)
    task_card: str
    rubrics: list[Rubric]
    solution_dir: Path | None = None
    rubrics_key: str = "rubrics"

    @property
    def id(self) -> str:
        """``<split>/<occupation>/task<N>``, unique within a dataset."""
        return f"{self.split}/{self.occupation}/task{self.number}"

    @property
    def occupation_info(self) -> Occupation:
        """Occupation metadata; an ``unknown`` group for slugs outside the 35."""
        return occupation_for(self.occupation)

    @property
    def total_weight(self) -> float:
        """Σ w_r over all rubrics (points); > 0 for a valid task."""
        return float(sum(r.weight for r in self.rubrics))

    @property
    def criterion_count(self) -> int:
        """Number of criteria over all rubrics."""
        return sum(len(r.criteria) for r in self.rubrics)
