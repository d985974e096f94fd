"""Grading deliverable sets with known verdicts under one or more judge configurations.

The grades are written like a run's (:meth:`jobbench.rundir.RunDir.write_grade` into the
output folder, with the set's trial id ``<task>/expected@<set>/epoch-1``), so the same
readers and the report machinery apply to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..rundir import RunDir
from ._expected import ExpectedSet
from ._grades import CalibrateInputError, JudgeGrades

if TYPE_CHECKING:  # the judge is imported lazily (heavy dependencies)
    from ..judge import JudgeConfig


def grade_sets(
    sets: Sequence[ExpectedSet],
    configs: Iterable[JudgeConfig],
    out_dir: Path,
    *,
    progress: bool = False,
) -> dict[str, JudgeGrades]:
    """Grade every set under every judge configuration.

    Each configuration grades all sets in one :class:`jobbench.judge.Grader` batch (its
    ``concurrency`` applies across sets). Earlier grades in ``out_dir`` are neither reused nor
    trusted: every set is graded again, so the usage recorded is that of this pass (the
    verdict cache still answers when the configuration enables it; see ``cached_units`` in
    the report).

    Args:
        sets: the deliverable sets (see :func:`jobbench.calibrate.discover_sets`).
        configs: judge configurations; their keys must differ.
        out_dir: the calibration output folder; grades go to ``grades/<key>/``.
        progress: show the judge's progress bar (stderr).

    Returns:
        judge key → :class:`JudgeGrades`, in the order of ``configs``.

    Raises:
        CalibrateInputError: two configurations share a key, or no configuration given.
    """
    from ..judge import Grader, TrialInput

    configs = list(configs)
    if not configs:
        raise CalibrateInputError("no judge configuration to grade the deliverable sets with")
    keys = [c.key for c in configs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise CalibrateInputError(
            f"several judge configurations have the key {', '.join(dup)}; "
            'give each a different label (label = "..." in its TOML file)'
        )
    out: dict[str, JudgeGrades] = {}
    rd = RunDir(out_dir)
    for cfg in configs:
        inputs = [
            TrialInput(
                trial_id=s.trial_id,
                task=s.task,
                deliverables_dir=s.deliverables_dir,
                epoch=1,
                out_path=rd.grade_file(cfg.key, s.trial_id),
                save=rd.grade_writer(cfg.key),
                extra={"expected_set": s.name, "expected_dir": str(s.dir)},
            )
            for s in sets
        ]
        grader = Grader(cfg, progress=progress)
        try:
            records = grader.grade(inputs)
        finally:
            grader.close()
        jg = JudgeGrades(cfg.key)
        for inp, rec in zip(inputs, records):
            jg.add(rec, inp.out_path)
        out[cfg.key] = jg
    return out
