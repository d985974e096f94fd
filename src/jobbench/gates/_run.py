"""Run the requested gates over a dataset and collect a :class:`GateReport`."""

from __future__ import annotations

import dataclasses
import fnmatch
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..rundir import RunDir, judge_key_note, parse_trial_id
from ..tasks import RUBRICS, Dataset, discover_task_dirs, display_path, load_dataset
from ._audit import AuditConfig, audit_task
from ._decoy import Evaluate, decoy_gate
from ._findings import GateResult, GateUnavailable, make_finding
from ._grades import resolve_judge_key
from ._lint import lint_task
from ._llm import LLMReviewConfig, llm_review_task
from ._oracle import (
    check_oracle_null,
    consistency_gate_results,
    run_oracle_null,
    run_self_consistency,
)
from ._report import GateReport, TaskGates
from ._solve import EXCLUDED_WHY, SOLVE_THRESHOLD, solve_gate_results, solve_trial

STATIC_GATES: tuple[str, ...] = ("validate", "audit", "lint", "decoy")
"""Gates run by default: they need no agent run and no LLM."""
ALL_GATES: tuple[str, ...] = (
    "validate",
    "audit",
    "lint",
    "llm",
    "decoy",
    "oracle",
    "solve",
    "consistency",
)
"""Gate names accepted by ``--gates`` (``oracle`` runs the oracle and null gates)."""


class GateOptions(BaseModel):
    """What to run.

    Attributes:
        gates: gate names (subset of :data:`ALL_GATES`); ``llm``, ``oracle`` and ``solve``
            are added automatically when their inputs are given.
        splits, task_glob: task selection as in ``jobbench tasks``.
        audit: audit thresholds.
        llm: endpoint for the ``llm`` gate (None: gate not run).
        runs: graded runs for the solve trial.
        judge_key: which grades to read in ``runs`` / ``oracle_run``.
        oracle_run: a graded run of the ``oracle`` and ``null`` agents; the oracle's
            deliverables also become reference answers of the audit's ``A6`` check.
        run_oracle_into: run the oracle and null agents into this new run directory (needs
            the runner stage).
        exclude_agents: agents left out of the solve trial (default the oracle and null
            agents: neither is an attempt at solving).
        solve_threshold: task reachability threshold.
        consistency_run: a run whose finished trials are graded ``consistency_repeats``
            times (judge cache off) for the self-consistency gate.
        judge_config: the ``jobbench.judge.JudgeConfig`` for it (default: the judge's own
            defaults from its config file and environment).
        strict: warnings fail a gate.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    gates: list[str] = Field(default_factory=lambda: list(STATIC_GATES))
    splits: list[str] | None = None
    task_glob: str | None = None
    audit: AuditConfig = Field(default_factory=AuditConfig)
    llm: LLMReviewConfig | None = None
    runs: list[Path] = Field(default_factory=list)
    judge_key: str | None = None
    oracle_run: Path | None = None
    run_oracle_into: Path | None = None
    exclude_agents: tuple[str, ...] = ("oracle", "null")
    solve_threshold: float = SOLVE_THRESHOLD
    consistency_run: Path | None = None
    consistency_repeats: int = Field(default=3, ge=2)
    judge_config: Any = None
    strict: bool = False


def oracle_deliverables(run_dir: Path, task_id: str) -> list[Path]:
    """``deliverables/`` folders of the oracle agent's finished trials of a task in a run."""
    rd = RunDir(run_dir)
    out = []
    for tid in rd.trial_ids():
        k = parse_trial_id(tid)
        if k.task_id != task_id or k.agent != "oracle" or rd.read_trial(tid).record is None:
            continue
        d = rd.deliverables(tid)
        if d.problem is None and d.dir.is_dir():
            out.append(d.dir)
    return sorted(out)


def _restrict(result: GateResult, strict: bool) -> GateResult:
    if strict and result.status == "warn":
        return result.model_copy(update={"status": "fail"})
    return result


def run_gates(
    path: Path | str,
    options: GateOptions | None = None,
    *,
    evaluate: Evaluate | None = None,
    openai_client: Any = None,
    grade_run: Any = None,
    on_progress: Callable[[str, int, int, str | None], None] | None = None,
) -> GateReport:
    """Run the gates on every task under ``path``.

    Args:
        path: dataset root, split, occupation or task directory.
        options: what to run (default: the static gates).
        evaluate: check evaluator for the decoy gate (default: ``jobbench.judge.evaluate_check``).
        openai_client: client for the ``llm`` gate (default: built from ``options.llm``).
        grade_run: judge entry point for the consistency gate (default:
            ``jobbench.judge.grade_run``).
        on_progress: called as ``on_progress(stage, done, total, task_id)`` for the
            per-task gates: once with ``done=0`` and ``task_id=None`` before a stage's first
            task, then after each task. ``stage`` names the gates of that pass
            (``"audit, lint, decoy"``, or the requested subset; ``"llm"``).

    Returns:
        The :class:`GateReport`; its ``exit_code`` says pass / fail / infrastructure error.

    Raises:
        FileNotFoundError: ``path`` holds no task, or a run directory given in ``options``
            (``runs``, ``oracle_run``, ``consistency_run``) does not exist
            (``"<dir>: no such directory"``).
    """
    opts = options or GateOptions()
    for given in [*opts.runs, opts.oracle_run, opts.consistency_run]:
        if given is not None and not Path(given).is_dir():
            raise FileNotFoundError(f"{given}: no such directory")
    gates = list(dict.fromkeys(opts.gates))
    if opts.llm is not None and "llm" not in gates:
        gates.append("llm")
    if (opts.oracle_run or opts.run_oracle_into) and "oracle" not in gates:
        gates.append("oracle")
    if opts.runs and "solve" not in gates:
        gates.append("solve")
    if opts.consistency_run and "consistency" not in gates:
        gates.append("consistency")
    unknown = [g for g in gates if g not in ALL_GATES]
    if unknown:
        raise ValueError(f"unknown gate(s) {', '.join(unknown)} (known: {', '.join(ALL_GATES)})")

    root = Path(path)
    ds = load_dataset(root, splits=opts.splits, task_glob=opts.task_glob)
    report = GateReport(dataset=display_path(root), gates=gates, strict=opts.strict)
    by_id: dict[str, TaskGates] = {}

    # validate: every discovered task dir, loaded or not
    loaded = {t.root: t for t in ds.tasks}
    for split, occ, tdir in discover_task_dirs(root):
        tid = f"{split}/{occ}/{tdir.name}"
        if opts.splits and split not in opts.splits:
            continue
        if opts.task_glob and not fnmatch.fnmatchcase(tid, opts.task_glob):
            continue
        tg = TaskGates(task_id=tid, path=display_path(tdir))
        by_id[tid] = tg
        prefix = display_path(tdir)
        probs = [p for p in ds.problems if p.file == prefix or p.file.startswith(prefix + "/")]
        findings = [
            make_finding(
                "V1",
                p.message if not p.where else f"{p.where}: {p.message}",
                task_id=tid,
                file=p.file,
                severity=p.severity,
            )
            for p in probs
        ]
        if "validate" in gates or tdir not in loaded:
            tg.gates["validate"] = _restrict(
                GateResult.from_findings("validate", findings), opts.strict
            )
    report.tasks = [by_id[k] for k in sorted(by_id)]
    tasks = ds.tasks

    # oracle and null first: the oracle's deliverables also serve the audit's A6 check
    oracle_dir: Path | None = None
    if "oracle" in gates:
        sub = Dataset(root=ds.root, tasks=tasks, problems=[])
        try:
            if opts.oracle_run is not None:
                results = check_oracle_null(opts.oracle_run, judge_key=opts.judge_key, dataset=sub)
                oracle_dir = opts.oracle_run
                _note_judge_key(report, "oracle/null gates", [opts.oracle_run], opts.judge_key)
            elif opts.run_oracle_into is not None:
                results = run_oracle_null(root, opts.run_oracle_into, task_glob=opts.task_glob)
                oracle_dir = opts.run_oracle_into
            else:
                raise GateUnavailable(
                    "the oracle gate needs --oracle-run RUN (a graded run of the oracle and "
                    "null agents) or --run-oracle DIR"
                )
        except Exception as exc:  # noqa: BLE001 - a stage failure is infrastructure, never a verdict
            if not isinstance(exc, (GateUnavailable, FileNotFoundError, ValueError)):
                exc = GateUnavailable(f"{type(exc).__name__}: {exc}")
            report.notes.append(f"oracle/null gates could not run: {exc}")
            for t in tasks:
                by_id[t.id].gates["oracle"] = GateResult.errored("oracle", str(exc))
                by_id[t.id].gates["null"] = GateResult.errored("null", str(exc))
        else:
            for t in tasks:
                for name, res in results.get(t.id, {}).items():
                    by_id[t.id].gates[name] = _restrict(res, opts.strict)

    def tick(stage: str, done: int, task_id: str | None) -> None:
        if on_progress is not None:
            on_progress(stage, done, len(tasks), task_id)

    per_task = ", ".join(g for g in ("audit", "lint", "decoy") if g in gates)
    if per_task:
        tick(per_task, 0, None)
    for i, t in enumerate(tasks if per_task else [], 1):
        tg = by_id[t.id]
        if "audit" in gates:
            cfg = opts.audit
            if oracle_dir is not None:
                extra = oracle_deliverables(oracle_dir, t.id)
                cfg = dataclasses.replace(
                    cfg, extra_reference_dirs=list(cfg.extra_reference_dirs) + extra
                )
            tg.gates["audit"] = GateResult.from_findings(
                "audit", audit_task(t, cfg), strict=opts.strict
            )
        if "lint" in gates:
            tg.gates["lint"] = GateResult.from_findings("lint", lint_task(t), strict=opts.strict)
        if "decoy" in gates:
            tg.gates["decoy"] = _restrict(decoy_gate(t, evaluate), opts.strict)
        tick(per_task, i, t.id)

    if "llm" in gates:
        if opts.llm is None:
            for t in tasks:
                by_id[t.id].gates["llm"] = GateResult.errored(
                    "llm", "no model configured (--llm-model or JUDGE_MODEL)"
                )
        else:
            client = openai_client
            tick("llm", 0, None)
            for i, t in enumerate(tasks, 1):
                review = llm_review_task(t, opts.llm, client=client)
                gr = GateResult.from_findings(
                    "llm",
                    review.findings,
                    strict=opts.strict,
                    metrics={"reviewed": review.reviewed, "usage": review.usage.model_dump()},
                )
                if review.errors:
                    gr = gr.model_copy(
                        update={"status": "error", "reason": "; ".join(review.errors)}
                    )
                by_id[t.id].gates["llm"] = gr
                tick("llm", i, t.id)

    if "solve" in gates:
        if not opts.runs:
            report.notes.append("solve trial not run: give graded runs with --runs")
            for t in tasks:
                by_id[t.id].gates["solve"] = GateResult.errored(
                    "solve", "no graded runs given (--runs)"
                )
        else:
            try:
                st = solve_trial(
                    opts.runs,
                    judge_key=opts.judge_key,
                    dataset=ds,
                    exclude_agents=opts.exclude_agents,
                    threshold=opts.solve_threshold,
                )
            except (FileNotFoundError, ValueError) as exc:
                report.notes.append(f"solve trial could not run: {exc}")
                for t in tasks:
                    by_id[t.id].gates["solve"] = GateResult.errored("solve", str(exc))
            else:
                report.solve = st
                _note_judge_key(report, "solve trial", list(opts.runs), opts.judge_key)
                if st.excluded and not st.tasks:
                    report.notes.append(
                        "solve trial: every graded trial given is the oracle's or the null "
                        f"agent's, which do not count ({EXCLUDED_WHY}); pass graded runs of the "
                        "agents under study with --runs (--include-oracle counts the oracle)"
                    )
                files = {t.id: display_path(t.root / RUBRICS) for t in tasks}
                by_task = solve_gate_results(st, files=files)
                for t in tasks:
                    res = by_task.get(t.id) or GateResult.skipped(
                        "solve", "no counted graded trial of this task"
                    )
                    by_id[t.id].gates["solve"] = _restrict(res, opts.strict)
    if "consistency" in gates:
        files = {t.id: display_path(t.root / RUBRICS) for t in tasks}
        try:
            if opts.consistency_run is None:
                raise GateUnavailable("the consistency gate needs a run (--consistency RUN)")
            config = opts.judge_config if opts.judge_config is not None else _default_judge_config()
            with tempfile.TemporaryDirectory(prefix="jobbench-consistency-") as work:
                cons = run_self_consistency(
                    opts.consistency_run,
                    config,
                    opts.consistency_repeats,
                    Path(work),
                    grade_run=grade_run,
                )
        except Exception as exc:  # noqa: BLE001 - infrastructure, never a verdict
            reason = (
                str(exc) if isinstance(exc, GateUnavailable) else f"{type(exc).__name__}: {exc}"
            )
            report.notes.append(f"consistency gate could not run: {reason}")
            for t in tasks:
                by_id[t.id].gates["consistency"] = GateResult.errored("consistency", reason)
        else:
            report.consistency = cons
            by_task = consistency_gate_results(cons, files=files)
            for t in tasks:
                res = by_task.get(t.id) or GateResult.skipped(
                    "consistency", "no trial of this task in the run"
                )
                by_id[t.id].gates["consistency"] = _restrict(res, opts.strict)
    return report


def _note_judge_key(report: GateReport, what: str, runs: list[Path], asked: str | None) -> None:
    """Add :func:`jobbench.rundir.judge_key_note` to the report's notes when the gates picked
    one judge key among several themselves (as ``jobbench report`` warns)."""
    note = judge_key_note(runs, resolve_judge_key(runs, asked), asked)
    if note is not None:
        report.notes.append(f"{what}: {note}")


def _default_judge_config() -> Any:
    """``jobbench.judge.load_judge_config()``: the TOML file and the environment."""
    from ..judge import load_judge_config

    return load_judge_config()
