"""Attention analysis: do academic papers and start-ups target the occupations where
agents are capable?

Per JobBench occupation: the number of distinct arXiv papers and YC companies that
WORKBank's external mappings attach to the occupation's tasks, correlated (Pearson and
Spearman, seeded percentile bootstrap) with the model capability per occupation from a
JobBench leaderboard file or from graded runs.

The public mapping files are smaller than the corpora of the JobBench paper: 1,214 arXiv
ids and 1,633 YC companies here versus 2,932 papers and 2,089 companies in the paper (which
reports r = −0.15 for papers and −0.34 for companies), so figures computed from them differ.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from ._errors import DataFileError
from ._select import CrosswalkRow
from ._stats import Correlation, correlate
from ._workbank import MappingRow

PAPER_CORPUS = {"papers": 2932, "companies": 2089}
"""Corpus sizes reported in the JobBench paper (for the documentation of the gap)."""


class Capability(BaseModel):
    """Per-occupation capability of one configuration (agent × model).

    Attributes:
        name: identifier (leaderboard ``model`` id, ``mean``, or ``<run>:<agent>@<model>``).
        label: human label (``GPT-5.4 (Codex CLI)``).
        scores: occupation slug → score in percent (0–100). Occupations the configuration
            was not evaluated on are absent (not zero).
        source: the file or run directory read.
    """

    name: str
    label: str
    scores: dict[str, float]
    source: str


def _lb_error(path: Path, where: str, message: str) -> DataFileError:
    return DataFileError(path, message, column=where)


def load_leaderboard(path: Path | str) -> list[Capability]:
    """Read the public JobBench ``leaderboard.json``: one :class:`Capability` per entry of
    ``leaderboard`` from ``categoryBreakdown[slug].score_pct``.

    Raises:
        DataFileError: missing file, invalid JSON, or a missing/ill-typed key; the
            ``column`` names the JSON path (e.g. ``leaderboard[3].categoryBreakdown``).
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileError(
            path,
            "leaderboard file not found",
            hint="get it with `jobbench selection fetch` or pass --leaderboard",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(path, f"not valid JSON: {exc}") from None
    entries = data.get("leaderboard") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise _lb_error(path, "leaderboard", "missing or empty list 'leaderboard'")
    out: list[Capability] = []
    for i, e in enumerate(entries):
        where = f"leaderboard[{i}]"
        if not isinstance(e, dict):
            raise _lb_error(path, where, "entry is not an object")
        model = e.get("model")
        if not isinstance(model, str) or not model:
            raise _lb_error(path, f"{where}.model", "missing model id")
        breakdown = e.get("categoryBreakdown")
        if not isinstance(breakdown, dict):
            raise _lb_error(path, f"{where}.categoryBreakdown", "missing per-occupation breakdown")
        scores: dict[str, float] = {}
        for slug, cell in breakdown.items():
            v = cell.get("score_pct") if isinstance(cell, dict) else None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _lb_error(
                    path, f"{where}.categoryBreakdown.{slug}.score_pct", f"not a number: {v!r}"
                )
            scores[slug] = float(v)
        display = e.get("displayName") or model
        framework = e.get("framework")
        label = f"{display} ({framework})" if framework else str(display)
        out.append(Capability(name=model, label=label, scores=scores, source=str(path)))
    return out


def load_run_capability(run_dir: Path | str, judge_key: str | None = None) -> list[Capability]:
    """Per-occupation capability of every ``<agent>@<model>`` in a graded run directory.

    Reads the run's grades of one judge key (:meth:`jobbench.rundir.RunDir.grades`).
    Score per occupation = 100 × Σ passed weight / Σ maximum weight over the complete
    grades of that configuration (all epochs); grades with status ``judge_error`` or
    ``unjudged`` are left out, and tasks without a grade are not counted (unlike the
    leaderboard's overall score, where they count as zero).

    Args:
        run_dir: the run directory.
        judge_key: which ``grades/<judge-key>`` to read; needed when there are several.

    Raises:
        DataFileError: no grades folder, several judge keys and none chosen, an unknown
            key, no complete grade, or an unreadable grade file (named).
    """
    from ..rundir import RunDir, parse_trial_id

    run_dir = Path(run_dir)
    rd = RunDir(run_dir)
    grades = rd.grades_dir
    if not grades.is_dir():
        raise DataFileError(grades, "run has no grades folder", hint="grade the run first")
    keys = rd.judge_keys()
    if judge_key is None:
        if len(keys) != 1:
            raise DataFileError(
                grades, f"choose a judge key with --judge-key; found {keys or 'none'}"
            )
        judge_key = keys[0]
    elif judge_key not in keys:
        raise DataFileError(grades / judge_key, f"no such judge key; found {keys}")
    passed: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    total: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    scan = rd.grades(judge_key)
    if scan.problems:
        p = scan.problems[0]
        raise DataFileError(p.path, f"not a valid grade record: {p.message}", column=p.field)
    for tid, g in scan.records.items():
        if g.status not in ("complete", "no_deliverable") or g.max_score <= 0:
            continue
        k = parse_trial_id(tid)
        config, slug = k.config, k.occupation
        passed[config][slug] += g.passed_weight
        total[config][slug] += g.max_score
    if not total:
        raise DataFileError(grades / judge_key, "no complete grade records")
    return [
        Capability(
            name=f"{run_dir.name}:{config}",
            label=f"{config} [{run_dir.name}, {judge_key}]",
            scores={s: 100.0 * passed[config][s] / total[config][s] for s in sorted(total[config])},
            source=str(run_dir),
        )
        for config in sorted(total)
    ]


def mean_capability(configs: list[Capability], name: str = "mean") -> Capability:
    """The mean over ``configs`` of each occupation's score (over the configurations that
    have it).

    Raises:
        ValueError: when ``configs`` is empty.
    """
    if not configs:
        raise ValueError("no configurations to average")
    acc: dict[str, list[float]] = defaultdict(list)
    for c in configs:
        for s, v in c.scores.items():
            acc[s].append(v)
    return Capability(
        name=name,
        label=f"mean of {len(configs)} configurations",
        scores={s: sum(v) / len(v) for s, v in sorted(acc.items())},
        source=", ".join(sorted({c.source for c in configs})),
    )


def pick_configs(configs: list[Capability], wanted: Iterable[str]) -> list[Capability]:
    """Select configurations by ``name`` or ``label`` or the label without the framework
    (case-insensitive); ``all`` = every configuration, ``mean`` = :func:`mean_capability`
    of all of them. Default (nothing wanted): every configuration plus the mean.

    Raises:
        KeyError: a wanted name matches nothing (the message lists the choices).
    """
    wanted = list(wanted)
    if not wanted:
        wanted = ["all", "mean"]
    out: list[Capability] = []
    for w in wanted:
        key = w.strip().lower()
        if key == "all":
            out.extend(configs)
            continue
        if key == "mean":
            out.append(mean_capability(configs))
            continue
        hits = [
            c
            for c in configs
            if key in {c.name.lower(), c.label.lower(), c.label.split(" (")[0].lower()}
        ]
        if not hits:
            choices = ", ".join(c.name for c in configs)
            raise KeyError(f"no configuration {w!r}; choose from: all, mean, {choices}")
        out.extend(hits)
    return out


class OccupationAttention(BaseModel):
    """Attention counts of one JobBench occupation.

    Attributes:
        slug, workbank_occupation, mapping: from the crosswalk.
        n_tasks_papers, n_tasks_companies: mapped task rows counted.
        papers, companies: distinct arXiv ids / YC company names over those tasks.
    """

    slug: str
    workbank_occupation: str
    mapping: str
    n_tasks_papers: int
    n_tasks_companies: int
    papers: int
    companies: int


def attention_counts(
    crosswalk: Iterable[CrosswalkRow],
    papers: list[MappingRow],
    companies: list[MappingRow],
    rated_tasks: set[tuple[str, str]] | None = None,
) -> list[OccupationAttention]:
    """Distinct papers and companies per JobBench occupation.

    A mapping row belongs to a JobBench occupation when its ``occupation`` equals the
    crosswalk's WORKBank title; with ``rated_tasks`` (a set of (task text, occupation)),
    only rows of those tasks count.
    """

    def index(rows: list[MappingRow]) -> dict[str, list[MappingRow]]:
        d: dict[str, list[MappingRow]] = defaultdict(list)
        for r in rows:
            if rated_tasks is None or (r.task, r.occupation) in rated_tasks:
                d[r.occupation].append(r)
        return d

    p_idx, c_idx = index(papers), index(companies)
    out = []
    for cw in crosswalk:
        p_rows, c_rows = (
            p_idx.get(cw.workbank_occupation, []),
            c_idx.get(cw.workbank_occupation, []),
        )
        out.append(
            OccupationAttention(
                slug=cw.slug,
                workbank_occupation=cw.workbank_occupation,
                mapping=cw.mapping,
                n_tasks_papers=len(p_rows),
                n_tasks_companies=len(c_rows),
                papers=len({i for r in p_rows for i in r.items}),
                companies=len({i for r in c_rows for i in r.items}),
            )
        )
    return out


class AttentionResult(BaseModel):
    """Correlations for one capability configuration.

    Attributes:
        config, label: the configuration.
        slugs: occupations used (having both a score and attention counts), sorted.
        missing: crosswalk occupations without a score for this configuration.
        papers, companies: method (``pearson``/``spearman``) → :class:`Correlation` of
            capability (percent) with the distinct paper / company count.
    """

    config: str
    label: str
    slugs: list[str]
    missing: list[str]
    papers: dict[str, Correlation]
    companies: dict[str, Correlation]


def attention_analysis(
    configs: list[Capability],
    attention: list[OccupationAttention],
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> list[AttentionResult]:
    """Correlate each configuration's per-occupation capability with the attention counts.

    Pairs are the occupations of ``attention`` that the configuration has a score for, in
    slug order; each of the four correlations uses the same seed (so the same resampling
    plan, see :func:`jobbench.selection.correlate`).

    Raises:
        ValueError: a configuration shares fewer than 3 occupations with ``attention``.
    """
    by_slug = {a.slug: a for a in attention}
    out = []
    for c in configs:
        slugs = sorted(s for s in by_slug if s in c.scores)
        if len(slugs) < 3:
            raise ValueError(
                f"configuration {c.name!r} has scores for only {len(slugs)} of the "
                f"{len(by_slug)} occupations (slugs differ between the files?)"
            )
        x = [c.scores[s] for s in slugs]
        res = {}
        for target in ("papers", "companies"):
            y = [getattr(by_slug[s], target) for s in slugs]
            res[target] = {
                m: correlate(x, y, method=m, n_boot=n_boot, seed=seed, level=level)
                for m in ("pearson", "spearman")
            }
        out.append(
            AttentionResult(
                config=c.name,
                label=c.label,
                slugs=slugs,
                missing=sorted(set(by_slug) - set(slugs)),
                **res,
            )
        )
    return out
