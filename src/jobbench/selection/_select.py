"""Occupation statistics, the selection rule, and the comparison with JobBench's 35
occupations.

Per WORKBank occupation: rated tasks, desire statistics, capability, zone counts, OEWS
May 2024 employment and annual mean wage, and economic exposure = employment × mean wage
(US dollars per year, the occupation's wage bill). A :class:`SelectionRule` keeps
occupations with enough high-desire tasks and ranks them by exposure, with every threshold
a parameter.
"""

from __future__ import annotations

import csv
import itertools
import statistics
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .._markdown import md_text
from ._errors import DataFileError
from ._oews import OewsTable, join_oews, soc_major_code
from ._table import read_table
from ._workbank import TaskMeta, TaskRating, Zone

CROSSWALK_COLUMNS = [
    "jobbench_slug",
    "workbank_occupation",
    "workbank_onet_soc2019_code",
    "mapping",
]


class CrosswalkRow(BaseModel):
    """One JobBench occupation and the WORKBank occupation it corresponds to.

    Attributes:
        slug: JobBench occupation slug.
        onet_soc2010_code, onet_soc2010_title: JobBench's O*NET-SOC 2010 identity ('' if
            not given).
        workbank_occupation, workbank_onet_soc2019_code: the WORKBank (O*NET-SOC 2019)
            occupation.
        mapping: ``exact`` / ``title-change`` / ``UNCERTAIN``.
        note: free text.
    """

    model_config = ConfigDict(frozen=True)

    slug: str
    onet_soc2010_code: str = ""
    onet_soc2010_title: str = ""
    workbank_occupation: str
    workbank_onet_soc2019_code: str
    mapping: str
    note: str = ""


def default_crosswalk_path() -> Path:
    """The packaged crosswalk (``jobbench/selection/data/jobbench_workbank_crosswalk.csv``)."""
    return Path(
        str(
            resources.files("jobbench.selection").joinpath(
                "data", "jobbench_workbank_crosswalk.csv"
            )
        )
    )


def load_crosswalk(path: Path | str | None = None) -> list[CrosswalkRow]:
    """Read a JobBench → WORKBank occupation crosswalk (default: the packaged one).

    Required columns: ``jobbench_slug``, ``workbank_occupation``,
    ``workbank_onet_soc2019_code``, ``mapping``; optional ``onet_soc2010_code``,
    ``onet_soc2010_title``, ``note``. The shared ``jobbench_35_occupations.csv`` qualifies.

    Raises:
        DataFileError: missing file/column, an empty slug, or a duplicate slug.
    """
    table = read_table(
        path or default_crosswalk_path(),
        CROSSWALK_COLUMNS,
        optional=["onet_soc2010_code", "onet_soc2010_title", "note"],
        what="JobBench–WORKBank crosswalk",
    )
    out: list[CrosswalkRow] = []
    seen: set[str] = set()
    for i, row in enumerate(table.rows):
        slug = row["jobbench_slug"].strip()
        if not slug:
            raise table.error(i, "jobbench_slug", "empty value")
        if slug in seen:
            raise table.error(i, "jobbench_slug", f"duplicate slug {slug!r}")
        seen.add(slug)
        out.append(
            CrosswalkRow(
                slug=slug,
                onet_soc2010_code=row.get("onet_soc2010_code", "").strip(),
                onet_soc2010_title=row.get("onet_soc2010_title", "").strip(),
                workbank_occupation=row["workbank_occupation"].strip(),
                workbank_onet_soc2019_code=row["workbank_onet_soc2019_code"].strip(),
                mapping=row["mapping"].strip(),
                note=row.get("note", "").strip(),
            )
        )
    return out


class OccupationStats(BaseModel):
    """Statistics of one WORKBank occupation (tasks with both ratings only).

    Attributes:
        occupation, onet_soc_code: O*NET-SOC 2019 title and code.
        soc_major_code, soc_major_title: 2018 SOC major group.
        n_tasks, n_worker_ratings: rated tasks and worker rating rows.
        desire_mean: mean over tasks of the per-task mean desire.
        desire_mean_of_ratings: mean of all the occupation's worker ratings.
        desire_median, desire_max: median / max of the per-task means.
        n_tasks_desire_ge3: tasks with mean desire ≥ 3.
        capability_mean: mean over tasks of the per-task mean capability.
        zones: zone name → task count.
        oews_occ_code, oews_title, oews_method: the OEWS row joined (see
            :func:`jobbench.selection.join_oews`).
        employment, mean_wage, exposure: jobs; US dollars per year; employment × mean
            wage (US dollars per year). None when OEWS has no value.
        exposure_rank: 1 = largest exposure among occupations with one; None without.
        jobbench_slugs: JobBench occupations mapped to this one by the crosswalk.
        onet_n_tasks: task statements O*NET lists for the occupation's code (None when no
            O*NET file was given); ``n_tasks / onet_n_tasks`` is WORKBank's coverage.
    """

    occupation: str
    onet_soc_code: str
    soc_major_code: str
    soc_major_title: str
    n_tasks: int
    n_worker_ratings: int
    desire_mean: float
    desire_mean_of_ratings: float
    desire_median: float
    desire_max: float
    n_tasks_desire_ge3: int
    capability_mean: float
    zones: dict[str, int]
    oews_occ_code: str | None
    oews_title: str | None
    oews_method: str
    employment: float | None
    mean_wage: float | None
    exposure: float | None
    exposure_rank: int | None = None
    jobbench_slugs: list[str] = Field(default_factory=list)
    onet_n_tasks: int | None = None


def occupation_table(
    tasks: list[TaskRating],
    metadata: list[TaskMeta],
    oews: OewsTable,
    crosswalk: Iterable[CrosswalkRow] = (),
    soc_titles: dict[str, str] | None = None,
    onet_tasks: Iterable | None = None,
    metadata_source: Path | str = "task metadata",
) -> list[OccupationStats]:
    """One :class:`OccupationStats` per occupation of ``tasks``, sorted by exposure rank
    (occupations without exposure last, by title).

    Args:
        tasks: :func:`jobbench.selection.task_ratings` output.
        metadata: task metadata, for each occupation's O*NET-SOC code.
        oews: the OEWS national table.
        crosswalk: JobBench → WORKBank rows; fills ``jobbench_slugs``.
        soc_titles: SOC major code → title (default: the OEWS ``major`` rows, then the
            packaged 2018 SOC list).

    Raises:
        DataFileError: an occupation of ``tasks`` has no row in the task metadata (names
            the metadata file and the occupation column).
    """
    from ..tasks import soc_major_groups

    titles = {**soc_major_groups(), **oews.major_groups(), **(soc_titles or {})}
    code_of = {m.occupation: m.onet_soc_code for m in metadata}
    slugs: dict[str, list[str]] = {}
    for c in crosswalk:
        slugs.setdefault(c.workbank_occupation, []).append(c.slug)
    onet_count: dict[str, int] | None = None
    if onet_tasks is not None:
        onet_count = {}
        for ot in onet_tasks:
            onet_count[ot.onet_soc_code] = onet_count.get(ot.onet_soc_code, 0) + 1
    by_occ: dict[str, list[TaskRating]] = {}
    for t in tasks:
        by_occ.setdefault(t.occupation, []).append(t)
    out: list[OccupationStats] = []
    for occ, ts in by_occ.items():
        code = code_of.get(occ) or next((t.onet_soc_code for t in ts if t.onet_soc_code), None)
        if code is None:
            raise DataFileError(
                metadata_source,
                f"occupation {occ!r} of the rating files has no row here, so no O*NET-SOC code",
                column="Occupation (O*NET-SOC Title)",
            )
        j = join_oews(code, oews)
        major = soc_major_code(code)
        desires = [t.desire for t in ts]
        zones = {z.value: 0 for z in Zone}
        for t in ts:
            zones[t.zone.value] += 1
        out.append(
            OccupationStats(
                occupation=occ,
                onet_soc_code=code,
                soc_major_code=major,
                soc_major_title=titles.get(major, "Unknown"),
                n_tasks=len(ts),
                n_worker_ratings=sum(t.n_workers for t in ts),
                desire_mean=statistics.fmean(desires),
                desire_mean_of_ratings=sum(t.desire * t.n_workers for t in ts)
                / sum(t.n_workers for t in ts),
                desire_median=statistics.median(desires),
                desire_max=max(desires),
                n_tasks_desire_ge3=sum(d >= 3 for d in desires),
                capability_mean=statistics.fmean(t.capability for t in ts),
                zones=zones,
                oews_occ_code=j.occ_code,
                oews_title=j.title,
                oews_method=j.method,
                employment=j.employment,
                mean_wage=j.mean_wage,
                exposure=j.exposure,
                jobbench_slugs=sorted(slugs.get(occ, [])),
                onet_n_tasks=None if onet_count is None else onet_count.get(code, 0),
            )
        )
    ranked = sorted(
        (o for o in out if o.exposure is not None),
        key=lambda o: (-(o.exposure or 0.0), o.occupation),
    )
    for rank, o in enumerate(ranked, 1):
        o.exposure_rank = rank
    out.sort(key=lambda o: (o.exposure_rank is None, o.exposure_rank or 0, o.occupation))
    return out


class SelectionRule(BaseModel):
    """Which occupations to select. Every threshold is a parameter.

    Order of application: (1) SOC group filter ``groups``; (2) an occupation is eligible
    when at least ``min_qualifying_tasks`` of its tasks have mean desire ≥ ``desire_cut``
    (> when ``strict``), its mean desire (mean of task means) is ≥
    ``min_occupation_desire`` (if set), and it has an exposure whose rank among all rated
    occupations is ≤ ``max_exposure_rank`` (if set); (3) eligible occupations are taken in
    decreasing exposure, skipping any whose SOC major group is full (``group_quotas`` per
    group, else ``max_per_group``), until ``top_n`` are taken (all when None).

    Attributes:
        desire_cut: task-level desire threshold on the 1–5 scale (default 3.0).
        strict: use > instead of ≥ for ``desire_cut``.
        min_qualifying_tasks: minimum number of high-desire tasks (default 1).
        min_occupation_desire: minimum occupation mean desire, or None.
        max_exposure_rank: maximum exposure rank (1 = largest), or None.
        top_n: number of occupations to select, or None for every eligible one.
        max_per_group: default cap per SOC major group, or None.
        group_quotas: SOC major code (``13-0000``) → cap for that group.
        groups: only these SOC major codes, or None for all.
        top_tasks: number of top-desire task statements listed per selected occupation.
    """

    model_config = ConfigDict(frozen=True)

    desire_cut: float = 3.0
    strict: bool = False
    min_qualifying_tasks: int = Field(1, ge=0)
    min_occupation_desire: float | None = None
    max_exposure_rank: int | None = Field(None, ge=1)
    top_n: int | None = Field(35, ge=1)
    max_per_group: int | None = Field(None, ge=0)
    group_quotas: dict[str, int] = Field(default_factory=dict)
    groups: list[str] | None = None
    top_tasks: int = Field(5, ge=0)

    def qualifies(self, desire: float) -> bool:
        """Whether a task with mean desire ``desire`` counts as high-desire."""
        return desire > self.desire_cut if self.strict else desire >= self.desire_cut

    def describe(self) -> str:
        """A one-line human description of the non-default parameters."""
        op = ">" if self.strict else "≥"
        parts = [f"≥{self.min_qualifying_tasks} task(s) with desire {op} {self.desire_cut:g}"]
        if self.min_occupation_desire is not None:
            parts.append(f"occupation desire ≥ {self.min_occupation_desire:g}")
        if self.max_exposure_rank is not None:
            parts.append(f"exposure rank ≤ {self.max_exposure_rank}")
        if self.groups:
            parts.append("groups " + ",".join(self.groups))
        if self.max_per_group is not None:
            parts.append(f"≤{self.max_per_group} per SOC group")
        if self.group_quotas:
            parts.append(
                "quotas " + ",".join(f"{k}={v}" for k, v in sorted(self.group_quotas.items()))
            )
        parts.append(f"top {self.top_n} by exposure" if self.top_n else "all by exposure")
        return "; ".join(parts)


class SelectedOccupation(BaseModel):
    """A selected occupation: its statistics, 1-based selection rank, the number of
    qualifying (high-desire) tasks, and its top-desire tasks (candidates for new JobBench
    tasks), highest desire first."""

    rank: int
    stats: OccupationStats
    n_qualifying_tasks: int
    top_tasks: list[TaskRating]


class Selection(BaseModel):
    """The result of :func:`select_occupations`.

    Attributes:
        rule: the rule applied.
        selected: selected occupations in selection order.
        excluded: occupation → reason it was not selected (``groups``, ``desire``,
            ``occupation desire``, ``no exposure``, ``exposure rank``, ``quota``, ``top_n``).
    """

    rule: SelectionRule
    selected: list[SelectedOccupation]
    excluded: dict[str, str]


def _task_key(t: TaskRating) -> tuple:
    return (-t.desire, int(t.task_id) if t.task_id.isdigit() else 0, t.task_id)


def select_occupations(
    table: list[OccupationStats], tasks: list[TaskRating], rule: SelectionRule
) -> Selection:
    """Apply ``rule`` to the occupations of ``table`` (see :class:`SelectionRule`).

    Returns:
        a :class:`Selection`; ties in exposure are broken by title.
    """
    by_occ: dict[str, list[TaskRating]] = {}
    for t in tasks:
        by_occ.setdefault(t.occupation, []).append(t)
    excluded: dict[str, str] = {}
    eligible: list[tuple[OccupationStats, list[TaskRating]]] = []
    for o in table:
        qual = sorted(
            (t for t in by_occ.get(o.occupation, []) if rule.qualifies(t.desire)), key=_task_key
        )
        if rule.groups and o.soc_major_code not in rule.groups:
            excluded[o.occupation] = "groups"
        elif len(qual) < rule.min_qualifying_tasks:
            excluded[o.occupation] = "desire"
        elif rule.min_occupation_desire is not None and o.desire_mean < rule.min_occupation_desire:
            excluded[o.occupation] = "occupation desire"
        elif o.exposure is None:
            excluded[o.occupation] = "no exposure"
        elif rule.max_exposure_rank is not None and (o.exposure_rank or 0) > rule.max_exposure_rank:
            excluded[o.occupation] = "exposure rank"
        else:
            eligible.append((o, qual))
    eligible.sort(key=lambda p: (-(p[0].exposure or 0.0), p[0].occupation))
    taken: dict[str, int] = {}
    selected: list[SelectedOccupation] = []
    for o, qual in eligible:
        cap = rule.group_quotas.get(o.soc_major_code, rule.max_per_group)
        if rule.top_n is not None and len(selected) >= rule.top_n:
            excluded[o.occupation] = "top_n"
            continue
        if cap is not None and taken.get(o.soc_major_code, 0) >= cap:
            excluded[o.occupation] = "quota"
            continue
        taken[o.soc_major_code] = taken.get(o.soc_major_code, 0) + 1
        top = sorted(by_occ.get(o.occupation, []), key=_task_key)[: rule.top_tasks]
        selected.append(
            SelectedOccupation(
                rank=len(selected) + 1, stats=o, n_qualifying_tasks=len(qual), top_tasks=top
            )
        )
    return Selection(rule=rule, selected=selected, excluded=excluded)


class Comparison(BaseModel):
    """A selection compared with JobBench's occupations (in WORKBank terms).

    Attributes:
        n_target: distinct WORKBank occupations the crosswalk maps JobBench's slugs to.
        n_selected: occupations selected.
        overlap, misses, extras: WORKBank titles in both / only JobBench / only selected.
        miss_reasons: miss → why the rule left it out (see :class:`Selection`).
        precision, recall, jaccard: |overlap| / |selected|, / |target|, / |union|.
    """

    n_target: int
    n_selected: int
    overlap: list[str]
    misses: list[str]
    extras: list[str]
    miss_reasons: dict[str, str]
    precision: float
    recall: float
    jaccard: float


def compare_with_jobbench(selection: Selection, crosswalk: Iterable[CrosswalkRow]) -> Comparison:
    """Compare ``selection`` with the WORKBank occupations of the JobBench crosswalk."""
    target = {c.workbank_occupation for c in crosswalk}
    chosen = {s.stats.occupation for s in selection.selected}
    overlap = sorted(target & chosen)
    misses = sorted(target - chosen)
    union = target | chosen
    return Comparison(
        n_target=len(target),
        n_selected=len(chosen),
        overlap=overlap,
        misses=misses,
        extras=sorted(chosen - target),
        miss_reasons={m: selection.excluded.get(m, "not rated in WORKBank") for m in misses},
        precision=len(overlap) / len(chosen) if chosen else 0.0,
        recall=len(overlap) / len(target) if target else 0.0,
        jaccard=len(overlap) / len(union) if union else 0.0,
    )


DEFAULT_GRID: dict[str, list] = {
    "desire_cut": [2.5, 2.75, 3.0, 3.25, 3.5],
    "min_qualifying_tasks": [1, 2, 3, 4, 5],
    "min_occupation_desire": [None, 2.5, 2.75, 3.0],
    "top_n": [None, 25, 30, 35, 40, 45, 50, 60],
    "max_per_group": [None, 5, 7, 10],
}
"""The parameter grid searched by :func:`search_rules` (3,200 rules)."""


class RuleScore(BaseModel):
    """One searched rule and its :class:`Comparison` with JobBench; ``equivalent`` counts
    the searched rules (this one included) that select exactly the same occupations."""

    rule: SelectionRule
    comparison: Comparison
    equivalent: int = 1


def search_rules(
    table: list[OccupationStats],
    tasks: list[TaskRating],
    crosswalk: list[CrosswalkRow],
    grid: dict[str, list] | None = None,
    base: SelectionRule | None = None,
    keep: int = 10,
) -> list[RuleScore]:
    """Try every combination of ``grid`` (default :data:`DEFAULT_GRID`) on top of ``base``
    and return the ``keep`` best distinct selections: highest Jaccard with JobBench's list,
    then most overlap, then fewest selected, then grid order. Rules selecting the same set
    of occupations are collapsed into the first one in grid order (``equivalent`` counts
    them).

    Raises:
        ValueError: for a grid key that is not a :class:`SelectionRule` field.
    """
    grid = grid or DEFAULT_GRID
    base = base or SelectionRule()
    unknown = set(grid) - set(SelectionRule.model_fields)
    if unknown:
        raise ValueError(f"unknown rule parameter(s) in grid: {sorted(unknown)}")
    keys = list(grid)
    by_set: dict[frozenset, tuple[tuple, RuleScore]] = {}
    for i, values in enumerate(itertools.product(*(grid[k] for k in keys))):
        rule = SelectionRule.model_validate({**base.model_dump(), **dict(zip(keys, values))})
        sel = select_occupations(table, tasks, rule)
        chosen = frozenset(s.stats.occupation for s in sel.selected)
        if chosen in by_set:
            by_set[chosen][1].equivalent += 1
            continue
        comp = compare_with_jobbench(sel, crosswalk)
        by_set[chosen] = (
            (-comp.jaccard, -len(comp.overlap), comp.n_selected, i),
            RuleScore(rule=rule, comparison=comp),
        )
    ranked = sorted(by_set.values(), key=lambda p: p[0])
    return [s for _, s in ranked[:keep]]


# ---------------------------------------------------------------- output ----------


def _fmt(v, digits: int = 3) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) < 1e6 else f"{v:.0f}"
    return str(v)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured markdown table; ``|`` in cells is escaped."""

    def cell(v) -> str:
        return md_text(_fmt(v))

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


OCC_COLUMNS = [
    "exposure_rank",
    "occupation",
    "onet_soc_code",
    "soc_major_code",
    "soc_major_title",
    "n_tasks",
    "n_worker_ratings",
    "desire_mean",
    "desire_mean_of_ratings",
    "desire_median",
    "desire_max",
    "n_tasks_desire_ge3",
    "capability_mean",
    "green_light",
    "red_light",
    "rnd_opportunity",
    "low_priority",
    "oews_occ_code",
    "oews_title",
    "oews_method",
    "employment",
    "mean_wage",
    "exposure",
    "onet_n_tasks",
    "jobbench_slugs",
]


def occupation_rows(table: list[OccupationStats]) -> list[dict]:
    """Flat dicts (columns :data:`OCC_COLUMNS`) for CSV output."""
    zone_keys = dict(
        zip(
            ["green_light", "red_light", "rnd_opportunity", "low_priority"], [z.value for z in Zone]
        )
    )
    rows = []
    for o in table:
        d = o.model_dump()
        for k, z in zone_keys.items():
            d[k] = o.zones[z]
        d["jobbench_slugs"] = ";".join(o.jobbench_slugs)
        rows.append({c: d[c] for c in OCC_COLUMNS})
    return rows


def csv_text(columns: list[str], rows: list[dict]) -> str:
    """CSV text (header + rows); None becomes an empty cell, floats keep full precision."""
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buf.getvalue()


def selection_markdown(selection: Selection, comparison: Comparison | None = None) -> str:
    """Markdown: the rule, the selected occupations table, their top tasks, and the
    comparison with JobBench when given."""
    out = [f"# Selected occupations\n\nRule: {selection.rule.describe()}.\n"]
    rows = [
        [
            s.rank,
            s.stats.occupation,
            s.stats.soc_major_code,
            s.stats.n_tasks,
            s.n_qualifying_tasks,
            s.stats.desire_mean,
            s.stats.capability_mean,
            s.stats.employment,
            s.stats.mean_wage,
            (s.stats.exposure or 0) / 1e9,
            ", ".join(s.stats.jobbench_slugs) or "—",
        ]
        for s in selection.selected
    ]
    out.append(
        markdown_table(
            [
                "#",
                "occupation",
                "SOC group",
                "tasks",
                "high-desire tasks",
                "desire",
                "capability",
                "employment",
                "mean wage ($)",
                "exposure ($bn)",
                "JobBench",
            ],
            rows,
        )
    )
    out.append("\n## Top-desire task statements (candidates for new tasks)\n")
    for s in selection.selected:
        out.append(f"\n### {s.rank}. {s.stats.occupation} ({s.stats.onet_soc_code})\n")
        for t in s.top_tasks:
            out.append(
                f"- {t.desire:.2f} desire, {t.capability:.2f} capability, {t.zone.value}: {t.task}"
                f" (Task ID {t.task_id})\n"
            )
    if comparison is not None:
        out.append("\n" + comparison_markdown(comparison))
    return "".join(out)


def comparison_markdown(c: Comparison) -> str:
    """Markdown summary of a :class:`Comparison`."""
    lines = [
        "## Comparison with the 35 JobBench occupations\n",
        f"\nJobBench occupations in WORKBank terms: {c.n_target}; selected: {c.n_selected}; "
        f"overlap {len(c.overlap)}; precision {c.precision:.3f}; recall {c.recall:.3f}; "
        f"Jaccard {c.jaccard:.3f}.\n",
        "\nMisses (JobBench, not selected): "
        + ("; ".join(f"{m} [{c.miss_reasons[m]}]" for m in c.misses) or "none")
        + ".\n",
        "\nExtras (selected, not in JobBench): " + ("; ".join(c.extras) or "none") + ".\n",
    ]
    return "".join(lines)
