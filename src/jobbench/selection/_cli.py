"""CLI commands of jobbench.selection, registered on the main app by :func:`register`.

``jobbench select``, ``jobbench attention``, ``jobbench selection fetch`` and
``jobbench selection figures``. Import heavy modules inside command functions so that
`jobbench --help` stays fast. Every data file has an explicit option; unset ones come from
``--data-dir`` (default ``$JOBBENCH_DATA_DIR`` or ``data/selection``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

DATA_DIR_HELP = (
    "Data directory with the layout of `jobbench selection fetch` [default: $JOBBENCH_DATA_DIR or "
    "data/selection]."
)


def _fail(message: str, code: int = 2) -> typer.Exit:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True).print(
        f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True
    )
    return typer.Exit(code)


def _paths(data_dir: Path | None, **overrides: Path | None):
    from ._paths import DataPaths, default_data_dir

    return DataPaths.from_dir(data_dir or default_data_dir()).with_overrides(**overrides)


def _parse_quotas(values: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        code, sep, n = v.partition("=")
        code = code.strip()
        if len(code) == 2 and code.isdigit():
            code += "-0000"
        if not sep or not n.strip().isdigit() or len(code) != 7:
            raise _fail(f"--quota {v!r}: expected GROUP=N, e.g. 13-0000=7 or 13=7")
        out[code] = int(n)
    return out


def _group_code(v: str) -> str:
    v = v.strip()
    return v + "-0000" if len(v) == 2 and v.isdigit() else v


def _no_nan(obj):
    """JSON-safe copy: NaN (an undefined correlation) becomes None."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _no_nan(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_no_nan(v) for v in obj]
    return obj


def _fmt_corr(c) -> str:
    if math.isnan(c.r):
        return "n/a"
    return f"{c.r:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`."""
    selection_app = typer.Typer(
        help="Selection data: fetch the public files; print WORKBank's figures.",
        no_args_is_help=True,
    )

    @app.command("select")
    def select_cmd(
        data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
        desires: Path | None = typer.Option(
            None, "--desires", help="WORKBank domain_worker_desires.csv."
        ),
        capability: Path | None = typer.Option(
            None, "--capability", help="WORKBank expert_rated_technological_capability.csv."
        ),
        task_metadata: Path | None = typer.Option(
            None, "--task-metadata", help="WORKBank task_statement_with_metadata.csv."
        ),
        oews: Path | None = typer.Option(None, "--oews", help="OEWS May 2024 national CSV."),
        onet_tasks: Path | None = typer.Option(
            None, "--onet-tasks", help="O*NET Task Statements (txt or csv)."
        ),
        onet_occupations: Path | None = typer.Option(
            None, "--onet-occupations", help="O*NET-SOC 2010 Occupation Data (txt)."
        ),
        no_onet: bool = typer.Option(
            False, "--no-onet", help="Skip the O*NET cross-checks (no O*NET files needed)."
        ),
        crosswalk: Path | None = typer.Option(
            None, "--crosswalk", help="JobBench→WORKBank crosswalk CSV [default: packaged]."
        ),
        desire_cut: float = typer.Option(
            3.0, "--desire-cut", help="Task-level desire threshold (1–5)."
        ),
        strict: bool = typer.Option(False, "--strict", help="Use desire > cut instead of ≥ cut."),
        min_tasks: int = typer.Option(
            1, "--min-tasks", min=0, help="Minimum tasks at or above the desire cut."
        ),
        min_occupation_desire: float | None = typer.Option(
            None, "--min-occupation-desire", help="Minimum occupation mean desire."
        ),
        max_exposure_rank: int | None = typer.Option(
            None,
            "--max-exposure-rank",
            min=1,
            help="Keep occupations ranked at most this by exposure.",
        ),
        top: int | None = typer.Option(35, "--top", min=1, help="Number of occupations to select."),
        select_all: bool = typer.Option(
            False, "--all", help="Select every eligible occupation (ignore --top)."
        ),
        max_per_group: int | None = typer.Option(
            None, "--max-per-group", min=0, help="Cap per SOC major group."
        ),
        quota: list[str] = typer.Option(
            [], "--quota", help="Per-group cap GROUP=N (e.g. 13-0000=7); repeatable."
        ),
        group: list[str] = typer.Option(
            [], "--group", help="Only these SOC major groups (e.g. 13-0000); repeatable."
        ),
        top_tasks: int = typer.Option(
            5, "--top-tasks", min=0, help="Top-desire task statements per occupation."
        ),
        out: Path = typer.Option(
            Path("selection-results"), "--out", help="Directory for CSV/JSON/markdown/plots."
        ),
        plots: bool = typer.Option(True, "--plots/--no-plots", help="Write the two PNG figures."),
        search: bool = typer.Option(
            False, "--search", help="Also search rule parameters that best reproduce JobBench's 35."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of markdown."),
    ) -> None:
        """Select occupations by worker desire and economic exposure; compare with JobBench's 35.

        Writes occupations.{csv,json,md}, selected.{csv,json,md}, candidate_tasks.csv,
        comparison.json (and search.json with --search) and plots to --out.
        """
        from collections import Counter

        from .._io import atomic_write_json, atomic_write_text
        from ._errors import DataFileError
        from ._oews import load_oews, soc_major_code
        from ._onet import (
            crosswalk_mismatches,
            load_onet_occupations,
            load_onet_tasks,
            onet_mismatches,
        )
        from ._plots import plot_desire_capability, plot_exposure_desire
        from ._select import (
            DEFAULT_GRID,
            OCC_COLUMNS,
            SelectionRule,
            compare_with_jobbench,
            comparison_markdown,
            csv_text,
            load_crosswalk,
            markdown_table,
            occupation_rows,
            occupation_table,
            search_rules,
            select_occupations,
            selection_markdown,
        )
        from ._workbank import (
            load_expert_capability,
            load_task_metadata,
            load_worker_desires,
            task_ratings,
            workbank_figures,
        )

        p = _paths(
            data_dir,
            desires=desires,
            capability=capability,
            task_metadata=task_metadata,
            oews=oews,
            onet_tasks=onet_tasks,
            onet_occupations=onet_occupations,
        )
        try:
            rule = SelectionRule(
                desire_cut=desire_cut,
                strict=strict,
                min_qualifying_tasks=min_tasks,
                min_occupation_desire=min_occupation_desire,
                max_exposure_rank=max_exposure_rank,
                top_n=None if select_all else top,
                max_per_group=max_per_group,
                group_quotas=_parse_quotas(quota),
                groups=[_group_code(g) for g in group] or None,
                top_tasks=top_tasks,
            )
            meta = load_task_metadata(p.task_metadata)
            tasks = task_ratings(
                load_worker_desires(p.desires), load_expert_capability(p.capability), meta
            )
            oews_table = load_oews(p.oews)
            cw = load_crosswalk(crosswalk)
            notes: list[str] = []
            onet = None
            if not no_onet:
                onet = load_onet_tasks(p.onet_tasks)
                notes += [f"O*NET: {m}" for m in onet_mismatches(tasks, onet)]
                notes += [
                    f"crosswalk: {m}"
                    for m in crosswalk_mismatches(cw, load_onet_occupations(p.onet_occupations))
                ]
            table = occupation_table(
                tasks, meta, oews_table, cw, onet_tasks=onet, metadata_source=p.task_metadata
            )
        except DataFileError as exc:
            raise _fail(str(exc)) from None
        known = {o.occupation for o in table}
        notes += [
            f"crosswalk: {c.slug} maps to {c.workbank_occupation!r}, which has no rated tasks"
            for c in cw
            if c.workbank_occupation not in known
        ]
        figures = workbank_figures(tasks)
        selection = select_occupations(table, tasks, rule)
        comparison = compare_with_jobbench(selection, cw)
        searched = None
        if search:
            grid = dict(DEFAULT_GRID)
            grid["group_quotas"] = [
                {},
                dict(Counter(soc_major_code(c.workbank_onet_soc2019_code) for c in cw)),
            ]
            searched = search_rules(table, tasks, cw, grid=grid, keep=10)

        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "occupations.csv", csv_text(OCC_COLUMNS, occupation_rows(table)))
        atomic_write_json(
            out / "occupations.json",
            {
                "workbank_figures": figures.model_dump(),
                "occupations": [o.model_dump() for o in table],
            },
        )
        occ_md = markdown_table(
            [
                "rank",
                "occupation",
                "SOC",
                "tasks",
                "desire≥3",
                "desire",
                "capability",
                "employment",
                "mean wage",
                "exposure ($bn)",
                "OEWS join",
                "JobBench",
            ],
            [
                [
                    o.exposure_rank,
                    o.occupation,
                    o.soc_major_code,
                    o.n_tasks,
                    o.n_tasks_desire_ge3,
                    o.desire_mean,
                    o.capability_mean,
                    o.employment,
                    o.mean_wage,
                    None if o.exposure is None else o.exposure / 1e9,
                    o.oews_method,
                    ", ".join(o.jobbench_slugs),
                ]
                for o in table
            ],
        )
        atomic_write_text(
            out / "occupations.md", f"# WORKBank occupations by economic exposure\n\n{occ_md}"
        )
        sel_rows = []
        cand_rows = []
        for s in selection.selected:
            r = occupation_rows([s.stats])[0]
            sel_rows.append(
                {"selection_rank": s.rank, "n_qualifying_tasks": s.n_qualifying_tasks, **r}
            )
            for t in s.top_tasks:
                cand_rows.append(
                    {
                        "selection_rank": s.rank,
                        "occupation": s.stats.occupation,
                        "task_id": t.task_id,
                        "task": t.task,
                        "desire": t.desire,
                        "capability": t.capability,
                        "zone": t.zone.value,
                        "n_workers": t.n_workers,
                        "n_experts": t.n_experts,
                    }
                )
        atomic_write_text(
            out / "selected.csv",
            csv_text(["selection_rank", "n_qualifying_tasks", *OCC_COLUMNS], sel_rows),
        )
        atomic_write_text(
            out / "candidate_tasks.csv",
            csv_text(
                [
                    "selection_rank",
                    "occupation",
                    "task_id",
                    "task",
                    "desire",
                    "capability",
                    "zone",
                    "n_workers",
                    "n_experts",
                ],
                cand_rows,
            ),
        )
        atomic_write_json(out / "selected.json", selection.model_dump(mode="json"))
        sel_md = selection_markdown(selection, comparison)
        atomic_write_text(out / "selected.md", sel_md)
        atomic_write_json(out / "comparison.json", comparison.model_dump())
        if searched is not None:
            atomic_write_json(out / "search.json", [s.model_dump(mode="json") for s in searched])
        written_plots = []
        if plots:
            jb = {c.workbank_occupation for c in cw}
            written_plots.append(
                str(plot_desire_capability(tasks, out / "desire_vs_capability.png", highlight=jb))
            )
            written_plots.append(
                str(
                    plot_exposure_desire(
                        table,
                        out / "exposure_vs_desire.png",
                        selected={s.stats.occupation for s in selection.selected},
                        marked=jb,
                    )
                )
            )

        if as_json:
            print(
                json.dumps(
                    {
                        "workbank_figures": figures.model_dump(),
                        "rule": rule.model_dump(),
                        "selected": [s.stats.occupation for s in selection.selected],
                        "comparison": comparison.model_dump(),
                        "search": None
                        if searched is None
                        else [
                            {
                                "rule": s.rule.model_dump(),
                                "description": s.rule.describe(),
                                "equivalent": s.equivalent,
                                "comparison": s.comparison.model_dump(),
                            }
                            for s in searched
                        ],
                        "notes": notes,
                        "out": str(out),
                        "plots": written_plots,
                    },
                    indent=2,
                )
            )
            return
        z = figures.zones
        print(
            f"WORKBank: {figures.n_tasks} tasks over {figures.n_occupations} occupations; "
            f"{figures.pct_desire_gt3:.1f} % of tasks with mean desire > 3; zones Green Light "
            f"{z['Green Light']}, "
            f"Red Light {z['Red Light']}, R&D Opportunity {z['R&D Opportunity']}, Low Priority "
            f"{z['Low Priority']}."
        )
        print()
        print(sel_md)
        if searched is not None:
            print("## Rules that best reproduce JobBench's list\n")
            print(
                markdown_table(
                    [
                        "rule (first of its equivalents)",
                        "equivalent rules",
                        "overlap",
                        "selected",
                        "Jaccard",
                    ],
                    [
                        [
                            s.rule.describe(),
                            s.equivalent,
                            len(s.comparison.overlap),
                            s.comparison.n_selected,
                            s.comparison.jaccard,
                        ]
                        for s in searched
                    ],
                )
            )
            print(comparison_markdown(searched[0].comparison))
        for n in notes:
            print(f"note: {n}")
        print(
            f"wrote {out}/ (occupations, selected, candidate_tasks, comparison"
            + (", search" if searched else "")
            + (", plots" if written_plots else "")
            + ")"
        )

    @app.command("attention")
    def attention_cmd(
        leaderboard: list[Path] = typer.Option(
            [], "--leaderboard", help="JobBench leaderboard.json (repeatable) [default: data dir]."
        ),
        run: list[Path] = typer.Option([], "--run", help="Graded run directory (repeatable)."),
        judge_key: str | None = typer.Option(
            None, "--judge-key", help="grades/<judge-key> to read from runs."
        ),
        config: list[str] = typer.Option(
            [],
            "--config",
            help="Configuration (model id or display name), `all` or `mean`; "
            "repeatable [default: all + mean].",
        ),
        data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
        papers: Path | None = typer.Option(
            None, "--papers", help="WORKBank paper_to_workflow_mapping_aggregated.csv."
        ),
        companies: Path | None = typer.Option(
            None, "--companies", help="WORKBank company_to_workflow_aggregation.csv."
        ),
        desires: Path | None = typer.Option(
            None, "--desires", help="WORKBank worker desires (for --tasks rated)."
        ),
        crosswalk: Path | None = typer.Option(
            None, "--crosswalk", help="JobBench→WORKBank crosswalk CSV."
        ),
        tasks_scope: str = typer.Option(
            "all",
            "--tasks",
            help="Count mappings of `all` the occupation's tasks or only `rated` ones.",
        ),
        exclude_uncertain: bool = typer.Option(
            False,
            "--exclude-uncertain",
            help="Drop occupations whose crosswalk mapping is UNCERTAIN.",
        ),
        n_boot: int = typer.Option(10_000, "--boot", min=1, help="Bootstrap resamples."),
        seed: int = typer.Option(0, "--seed", help="Bootstrap seed (numpy default_rng)."),
        level: float = typer.Option(0.95, "--level", help="Bootstrap interval coverage."),
        plot: Path | None = typer.Option(
            None, "--plot", help="Scatter plot of the first configuration (PNG/SVG/PDF)."
        ),
        out: Path | None = typer.Option(
            None, "--out", help="Write attention.csv and correlations.json here."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Correlate capability per occupation with academic (arXiv) and start-up (YC) attention.

        The public WORKBank mappings hold 1,214 arXiv ids and 1,633 YC companies, fewer than the
        paper's 2,932 papers and 2,089 companies, so coefficients differ from the paper's.
        """
        import os

        from .._io import atomic_write_json, atomic_write_text
        from ._attention import (
            attention_analysis,
            attention_counts,
            load_leaderboard,
            load_run_capability,
            pick_configs,
        )
        from ._errors import DataFileError
        from ._paths import DATA_DIR_ENV, default_data_dir
        from ._select import csv_text, load_crosswalk
        from ._workbank import load_attention_mapping, load_worker_desires

        if tasks_scope not in {"all", "rated"}:
            raise _fail(f"--tasks must be 'all' or 'rated', not {tasks_scope!r}")
        if not 0 < level < 1:
            raise _fail(f"--level must be in (0, 1), got {level}")
        root = data_dir
        if root is None and not os.environ.get(DATA_DIR_ENV) and not default_data_dir().exists():
            # A leaderboard inside a fetched layout (<root>/jobbench/leaderboard.json) brings its
            # data dir.
            for lb in leaderboard:
                cand = lb.resolve().parent.parent
                if (
                    lb.resolve().parent.name == "jobbench"
                    and (cand / "workbank" / "external").is_dir()
                ):
                    root = cand
                    break
        p = _paths(root, papers=papers, companies=companies, desires=desires)
        try:
            cw = load_crosswalk(crosswalk)
            if exclude_uncertain:
                cw = [c for c in cw if c.mapping.upper() != "UNCERTAIN"]
            rated = None
            if tasks_scope == "rated":
                rated = {(r.task, r.occupation) for r in load_worker_desires(p.desires)}
            counts = attention_counts(
                cw,
                load_attention_mapping(p.papers, "papers"),
                load_attention_mapping(p.companies, "companies"),
                rated,
            )
            caps = []
            sources = list(leaderboard) or ([] if run else [p.leaderboard])
            for lb in sources:
                caps.extend(load_leaderboard(lb))
            for run_dir in run:
                caps.extend(load_run_capability(run_dir, judge_key))
            chosen = pick_configs(caps, config)
            results = attention_analysis(chosen, counts, n_boot=n_boot, seed=seed, level=level)
        except DataFileError as exc:
            raise _fail(str(exc)) from None
        except (KeyError, ValueError) as exc:
            raise _fail(str(exc.args[0]) if exc.args else str(exc)) from None

        if out is not None:
            rows = [
                {**a.model_dump(), **{f"capability:{c.name}": c.scores.get(a.slug) for c in chosen}}
                for a in counts
            ]
            cols = list(counts[0].model_dump()) + [f"capability:{c.name}" for c in chosen]
            atomic_write_text(out / "attention.csv", csv_text(cols, rows))
            atomic_write_json(out / "correlations.json", _no_nan([r.model_dump() for r in results]))
        if plot is not None:
            from ._plots import plot_attention

            plot_attention(results[0], chosen[0], counts, plot)
        zero = [a.slug for a in counts if a.papers == 0 or a.companies == 0]
        if as_json:
            print(
                json.dumps(
                    _no_nan(
                        {
                            "tasks": tasks_scope,
                            "n_boot": n_boot,
                            "seed": seed,
                            "level": level,
                            "data": {"papers": str(p.papers), "companies": str(p.companies)},
                            "attention": [a.model_dump() for a in counts],
                            "capability": {c.name: c.scores for c in chosen},
                            "results": [r.model_dump() for r in results],
                        }
                    ),
                    indent=2,
                    allow_nan=False,
                )
            )
            return
        pct = int(round(level * 100))
        print(
            f"Capability vs attention per occupation: r [{pct}% percentile bootstrap interval], "
            f"{n_boot} resamples, seed {seed}"
        )
        width = max(len("configuration"), *(len(r.label) for r in results))
        head = [
            "papers: Pearson",
            "papers: Spearman",
            "YC companies: Pearson",
            "YC companies: Spearman",
        ]
        print(
            f"{'configuration':<{width}}  {'n':>3}  " + "  ".join(f"{h:<24}" for h in head).rstrip()
        )
        for r in results:
            cells = [
                _fmt_corr(r.papers["pearson"]),
                _fmt_corr(r.papers["spearman"]),
                _fmt_corr(r.companies["pearson"]),
                _fmt_corr(r.companies["spearman"]),
            ]
            print(
                f"{r.label:<{width}}  {len(r.slugs):>3}  "
                + "  ".join(f"{c:<24}" for c in cells).rstrip()
            )
        print(
            "attention: distinct arXiv papers / YC companies mapped to "
            f"{'all' if rated is None else 'the rated'} "
            f"tasks of each occupation ({p.papers}, {p.companies})."
        )
        print(
            "note: the public WORKBank mappings list about 1,200 papers and 1,600 companies, fewer "
            "than the "
            "JobBench paper's 2,932 papers and 2,089 companies (paper: r = -0.15 papers, -0.34 "
            "companies), "
            "so these figures differ from the paper's."
        )
        if any(r.missing for r in results):
            for r in results:
                if r.missing:
                    print(f"note: {r.label}: no score for {', '.join(r.missing)} (left out)")
        if zero:
            print(f"note: no mapped papers or companies for {', '.join(zero)}")
        if plot is not None:
            print(f"wrote {plot}")
        if out is not None:
            print(f"wrote {out}/attention.csv and correlations.json")

    @selection_app.command("fetch")
    def fetch_cmd(
        out: Path | None = typer.Option(
            None, "--out", help="Destination [default: $JOBBENCH_DATA_DIR or data/selection]."
        ),
        force: bool = typer.Option(False, "--force", help="Re-download files that already exist."),
        only: list[str] = typer.Option(
            [],
            "--only",
            help="Only this file key (repeatable): desires, capability, "
            "task_metadata, worker_metadata, companies, papers, oews, "
            "onet_tasks, onet_occupations, leaderboard.",
        ),
        timeout: float = typer.Option(60.0, "--timeout", help="Seconds per download."),
        probe_timeout: float = typer.Option(
            8.0, "--probe-timeout", help="Seconds per reachability probe."
        ),
        hf_revision: str | None = typer.Option(
            None, "--hf-revision", help="Revision of SALT-NLP/WORKBank."
        ),
    ) -> None:
        """Download WORKBank (Hugging Face), its external mappings, OEWS (BLS), O*NET and the
        leaderboard.

        Fails at once, writing nothing, when no source can be reached.
        """
        from . import _fetch
        from ._paths import default_data_dir

        dest = out or default_data_dir()
        try:
            report = _fetch.fetch(
                dest,
                force=force,
                timeout=timeout,
                probe_timeout=probe_timeout,
                only=only or None,
                items=_fetch.DEFAULT_ITEMS,
                hf_revision=hf_revision,
            )
        except _fetch.FetchOfflineError as exc:
            from .._exitcodes import EXIT_OFFLINE

            raise _fail(str(exc), EXIT_OFFLINE) from None
        except ValueError as exc:
            raise _fail(str(exc)) from None
        for f in report.files:
            if f.status == "fetched":
                digest = (f.sha256 or "")[:12]  # a fetched file always has its sha256
                print(f"fetched {f.path} ({f.bytes} bytes, sha256 {digest}) from {f.source}")
            elif f.status == "kept":
                print(f"kept    {f.path} (exists; --force to re-download)")
            else:
                print(f"FAILED  {f.path}: {f.error}")
        if not report.ok:
            raise _fail(
                "some files could not be fetched (see above); download them by hand "
                "(docs/selection.md)",
                1,
            )

    @selection_app.command("figures")
    def figures_cmd(
        data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
        desires: Path | None = typer.Option(
            None, "--desires", help="WORKBank domain_worker_desires.csv."
        ),
        capability: Path | None = typer.Option(
            None, "--capability", help="WORKBank expert_rated_technological_capability.csv."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Recompute WORKBank's headline figures (tasks, occupations, desire shares, zones)."""
        from ._errors import DataFileError
        from ._workbank import (
            load_expert_capability,
            load_worker_desires,
            task_ratings,
            workbank_figures,
        )

        p = _paths(data_dir, desires=desires, capability=capability)
        try:
            f = workbank_figures(
                task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability))
            )
        except DataFileError as exc:
            raise _fail(str(exc)) from None
        if as_json:
            print(json.dumps(f.model_dump(), indent=2))
            return
        print(
            f"tasks with both ratings: {f.n_tasks} over {f.n_occupations} occupations "
            f"({f.n_ratings_worker} worker ratings, {f.n_ratings_expert} expert ratings)"
        )
        print(
            f"mean desire > 3: {f.n_desire_gt3} tasks = {f.pct_desire_gt3:.1f} %; "
            f"≥ 4: {f.pct_desire_ge4:.2f} %; ≤ 2: {f.pct_desire_le2:.2f} %"
        )
        print("zones (cut 3.0 inclusive): " + ", ".join(f"{k} {v}" for k, v in f.zones.items()))
        print(f"top task: {f.top_task} ({f.top_desire:.2f})")

    app.add_typer(selection_app, name="selection")
