"""Which judge's grades a reader of several run directories uses: one rule for the report,
``compare`` and the gates.

A run directory holds one ``grades/<judge-key>/`` folder per judge that graded it
(``checks`` for checks-only grading, ``<model>.<mode>.<decide>`` otherwise). Readers that show
one judge's figures pick it with :func:`choose_judge_key` and show :func:`judge_key_note` when
they picked it themselves.
"""

from __future__ import annotations

from pathlib import Path

from .._io import display_path
from ._store import RunDir


class JudgeKeyError(ValueError):
    """No judge key can be chosen: the message lists the keys graded in each run."""


def choose_judge_key(
    run_dirs: list[Path], judge_key: str | None = None, *, allow_ungraded: bool = False
) -> str | None:
    """Pick the judge key to read over ``run_dirs``.

    Args:
        run_dirs: run directories.
        judge_key: the key asked for, or None for "the only one there is, else the one graded
            last" (see Returns).
        allow_ungraded: accept a ``judge_key`` graded in no run (``jobbench run`` whose every
            trial ended ``infra_error``: nothing was graded, the report still shows the
            trials).

    Returns:
        ``judge_key`` when given and graded in at least one run; else the only key found in
        the runs; else, of the keys graded in every run, the one graded last
        (:meth:`RunDir.graded_at`, newest over the runs; ties by name): ``jobbench grade
        --judge-model M`` after ``jobbench run`` makes readers show M's grades
        (:func:`judge_key_note` says so); None when no run has any grade.

    Raises:
        JudgeKeyError: ``judge_key`` is graded in no run, or several keys exist and none is
            graded in every run (the message lists them per run).
    """
    per_run = {display_path(Path(r)): RunDir(Path(r)).judge_keys() for r in run_dirs}
    found = sorted({k for ks in per_run.values() for k in ks})
    listing = "; ".join(f"{r}: {', '.join(ks) or '(none)'}" for r, ks in per_run.items())
    if judge_key is not None:
        if judge_key not in found and not allow_ungraded:
            raise JudgeKeyError(f"judge key {judge_key!r} has no grades (found: {listing})")
        return judge_key
    if len(found) <= 1:
        return found[0] if found else None
    common = [k for k in found if all(k in ks for ks in per_run.values())]
    if not common:
        raise JudgeKeyError(
            f"no judge key is graded in every run; choose one with --judge-key KEY ({listing})"
        )

    def last_graded(key: str) -> tuple[float, str]:
        times = [RunDir(Path(r)).graded_at(key) for r in run_dirs]
        return (max((t for t in times if t is not None), default=0.0), key)

    return max(common, key=last_graded)


def judge_key_note(
    run_dirs: list[Path], chosen: str | None, asked: str | None, option: str = "--judge-key"
) -> str | None:
    """The line a reader shows when it picked ``chosen`` among several judge keys itself
    (``asked`` None): which key, why, the others and how to pick one (``option`` is the
    command's flag); None otherwise."""
    if asked is not None or chosen is None:
        return None
    others = sorted({k for r in run_dirs for k in RunDir(Path(r)).judge_keys()} - {chosen})
    if not others:
        return None
    return (
        f"judge key {chosen} chosen (graded last); also graded: {', '.join(others)}; "
        f"choose with {option} KEY"
    )
