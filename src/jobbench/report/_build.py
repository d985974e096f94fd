"""Build every figure of a report from run directories (no writing here)."""

from __future__ import annotations

import gc
import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from ..rundir import RunDir, judge_key_note
from ..scoring import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Aggregate,
    Comparison,
    CostSummary,
    TaskResult,
    TrialResult,
    aggregate,
    chain_break_counts,
    compare,
    config_label,
    cost_summary,
    group_results,
    task_results,
    trial_result,
)
from ._fork import in_parts, processes_for
from ._runs import (
    LoadedTrial,
    ReportInputError,
    RunData,
    load_run,
    resolve_judge_key,
)

GROUP_KINDS = ("paper_category", "soc_major_group", "occupation", "split")
"""Group kinds reported besides ``overall``; occupations get no interval (2–3 tasks each)."""

INCOMPLETE_STATES = ("judge_error", "ungraded", "infra_error")
"""Trial states whose result a retry can still change (regrade, grade, re-run); a
configuration with any is *provisional*."""

MAX_ALL_PAIRS = 6
"""Up to this many configurations every pair is compared; above, each against the leader."""


_SLUG_KEEP = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_SLUG = 120
"""Longest slug spelled out in full (characters); longer ones end in a SHA-256 (see
:func:`task_slug`). File names stay far below the usual 255-byte limit."""


@lru_cache(maxsize=8192)
def task_slug(task_id: str) -> str:
    """A name for ``task_id`` that is safe as a file name and as an HTML id / URL fragment,
    and distinct for distinct task ids: ``main/lawyers/task2`` → ``main.lawyers.task2``.

    Rules: ``a``–``z``, ``0``–``9``, ``_`` and ``-`` are kept; ``/`` becomes ``.`` (``~2f``
    when it is first, last or follows another ``/``, so a slug never starts or ends with a
    dot nor holds two in a row); every other character
    (upper-case letters, ``.``, ``~``, spaces, non-ASCII) becomes ``~`` and two lower-case hex
    digits per UTF-8 byte (``Main`` → ``~4dain``, ``é`` → ``~c3~a9``). The result decodes back
    to ``task_id``, so two task ids never share a slug, also on case-insensitive file systems,
    and it never contains ``/``, ``\\``, ``..`` or a character that needs quoting in a URL.
    Slugs longer than :data:`MAX_SLUG` are cut to 80 characters followed by ``~~`` and the
    SHA-256 hex digest of ``task_id`` (``~~`` never occurs in a full slug). Remembered for
    the last 8,192 task ids (a report asks again for every trial, anchor and link).
    """
    out = []
    for i, ch in enumerate(task_id):
        if ch in _SLUG_KEEP:
            out.append(ch)
        elif ch == "/" and 0 < i < len(task_id) - 1 and task_id[i - 1] != "/":
            out.append(".")
        else:
            out.extend(f"~{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
    slug = "".join(out) or "~"
    if len(slug) > MAX_SLUG:
        slug = (
            slug[:80] + "~~" + hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()
        )
    return slug


anchor_slug = task_slug
"""The id part of drill-down anchors (``c<rank>-<task_slug>``); same as :func:`task_slug`."""


INJECTION_FLAG = "prompt_injection:"
"""Prefix of the judge's flag for a deliverable that seems to address the judge
(``jobbench.judge`` writes ``prompt_injection:<file>``)."""

EXTRACTION_FLAG = "extraction_error:"
"""Prefix of the judge's flag for a deliverable whose extraction reported an error
(``extraction_error:<file>``): corrupt, mislabelled or unsupported files, and files the
extractor refused (symlinks, special files; their kind in the grade's ``deliverables`` is
``refused``)."""


VOLUME_FLAGS = ("conflicting_values:", "over_cap:")
"""Prefixes of the judge's enumeration and volume flags (``jobbench.judge``: a check saw the
quantity stated with disagreeing values, or the deliverables exceed the documented caps;
docs/judge.md, "Enumeration and volume")."""


@dataclass
class TrialIssues:
    """What a trial's grade flags and refused files say, sorted by kind.

    Attributes:
        injection: deliverables flagged for possible prompt injection (file paths).
        unreadable: deliverables the extractor could not read (file paths).
        refused: deliverables refused by the runner (``trial.json`` ``refused``, ``path:
            reason``) or by the extractor when graded (``path: refused when graded``).
        volume: enumeration and volume flags (:data:`VOLUME_FLAGS`), verbatim.
        other: flags with any other prefix, verbatim.
    """

    injection: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    volume: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.injection or self.unreadable or self.refused or self.other or self.volume)


def classify_flags(
    flags: list[str],
    *,
    refused: list[str] | tuple[str, ...] = (),
    kinds: dict[str, str] | None = None,
) -> TrialIssues:
    """Sort a grade's ``flags`` by their prefix.

    Args:
        flags: the grade's flags (``prompt_injection:<file>``, ``extraction_error:<file>``, …).
        refused: the trial's refused deliverables as the runner recorded them.
        kinds: deliverable path → extraction kind from the grade (``refused`` marks a
            file the extractor refused rather than one it failed to read).

    Returns:
        A :class:`TrialIssues` (false when there is nothing to report).
    """
    kinds = kinds or {}
    out = TrialIssues(refused=list(refused))
    for flag in flags:
        if flag.startswith(INJECTION_FLAG):
            out.injection.append(flag[len(INJECTION_FLAG) :])
        elif flag.startswith(EXTRACTION_FLAG):
            path = flag[len(EXTRACTION_FLAG) :]
            if kinds.get(path) == "refused":
                out.refused.append(f"{path}: refused when graded")
            else:
                out.unreadable.append(path)
        elif flag.startswith(VOLUME_FLAGS):
            out.volume.append(flag)
        else:
            out.other.append(flag)
    return out


def _deliverable_kinds(grade) -> dict[str, str]:
    """Path → extraction kind from a grade's ``deliverables`` ({} without a grade)."""
    if grade is None:
        return {}
    return {d.path: d.kind for d in grade.deliverables}


@dataclass
class ConfigView:
    """One configuration (run, agent, model) with all its figures.

    Attributes:
        anchor: HTML id prefix (``c<rank>``); label: display name (run added when the same
            agent and model appear in several runs).
        loaded: raw trials with grades (for drill-downs); trials: joined rows.
        tasks: one :class:`TaskResult` per task of the run.
        overall: the overall :class:`Aggregate`; groups: kind → group → Aggregate.
    """

    run: RunData
    agent: str
    model: str
    label: str
    loaded: list[LoadedTrial]
    trials: list[TrialResult]
    tasks: list[TaskResult]
    overall: Aggregate
    groups: dict[str, dict[str, Aggregate]]
    cost: CostSummary
    chain_breaks: dict[str, int]
    rank: int = 0
    anchor: str = ""

    def task_anchor(self, task_id: str) -> str:
        return f"{self.anchor}-{anchor_slug(task_id)}"

    @property
    def incomplete_trials(self) -> dict[str, int]:
        """Trials per state whose result is still to come: ``judge_error`` (regrade),
        ``ungraded`` (grade) and ``infra_error`` (re-run); empty when none."""
        states = self.overall.trials_by_state
        return {s: states[s] for s in INCOMPLETE_STATES if states.get(s)}

    @property
    def provisional(self) -> bool:
        """True when some trial's result is still to come (see :attr:`incomplete_trials`):
        its task may count 0 now and more after a retry, so micro and macro may change."""
        return bool(self.incomplete_trials)

    def trial_issues(self) -> dict[str, TrialIssues]:
        """Trial id → :class:`TrialIssues` (its grade flags sorted by kind and its refused
        files), for trials with at least one issue; see :func:`classify_flags`."""
        index = self.__dict__.get("_issues")
        if index is None:
            kinds = {lt.record.trial_id: _deliverable_kinds(lt.grade) for lt in self.loaded}
            index = {}
            for t in self.trials:
                issues = classify_flags(t.flags, refused=t.refused, kinds=kinds.get(t.trial_id, {}))
                if issues:
                    index[t.trial_id] = issues
            self.__dict__["_issues"] = index
        return index

    @property
    def integrity(self) -> dict:
        """Counts a reader must see next to the scores (trials, not files): trials the judge
        flagged for possible prompt injection (``prompt_injection:<file>``), trials with
        deliverables the extractor could not read (``extraction_error:<file>`` of a file
        that was read but is corrupt, mislabelled or unsupported), trials with refused
        deliverable files (refused by the runner, or by the extractor when graded: symlinks,
        special files), trials whose grade carries any other flag, trials run without a
        sandbox, and trials per sandbox (``unknown`` when not recorded)."""
        sandboxes = Counter(t.sandbox or "unknown" for t in self.trials)
        issues = self.trial_issues().values()
        return {
            "trials_prompt_injection": sum(1 for i in issues if i.injection),
            "trials_with_unreadable_files": sum(1 for i in issues if i.unreadable),
            "trials_with_refused_files": sum(1 for i in issues if i.refused),
            "trials_other_flags": sum(1 for i in issues if i.other or i.volume),
            "trials_without_sandbox": sum(1 for t in self.trials if t.sandbox == "none"),
            "sandboxes": dict(sorted(sandboxes.items())),
        }

    def task(self, task_id: str) -> TaskResult | None:
        """This configuration's result on ``task_id``, or None when its run lacks the task."""
        index = self.__dict__.get("_task_index")
        if index is None or len(index) != len(self.tasks):
            index = self.__dict__["_task_index"] = {t.task_id: t for t in self.tasks}
        return index.get(task_id)


@dataclass
class ReportData:
    """All figures of one report.

    Attributes:
        runs: the runs read; judge_key: grades used (None when there are none).
        configs: configurations ranked by micro (then macro, then label).
        comparisons: paired comparisons (A ranked above B).
        task_ids: union of the runs' tasks, in order.
        warnings: everything a reader must know before trusting the figures.
        settings: bootstrap settings and epochs.
        drilldown_layout: ``inline`` or ``pages`` once written by
            :func:`jobbench.report.write_data` (None before).
    """

    runs: list[RunData]
    judge_key: str | None
    configs: list[ConfigView]
    comparisons: list[Comparison]
    task_ids: list[str]
    warnings: list[str]
    settings: dict
    generated_at: str = field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds")
    )
    version: str = __version__
    drilldown_layout: str | None = None

    @property
    def max_epochs(self) -> int:
        return int(self.settings["epochs"])

    def config(self, label: str) -> ConfigView:
        for c in self.configs:
            if c.label == label:
                return c
        raise KeyError(label)


def _config_keys(run: RunData) -> list[tuple[str, str]]:
    """The run's (agent, model) pairs: those of ``lock.json`` in its order, then those of
    trials not declared there, in trial order."""
    return list(dict.fromkeys([*run.lock_agents, *_trials_by_config(run)]))


def _trials_by_config(run: RunData) -> dict[tuple[str, str], list[LoadedTrial]]:
    """The run's trials grouped by (agent, model), each group in ``run.trials`` order; the
    keys in the order of their first trial."""
    out: dict[tuple[str, str], list[LoadedTrial]] = {}
    for lt in run.trials:
        out.setdefault((lt.record.agent, lt.record.model), []).append(lt)
    return out


def _rank_key(c: ConfigView) -> tuple:
    micro = c.overall.micro.estimate
    macro = c.overall.macro.estimate
    return (
        -(micro if micro is not None else -1.0),
        -(macro if macro is not None else -1.0),
        c.label,
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (as it was before, after it).
    Reading a paper-scale run allocates millions of objects, none in a reference cycle, and
    every collection the allocations trigger would walk all of them again; so would the
    collections triggered while the figures are computed and the files written (those
    objects are still alive), which is why :func:`build_report` and
    :func:`jobbench.report.write_data` run whole inside this."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def build_report(
    run_dirs: list[Path],
    *,
    judge_key: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    allow_ungraded: bool = False,
) -> ReportData:
    """Read ``run_dirs`` and compute every figure of the report.

    Args:
        run_dirs: one or more run directories (merged into one leaderboard).
        judge_key: grades to use; None picks the only key, else the one graded last, with a
            warning naming the others (see :func:`jobbench.report.resolve_judge_key`).
        n_resamples, confidence, seed: bootstrap settings.
        allow_ungraded: a ``judge_key`` with no grades in any run is accepted (its trials
            are shown ungraded, with a warning) instead of refused.

    Raises:
        ReportInputError: unreadable runs, no judge key graded in every run and none
            chosen, no run given.
    """
    if not run_dirs:
        raise ReportInputError("no run directory given")
    paths = [Path(r).resolve() for r in run_dirs]
    if len(set(paths)) != len(paths):
        raise ReportInputError("the same run directory is given twice")
    key = resolve_judge_key(paths, judge_key, allow_ungraded=allow_ungraded)
    with _gc_paused():
        runs = [load_run(p, key, slim=True) for p in paths]  # drill-downs read texts again
        return _build(runs, paths, key, judge_key, n_resamples, confidence, seed)


def _build(
    runs: list[RunData],
    paths: list[Path],
    key: str | None,
    judge_key: str | None,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> ReportData:
    """:func:`build_report` once its runs are read: every figure, warning and comparison."""
    warnings: list[str] = []
    note = judge_key_note(paths, key, judge_key)
    if note is not None:
        warnings.append(note)
    if key is None:
        warnings.append(
            "no grades found in any run (grades/<judge-key>/ is empty): "
            "every graded figure is missing; run `jobbench grade` first"
        )
    names = [r.name for r in runs]
    for r in runs:
        if names.count(r.name) > 1:
            r.name = f"{r.name} ({r.path.parent.name})"
        warnings += r.warnings
        if key is not None and key not in RunDir(r.path).judge_keys():
            if r.trials and all(lt.record.status == "infra_error" for lt in r.trials):
                pass  # nothing to grade: the infrastructure errors are reported as such
            else:
                warnings.append(
                    f"{r.name}: no grades under judge key {key}; its trials are ungraded"
                )
    all_keys = [(r, k) for r in runs for k in _config_keys(r)]
    pair_count: dict[tuple[str, str], int] = {}
    for _, k in all_keys:
        pair_count[k] = pair_count.get(k, 0) + 1
    settings: dict[str, Any] = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    epochs = max(
        [r.epochs for r in runs] + [lt.record.epoch for r in runs for lt in r.trials] + [1]
    )
    ks = list(range(1, epochs + 1))
    by_config = {id(r): _trials_by_config(r) for r in runs}
    pending = []
    for run, (agent, model) in all_keys:
        label = config_label(agent, model)
        if pair_count[(agent, model)] > 1:
            label = f"{label} [{run.name}]"
        loaded = by_config[id(run)].get((agent, model), [])
        trials = [
            trial_result(
                lt.record,
                lt.grade,
                run=run.name,
                config=label,
                judge_key=key,
                task=run.metas.get(lt.record.task_id),
                trajectory_events=lt.trajectory_events,
                lock_digest=run.digests.get(lt.record.task_id),
            )
            for lt in loaded
        ]
        tasks = task_results(
            trials, [run.metas[t] for t in run.task_ids], config=label, run=run.name
        )
        pending.append((run, agent, model, label, loaded, trials, tasks))
    jobs: list[_AggregateJob] = []
    for i, (*_, label, _loaded, _trials, tasks) in enumerate(pending):
        jobs.append((i, "overall", "all", label, tasks, True))
        for kind in GROUP_KINDS:
            for g, rs in group_results(tasks, kind).items():
                jobs.append((i, kind, g, label, rs, kind != "occupation"))
    aggregates = _in_parts_interleaved(
        _aggregate_part, (jobs, ks, settings), len(jobs), AGGREGATES_PER_PROCESS
    )
    by_kind: list[dict[str, dict[str, Aggregate]]] = [{} for _ in pending]
    for (i, kind, g, *_), agg in zip(jobs, aggregates):
        by_kind[i].setdefault(kind, {})[g] = agg  # job order: overall, then each group kind
    configs: list[ConfigView] = []
    for (run, agent, model, label, loaded, trials, tasks), aggs in zip(pending, by_kind):
        overall = aggs["overall"]["all"]
        groups = {kind: aggs.get(kind, {}) for kind in GROUP_KINDS}
        configs.append(
            ConfigView(
                run=run,
                agent=agent,
                model=model,
                label=label,
                loaded=loaded,
                trials=trials,
                tasks=tasks,
                overall=overall,
                groups=groups,
                cost=cost_summary(trials, config=label),
                chain_breaks=chain_break_counts(trials),
            )
        )
    configs.sort(key=_rank_key)
    for i, c in enumerate(configs, 1):
        c.rank, c.anchor = i, f"c{i}"
        o = c.overall
        not_scored = {
            s: n for s, n in o.trials_by_state.items() if s not in ("complete", "no_deliverable")
        }
        if not_scored:
            desc = ", ".join(f"{n} {s}" for s, n in not_scored.items())
            warnings.append(
                f"{c.label}: {sum(not_scored.values())} trial(s) without a score ({desc}); "
                "shown as such, never as 0; a task with no scored epoch is missing (counts 0)"
            )
        if o.tasks_missing:
            warnings.append(
                f"{c.label}: {o.tasks_missing} of {o.tasks} task(s) missing, "
                "counted as 0 in micro and macro"
            )
        if o.tasks_unknown_max:
            warnings.append(
                f"{c.label}: maximum unknown for {len(o.tasks_unknown_max)} task(s) "
                "(no dataset and no "
                f"grade): left out of micro: {', '.join(o.tasks_unknown_max[:10])}"
            )
        stale = [t.trial_id for t in c.trials if t.task_digest_matches is False]
        if stale:
            warnings.append(
                f"{c.label}: {len(stale)} trial(s) ran on a task version other than lock.json's"
            )
    warnings = _provisional_warnings(configs) + _integrity_warnings(runs, configs) + warnings
    task_sets = {frozenset(t.task_id for t in c.tasks) for c in configs}
    if len(task_sets) > 1:
        warnings.append(
            "configurations were run on different task sets: "
            "compare micro/macro only together with "
            "the task counts (paired comparisons use shared tasks only)"
        )
    task_ids = list(dict.fromkeys(t for r in runs for t in r.task_ids))
    if len(configs) <= MAX_ALL_PAIRS:
        pairs = list(combinations(configs, 2))
    else:
        pairs = [(configs[0], c) for c in configs[1:]]
    pairs = [
        (a, b) for a, b in pairs if {t.task_id for t in a.tasks} & {t.task_id for t in b.tasks}
    ]
    comparisons = _in_parts_interleaved(
        _compare_part,
        ([(a.tasks, b.tasks, a.trials, b.trials) for a, b in pairs], settings),
        len(pairs),
        COMPARISONS_PER_PROCESS,
    )
    return ReportData(
        runs=runs,
        judge_key=key,
        configs=configs,
        comparisons=comparisons,
        task_ids=task_ids,
        warnings=warnings,
        settings={**settings, "epochs": epochs},
    )


AGGREGATES_PER_PROCESS = 50
"""Fewest aggregates worth a forked process (each takes about 1 ms with 10,000 bootstrap
resamples of 130 tasks)."""
COMPARISONS_PER_PROCESS = 4
"""Fewest paired comparisons worth a forked process (each takes about 15 ms with 10,000
resamples of 130 tasks)."""

_AggregateJob = tuple[int, str, str, str, list[TaskResult], bool]
"""One :func:`jobbench.scoring.aggregate` call of :func:`_build`: (configuration position,
group kind (``overall`` for the configuration's whole), group, configuration label, task
results, with bootstrap intervals)."""

R = TypeVar("R")


def _in_parts_interleaved(
    work: Callable[[Any, tuple[int, int]], list[R]], shared: Any, count: int, per_process: int
) -> list[R]:
    """The ``count`` results of ``work`` computed in parts (:func:`jobbench.report._fork.
    in_parts`; a forked process for at least ``per_process`` items), part ``i`` of ``n``
    computing items ``i, i + n, i + 2n, …`` (neighbouring items cost alike, so every part
    gets a like share), put back in item order."""
    parts = in_parts(work, shared, processes_for(count, per_process))
    n = len(parts)
    out: list[R] = [None] * count  # type: ignore[list-item]  # every position is filled
    for i, results in enumerate(parts):
        out[i::n] = results
    return out


def _aggregate_part(
    shared: tuple[list[_AggregateJob], list[int], dict[str, Any]], part: tuple[int, int]
) -> list[Aggregate]:
    """The aggregates of the jobs ``part[0], part[0] + part[1], …`` of ``shared = (jobs, ks,
    bootstrap settings)``."""
    jobs, ks, settings = shared
    return [
        aggregate(
            rs,
            config=label,
            group_kind=kind,
            group=g,
            ks=ks,
            with_ci=with_ci,
            **settings,
        )
        for _, kind, g, label, rs, with_ci in jobs[part[0] :: part[1]]
    ]


def _compare_part(
    shared: tuple[list[tuple[Any, Any, Any, Any]], dict[str, Any]], part: tuple[int, int]
) -> list[Comparison]:
    """The comparisons of the pairs ``part[0], part[0] + part[1], …`` of ``shared = (pairs
    as (A tasks, B tasks, A trials, B trials), bootstrap settings)``."""
    pairs, settings = shared
    return [compare(*pair, **settings) for pair in pairs[part[0] :: part[1]]]


def _listing(items: list[str], limit: int = 10) -> str:
    more = f"; … {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def _integrity_warnings(runs: list[RunData], configs: list[ConfigView]) -> list[str]:
    """Warnings about trials whose figures need a second look: possible prompt injection,
    deliverables the extractor could not read, refused deliverable files, other judge
    flags, trials that reached their disk quota, and trials run without a sandbox (per run, with
    a note when a run mixes sandboxed and unsandboxed trials)."""
    out: list[str] = []
    for run in runs:
        trials = [t for c in configs if c.run is run for t in c.trials]
        bare = [t.trial_id for t in trials if t.sandbox == "none"]
        if bare:
            out.append(
                f"{run.name}: {len(bare)} of {len(trials)} trial(s) ran WITHOUT a sandbox "
                "(the agent could "
                "read rubrics, solutions and other trials; not comparable with sandboxed results): "
                + _listing(bare)
            )
        kinds = Counter(t.sandbox for t in trials if t.sandbox)
        boxed = {k: n for k, n in kinds.items() if k != "none"}
        if boxed and kinds.get("none"):
            out.append(
                f"{run.name}: mixes sandboxed "
                f"({', '.join(f'{k}: {n}' for k, n in sorted(boxed.items()))}) "
                f"and unsandboxed (none: {kinds['none']}) trials; "
                "its figures mix two security settings"
            )
    for c in configs:
        issues = c.trial_issues()

        def listed(attr: str, limit: int = 3, issues=issues) -> list[str]:
            return [
                f"{tid} ({_listing(getattr(i, attr), limit)})"
                for tid, i in issues.items()
                if getattr(i, attr)
            ]

        if inj := listed("injection"):
            out.append(
                f"{c.label}: {len(inj)} trial(s) flagged by the judge "
                "for possible prompt injection: "
                + _listing(inj)
                + ": a deliverable may be trying to steer the judge; check these grades by hand"
            )
        if bad := listed("unreadable"):
            out.append(
                f"{c.label}: {len(bad)} trial(s) with deliverables the extractor could not read "
                "(corrupt, "
                "mislabelled or unsupported; graded on what could be read): " + _listing(bad)
            )
        if refused := listed("refused"):
            out.append(
                f"{c.label}: {len(refused)} trial(s) with refused deliverable files "
                "(those files were not graded; the rest of each trial was): " + _listing(refused)
            )
        if volume := listed("volume"):
            out.append(
                f"{c.label}: {len(volume)} trial(s) flagged for enumeration or volume (a checked "
                "quantity stated with disagreeing values, or deliverables past the documented "
                "caps; "
                "the checks failed those quantities): " + _listing(volume)
            )
        if other := listed("other"):
            out.append(
                f"{c.label}: {len(other)} trial(s) with other judge flags: " + _listing(other)
            )
        full = _quota_reached(c.loaded)
        if full:
            limits = sorted({q for _, q in full})
            out.append(
                f"{c.label}: {len(full)} trial(s) reached the disk quota "
                f"({', '.join(f'{q:g} MiB' for q in limits)}; writes past it failed with "
                "ENOSPC or the trial was stopped; what was written within it was graded): "
                + _listing([tid for tid, _ in full])
            )
    return out


def _quota_reached(loaded: list[LoadedTrial]) -> list[tuple[str, float]]:
    """``(trial id, quota MiB)`` of the trials whose record says they reached the disk quota
    (``details.disk_quota.reached``, written by :mod:`jobbench.runner`)."""
    out = []
    for lt in loaded:
        q = (lt.record.details or {}).get("disk_quota")
        if isinstance(q, dict) and q.get("reached") is True:
            limit = q.get("limit_mb")
            out.append((lt.record.trial_id, float(limit) if isinstance(limit, int | float) else 0))
    return out


def _provisional_warnings(configs: list[ConfigView]) -> list[str]:
    """One warning, first in the list, when any configuration is provisional."""
    flagged = [c for c in configs if c.provisional]
    if not flagged:
        return []
    total: Counter[str] = Counter()
    for c in flagged:
        total.update(c.incomplete_trials)
    desc = ", ".join(f"{total[s]} {s}" for s in INCOMPLETE_STATES if total[s])
    how = []
    if total["judge_error"] or total["ungraded"]:
        how.append(
            "`jobbench grade RUN` (or the same `jobbench run` command) grades only the missing ones"
        )
    if total["infra_error"]:
        how.append("the same `jobbench run` command re-runs infrastructure failures")
    return [
        f"{sum(total.values())} trial(s) have incomplete grades or results ({desc}): "
        "the figures of "
        f"{', '.join(c.label for c in flagged)} are provisional (marked *): "
        "a task without a scored trial "
        f"counts 0 until it is retried; {'; '.join(how)}"
    ]
