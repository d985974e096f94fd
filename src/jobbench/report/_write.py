"""``write_report``: every report file for one or more runs, written atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from .. import __version__
from .._io import atomic_write_json, atomic_write_lines, atomic_write_text
from .._proc import left_by_dead_process, owned_prefix
from ..rundir import RunDir
from ..scoring import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from ..tasks import display_path
from ._build import ReportData, _gc_paused, build_report
from ._fork import can_fork, die_with_parent
from ._html import (
    DRILLDOWN_DIR,
    DRILLDOWN_MODES,
    draw_figures,
    page_name,
    page_tasks,
    render_drilldown_pages,
    render_html,
    resolve_drilldowns,
)
from ._tables import (
    JSON_SEPARATORS,
    leaderboard_csv,
    leaderboard_markdown,
    results_jsonl_lines,
    summary_json,
)


class ReportWriteError(OSError):
    """The report directory cannot be written (read-only file system, no permission, a file
    in the way, disk full…). The message names the directory, the file and the cause; files
    already there are kept whole (each is replaced atomically or not at all).

    Attributes:
        out_dir: the report directory; cause: the original :class:`OSError`.
    """

    def __init__(self, out_dir: Path, cause: OSError) -> None:
        where = cause.filename if cause.filename is not None else out_dir
        what = cause.strerror or str(cause)
        super().__init__(
            cause.errno,
            f"cannot write the report to {display_path(Path(out_dir))}: {what} "
            f"({display_path(Path(str(where)))}); "
            "choose another directory (e.g. --out DIR) or make "
            "this one writable; no report file was left half-written",
        )
        self.out_dir = Path(out_dir)
        self.cause = cause

    def __str__(self) -> str:
        return self.strerror or ""  # set to the message above


REPORT_FILES = ("leaderboard.md", "leaderboard.csv", "results.jsonl", "summary.json", "report.html")
INPUTS_FILE = ".inputs.json"
"""Written into the report directory last: ``{"digest": <hex>, "drilldown_layout": ...}``,
the :func:`inputs_digest` of the report's files and the layout they were written with."""


def renderer_digest() -> str:
    """SHA-256 (hex) of the report package's own sources: every ``*.py`` file and template
    under ``jobbench/report/`` (names and bytes, sorted by name), computed once per process.
    A report written by other templates or code of the same harness version (a development
    checkout, a patched install) is then not taken as up to date."""
    global _RENDERER_DIGEST
    if _RENDERER_DIGEST is None:
        root = Path(__file__).parent
        h = hashlib.sha256()
        for path in sorted([*root.glob("*.py"), *root.glob("templates/*.j2")]):
            h.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
        _RENDERER_DIGEST = h.hexdigest()
    return _RENDERER_DIGEST


_RENDERER_DIGEST: str | None = None


def inputs_digest(data: ReportData, drilldowns: str) -> str:
    """SHA-256 (hex, 64 characters) of everything the report files are made from, apart from
    the time they are written: the harness version and :func:`renderer_digest`, the options
    (``drilldowns``, judge key, bootstrap settings and epochs) and, per run, its path and name,
    ``lock.json`` (but its ``updated_at``, renewed by every ``jobbench run`` and shown nowhere),
    the dataset's tasks and their maxima, every trial record, grade record and trajectory event
    count read, and the warnings. Trial records and grades enter as the SHA-256 of their files'
    bytes as read (their model dump when that is not known), so the digest is one streaming
    hash, not a copy of every verdict. A changed trial, grade or lock changes the digest."""
    h = hashlib.sha256()
    payload: dict[str, Any] = {
        "version": __version__,
        "renderer": renderer_digest(),
        "drilldowns": drilldowns,
        "judge_key": data.judge_key,
        "settings": data.settings,
        "task_ids": data.task_ids,
        "warnings": data.warnings,
        "runs": [
            {
                "path": str(r.path),
                "name": r.name,
                # every invocation of `jobbench run` renews updated_at; no report file shows it
                "lock": r.lock.model_dump(mode="json", exclude={"updated_at"}),
                "task_ids": r.task_ids,
                "tasks": r.tasks,
                "metas": r.metas,
                "invalid": r.invalid,
                "dataset_problems": r.dataset_problems,
            }
            for r in data.runs
        ],
    }
    text = json.dumps(to_jsonable_python(payload), sort_keys=True, separators=(",", ":"))
    h.update(text.encode("utf-8"))
    for r in data.runs:
        h.update(b"\0run\0")
        for lt in r.trials:
            record = lt.record_sha256 or lt.record.model_dump_json()
            grade = lt.grade_sha256 or (lt.grade.model_dump_json() if lt.grade else "-")
            h.update(f"\0{lt.rel}\0{record}\0{grade}\0{lt.trajectory_events}".encode())
    return h.hexdigest()


def _up_to_date(out_dir: Path, digest: str) -> str | None:
    """The layout of the report in ``out_dir`` when it was written from inputs of ``digest``
    and all its files are there (and, inline, no earlier ``drilldowns/`` is left); else
    None."""
    try:
        stored = json.loads((out_dir / INPUTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("digest") != digest:
        return None
    layout = stored.get("drilldown_layout")
    if layout not in ("inline", "pages"):
        return None
    if not all((out_dir / name).is_file() for name in REPORT_FILES):
        return None
    if layout == "pages" and not (out_dir / DRILLDOWN_DIR).is_dir():
        return None
    if layout == "inline" and os.path.lexists(out_dir / DRILLDOWN_DIR):
        return None  # an earlier report's pages are left over: rebuild (and retry removing)
    return layout


def default_out_dir(run_dirs: list[Path]) -> Path:
    """``<run>/report`` for one run; ``<parent of first run>/report-<run names>`` for several
    (names joined with ``+``; a hash replaces them when that would exceed 100 characters)."""
    paths = [Path(r).resolve() for r in run_dirs]
    if len(paths) == 1:
        return RunDir(paths[0]).report_dir
    name = "+".join(p.name for p in paths)
    if len(name) > 100:
        digest = hashlib.sha256(name.encode()).hexdigest()[:10]
        name = f"{paths[0].name}+{len(paths) - 1}-more-{digest}"
    return paths[0].parent / f"report-{name}"


def write_data(data: ReportData, out_dir: Path, *, drilldowns: str = "auto") -> Path:
    """Write the files of :data:`REPORT_FILES` for already built ``data`` into ``out_dir``,
    and the drill-down pages under ``out_dir/drilldowns/`` when the layout is ``pages``.

    Nothing is written when ``out_dir`` holds a report of the same :func:`inputs_digest`
    (recorded in :data:`INPUTS_FILE`) with all its files: the files (and the time they name
    as generated) stay as they are. Otherwise :data:`INPUTS_FILE` is removed first and
    written again after every other file, so an interrupted write is never taken as current.

    Args:
        data: the built report.
        out_dir: the report directory (created when absent).
        drilldowns: ``inline``, ``pages`` or ``auto`` (see
            :func:`jobbench.report._html.resolve_drilldowns`).

    ``drilldowns/`` belongs to the report: it is built in a temporary directory and swapped
    in whole, so pages of an earlier report (e.g. of tasks no longer in the runs) never
    linger; with the inline layout an earlier ``drilldowns/`` is removed after
    ``report.html`` is written. Nothing else in ``out_dir`` is deleted.

    Sets ``data.drilldown_layout`` to the layout written. With the inline layout, an
    earlier ``drilldowns/`` that cannot be removed is named in a warning appended to
    ``data.warnings`` (after the files were written, so shown on the console only).

    Raises:
        ValueError: unknown ``drilldowns``.
        ReportWriteError: ``out_dir`` or a file in it cannot be written (an ``OSError``).
    """
    with _gc_paused():  # the report's objects are alive throughout: nothing to collect
        return _write_data(data, Path(out_dir), drilldowns)


def _write_data(data: ReportData, out_dir: Path, drilldowns: str) -> Path:
    """:func:`write_data` with the garbage collector paused."""
    mode = resolve_drilldowns(data, drilldowns)
    digest = inputs_digest(data, drilldowns)
    current = _up_to_date(out_dir, digest)
    if current is not None:
        data.drilldown_layout = current
        return out_dir
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / INPUTS_FILE).unlink(missing_ok=True)

        def files() -> None:
            atomic_write_text(out_dir / "leaderboard.md", leaderboard_markdown(data))
            atomic_write_text(out_dir / "leaderboard.csv", leaderboard_csv(data))
            atomic_write_lines(out_dir / "results.jsonl", results_jsonl_lines(data))
            atomic_write_text(out_dir / "summary.json", _compact_json(summary_json(data)))

        if mode == "pages":  # link targets first, then the page that links to them
            html = _write_pages(data, out_dir, files)
        else:
            files()
            html = render_html(data, mode, out_dir)
        atomic_write_text(out_dir / "report.html", html)
    except OSError as exc:
        raise ReportWriteError(out_dir, exc) from exc
    data.drilldown_layout = mode
    try:
        atomic_write_json(out_dir / INPUTS_FILE, {"digest": digest, "drilldown_layout": mode})
    except OSError:
        pass  # the report is whole; the next write only rebuilds it
    if mode == "inline":
        old = out_dir / DRILLDOWN_DIR
        problem = _discard(old)
        if problem is not None:
            data.warnings.append(
                f"the drill-down pages of an earlier report in {display_path(old)} could not be "
                f"removed ({problem}); they are out of date: delete that directory by hand "
                "(report.html holds the current drill-downs)"
            )
    _readable(out_dir)
    return out_dir


def _compact_json(obj: Any) -> str:
    """``obj`` as one line of JSON without spaces (:data:`JSON_SEPARATORS`; non-ASCII kept,
    values JSON cannot hold written as their ``str``) and a newline."""
    return json.dumps(obj, ensure_ascii=False, separators=JSON_SEPARATORS, default=str) + "\n"


def _render_pages_into(
    data: ReportData, out_dir: Path, folder: Path, tasks: list[str], *, claim: bool = False
) -> int:
    """Write the drill-down pages of ``tasks`` (report directory ``out_dir``), in that order,
    into ``folder``; returns how many were written.

    With ``claim``, each page's file is created exclusively before its page is rendered, and
    the first that exists already stops the loop: two processes working through the same
    list from opposite ends share it without other coordination, each page rendered once.
    """
    pages = render_drilldown_pages(data, out_dir, tasks)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_EXCL if claim else os.O_TRUNC
    done = 0
    for task_id in tasks:
        try:
            fd = os.open(folder / page_name(task_id), flags, 0o666)
        except FileExistsError:
            break
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(next(pages)[1])
        done += 1
    return done


NEW_PAGES_PREFIX = f".{DRILLDOWN_DIR}-new-"
"""Start of the temporary directory a report builds ``drilldowns/`` in (then
``<pid>-<random>``, see :func:`jobbench._proc.owned_prefix`)."""


def _fork_page_child() -> int:
    """``os.fork()`` for the page child (which dies with this process,
    :func:`jobbench.report._fork.die_with_parent`); -1 when no process can be made."""
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # e.g. a process limit: everything is done here instead
        return -1
    if pid == 0:
        try:
            die_with_parent(parent)
        except BaseException:
            os._exit(1)
    return pid


def _write_pages(data: ReportData, out_dir: Path, files: Callable[[], None]) -> str:
    """Run ``files`` (writes the data files), build ``drilldowns/`` in a temporary sibling
    directory and swap it in; returns the text of ``report.html`` (linking to those pages).

    Where :func:`jobbench.report._fork.can_fork`, a forked child draws the figures
    (:func:`draw_figures`, passed back pickled through a temporary file) and then renders
    drill-down pages from the first task on, while this process runs ``files`` and renders
    pages from the last task back (:func:`_render_pages_into` with ``claim``: the two meet
    wherever their speeds put them). A child that fails or is killed leaves pages that may
    be partial: all of its share is rendered again here (and the figures drawn here), so
    the result never depends on the fork.
    """
    for old in out_dir.glob(f".{DRILLDOWN_DIR}-old-*"):  # left by an interrupted earlier swap
        _discard(old)
    for new in out_dir.glob(f"{NEW_PAGES_PREFIX}*"):  # left by a report killed while writing
        if left_by_dead_process(new.name, NEW_PAGES_PREFIX):
            _discard(new)
    tasks = page_tasks(data)
    tmp = Path(tempfile.mkdtemp(prefix=owned_prefix(NEW_PAGES_PREFIX), dir=out_dir))
    try:
        with tempfile.TemporaryFile() as drawn:
            pid = _fork_page_child() if can_fork() else -1
            if pid == 0:  # the child: draw, render, then leave without running exit handlers
                code = 1
                try:
                    pickle.dump(draw_figures(data), drawn)
                    drawn.flush()
                    _render_pages_into(data, out_dir, tmp, tasks, claim=True)
                    code = 0
                finally:
                    os._exit(code)
            try:
                files()
                mine = 0
                if pid > 0:
                    mine = _render_pages_into(data, out_dir, tmp, tasks[::-1], claim=True)
                    _, status = os.waitpid(pid, 0)
                    pid = -1  # reaped
                else:
                    _render_pages_into(data, out_dir, tmp, tasks)
                    status = None
            except BaseException:
                if pid > 0:  # interrupted before the child was reaped: it must not outlive us
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                raise
            images = None
            if status is not None:
                if os.waitstatus_to_exitcode(status) == 0:
                    drawn.seek(0)
                    images = pickle.load(drawn)
                else:  # every page the child may have claimed, rendered again here
                    _render_pages_into(data, out_dir, tmp, tasks[: len(tasks) - mine])
        html = render_html(data, "pages", out_dir, images)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; reports are meant to be shared
        final = out_dir / DRILLDOWN_DIR
        trash = None
        if final.is_symlink() or final.exists():
            trash = out_dir / f".{DRILLDOWN_DIR}-old-{uuid.uuid4().hex}"
            os.rename(final, trash)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if trash is not None:
        _discard(trash)
    return html


def _readable(out_dir: Path) -> None:
    """Atomic writes leave temp-file permissions (0600); give report files the usual mode
    under the process umask, since reports are meant to be shared."""
    umask = os.umask(0)
    os.umask(umask)
    for name in REPORT_FILES:
        try:
            os.chmod(out_dir / name, 0o666 & ~umask)
        except OSError:
            pass


def _discard(path: Path) -> str | None:
    """Remove a drill-down directory (a symlink is unlinked, never followed).

    Returns:
        None when ``path`` is gone (or was never there); else what stopped its removal.
    """
    errors: list[str] = []
    try:
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)
        elif path.is_dir():

            def note(_func, failed, exc) -> None:
                exc = (
                    exc[1] if isinstance(exc, tuple) else exc
                )  # onerror passes exc_info, onexc the exception
                errors.append(
                    f"{display_path(Path(failed))}: {getattr(exc, 'strerror', None) or exc}"
                )

            if sys.version_info >= (3, 12):
                shutil.rmtree(path, onexc=note)
            else:
                shutil.rmtree(path, onerror=note)
    except OSError as exc:
        errors.append(exc.strerror or str(exc))
    if not (path.is_symlink() or path.exists()):
        return None
    return errors[0] if errors else "still present"


def write_report(
    run_dirs: list[Path] | Path,
    out_dir: Path | None = None,
    *,
    judge_key: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    drilldowns: str = "auto",
) -> Path:
    """Read trials and grades of ``run_dirs`` and write the report.

    Files: ``leaderboard.md``, ``leaderboard.csv`` (one row per configuration),
    ``results.jsonl`` (one row per trial with every figure), ``summary.json`` (every
    aggregate), ``report.html`` (page with figures and tables; loads nothing) and, with the
    ``pages`` layout, ``drilldowns/<task>.html`` (one drill-down page per task).

    Args:
        run_dirs: run directories (``runs/<name>``); several are merged into one leaderboard.
        out_dir: where to write; default :func:`default_out_dir` (``<run>/report``).
        judge_key: grades to use (``grades/<judge_key>/``); None = the only key present.
        n_resamples, confidence, seed: bootstrap settings (reproducible for a given seed).
        drilldowns: ``inline`` (drill-downs inside ``report.html``), ``pages`` (one page per
            task under ``drilldowns/``) or ``auto`` (pages when the drill-downs would add more
            than ~5 MB to ``report.html``; the default).

    Returns:
        The report directory.

    Raises:
        jobbench.report.ReportInputError: unreadable run files (each named with its field),
            or several judge keys, none graded in every run and none chosen.
        ValueError: unknown ``drilldowns``.
        jobbench.report.ReportWriteError: the report directory cannot be written.
    """
    if drilldowns not in DRILLDOWN_MODES:
        raise ValueError(
            f"drilldowns: expected one of {', '.join(DRILLDOWN_MODES)}, got {drilldowns!r}"
        )
    runs = [Path(run_dirs)] if isinstance(run_dirs, (str, Path)) else [Path(r) for r in run_dirs]
    data = build_report(
        runs, judge_key=judge_key, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return write_data(
        data, Path(out_dir) if out_dir is not None else default_out_dir(runs), drilldowns=drilldowns
    )
