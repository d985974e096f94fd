"""Grading trials: extraction → checks → LLM units → verdicts → chains → GradeRecord.

One :class:`Grader` serves many trials. For each trial it plans *units* (LLM calls: one per
rubric, per task or per criterion depending on the mode), runs them with bounded
concurrency across all trials (cache first, then the endpoint), and assembles one
:class:`jobbench.records.GradeRecord` per trial with every criterion's verdict, source,
reasoning, evidence, evidence-found flag, raw replies, usage, cost and timings. z_r and s_t
are computed in code by :mod:`jobbench.scoring`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from .._io import atomic_write_json
from .._progress import stderr_progress
from ..extract import Extraction, ExtractLimits, FolderExtraction, folder_text
from ..records import (
    CriterionVerdict,
    GradedDeliverable,
    GradeRecord,
    InjectionHit,
    JudgeUnit,
    PrefixCacheable,
    RubricGrade,
    Usage,
)
from ..rundir import trial_id as make_trial_id
from ..scoring import chain_values, disagrees, official_values, task_score
from ..tasks import Rubric, Task
from ._cache import JudgeCache, unit_key
from ._client import JudgeCallError, JudgeClient, wire_messages
from ._config import PROMPT_VERSION, JudgeConfig
from ._endpoint import cache_key
from ._evidence import detect_hidden_injection, detect_injection, evidence_found, normalise
from ._images import ImageChoice, choose_images
from ._jsonfix import reply_objects, sole_object
from ._prices import PriceTable, load_prices
from ._prompts import (
    CRITERION_SCHEMA,
    RUBRIC_SCHEMA,
    TASK_SCHEMA,
    build_messages,
    criteria_notes,
    criterion_part,
    deliverables_part,
    make_boundary,
    parse_criterion_reply,
    parse_rubric_reply,
    parse_task_reply,
    reply_doubts,
    rubric_part,
    system_prompt,
    task_part,
    verdict_word,
)
from .checks import CheckResult, evaluate_check, list_deliverables
from .checks._common import check_scope, glob_match, scoped, select_files

VISION_RE = re.compile(
    r"\b(plots?|plotted|figures?|charts?|histograms?|heat\s?maps?|scatter\s?plots?|diagrams?|q\s?-?\s?q(\s?plots?)?"
    r"|visuali[sz]ations?|visuali[sz]e[ds]?|biplots?)\b",
    re.IGNORECASE,
)
"""Rubric text that calls for images (the public judge's rule, plus ``charts``)."""

PROMPT_TOTAL_CHARS = ExtractLimits().max_total_chars
"""Cap on the deliverable text of one prompt (characters), as for ``extract_dir``'s folder text."""


def needs_vision(rubric: Rubric) -> bool:
    """True when images should be attached: ``vision`` if set, else the rubric or one of its
    criteria mentions plots, figures, charts, histograms, heatmaps, scatter plots, diagrams,
    Q-Q plots or visualisations."""
    if rubric.vision is not None:
        return rubric.vision
    text = rubric.question + " " + " ".join(c.text for c in rubric.criteria)
    return bool(VISION_RE.search(text))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------- data


@dataclass
class TrialInput:
    """What to grade.

    Attributes:
        trial_id: ``<task_id>/<agent>@<model>/epoch-<N>`` (any unique string works).
        task: the task (rubrics).
        deliverables_dir: folder of deliverables (may be missing or empty).
        epoch: epoch number (part of the cache key).
        out_path: where the GradeRecord JSON goes (None: not written).
        prior: an earlier record of the same inputs (its valid verdicts are reused).
        extra: values of the record's provenance fields (``inputs_digest``, ``agent``,
            ``model``, ``task_digest``, …: declared :class:`GradeRecord` fields only; any other
            name is an error when the record is made).
        on_written: called with the record after it is written.
        save: writes the record instead of the default atomic JSON file at ``out_path``
            (run directories: :meth:`jobbench.rundir.RunDir.grade_writer`, which refuses
            paths through symbolic links); it must be picklable for remote executors.
    """

    trial_id: str
    task: Task
    deliverables_dir: Path
    epoch: int = 1
    out_path: Path | None = None
    prior: GradeRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    on_written: Callable[[GradeRecord], None] | None = None
    save: Callable[[GradeRecord], None] | None = None


_VERDICT_KEYS = frozenset({"verdict", "rubric_passed", "passed", "pass", "result"})
"""Keys that carry a verdict in the reply items the grader reads (``parse_item`` in
``jobbench/judge/_prompts.py``)."""
_LIST_KEYS = frozenset({"criteria", "criteria_results", "rubrics"})


def _has_verdict_keys(obj: Any, depth: int = 0) -> bool:
    """Whether a parsed reply object holds, at any depth (to 20 levels), a verdict: a key
    of :data:`_VERDICT_KEYS` whose value reads as pass or fail (:func:`verdict_word`; a
    test summary's ``"passed": 42`` does not), or a non-empty list under a key of
    :data:`_LIST_KEYS` holding one."""
    if depth > 20:
        return False
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _VERDICT_KEYS and not isinstance(v, (dict, list)) and verdict_word(v):
                return True
            if _has_verdict_keys(v, depth + 1):
                return True
        return False
    if isinstance(obj, list):
        return any(_has_verdict_keys(v, depth + 1) for v in obj)
    return False


@dataclass
class Unit:
    """One LLM question (one or more replies after retries)."""

    job: TrialJob
    uid: str
    kind: str  # rubric | task | criterion
    asked: dict[int, list[int]]
    key: str
    messages: list[dict[str, Any]]
    schema_name: str
    schema: dict[str, Any]
    images: list[str]
    needs_model_verdict: bool
    payload: dict[str, Any] | None = None
    replies: list[dict[str, Any]] = field(default_factory=list)
    cached: bool = False
    reused: bool = False
    error: str | None = None
    elapsed: float = 0.0
    base_key: str = ""
    carried: dict[str, dict[str, Any]] = field(default_factory=dict)
    carried_model: dict[str, bool | None] = field(default_factory=dict)
    full_asked: dict[int, list[int]] = field(default_factory=dict)
    images_left_out: list[str] = field(default_factory=list)
    """``"<name>: <reason>"`` of the in-scope images not attached (cap, duplicates)."""
    cached_usage: Usage | None = None
    """What the verdicts this unit did not pay for now (served from the verdict cache, or
    carried over from an earlier grade) cost when they were obtained."""
    cause: str | None = None
    """Why ``error``: one of :data:`jobbench.judge._client.CAUSES`."""
    downgrades: list[str] = field(default_factory=list)
    """The judge client's downgrades in effect for any call of this unit."""
    notes: list[str] = field(default_factory=list)
    """Flags about the replies' criterion items (``judge_extra_item:…``, …)."""
    provisional: set[str] = field(default_factory=set)
    """Payload keys (``"<r>:<c>"``, ``"rubric_passed:<r>"``) whose verdict came from a reply
    cut off at the token limit; a later complete reply replaces them (:meth:`Grader._merge`)."""

    def __post_init__(self) -> None:
        self.base_key = self.base_key or self.key
        self.full_asked = self.full_asked or self.asked

    def verdict(self, r: int, c: int) -> tuple[dict[str, Any] | None, bool]:
        """(verdict of criterion (r, c), whether it was carried over from a previous grade)."""
        v = (self.payload or {}).get("verdicts", {}).get(f"{r}:{c}")
        if v is not None:
            return v, False
        v = self.carried.get(f"{r}:{c}")
        return v, v is not None

    def model_verdict(self, r: int) -> bool | None:
        got = (self.payload or {}).get("model_verdicts", {}).get(str(r))
        return got if got is not None else self.carried_model.get(str(r))

    def merged_payload(self) -> dict[str, Any]:
        """This unit's payload with carried-over verdicts, as stored for the next resume."""
        p = self.payload or {"verdicts": {}, "model_verdicts": {}, "overall": {}, "raw": []}
        out = {
            **p,
            "verdicts": {**self.carried, **p.get("verdicts", {})},
            "model_verdicts": {
                **self.carried_model,
                **{k: v for k, v in p.get("model_verdicts", {}).items() if v is not None},
            },
        }
        return out

    @property
    def complete(self) -> bool:
        p = self.payload or {}
        have = p.get("verdicts", {})
        for r, cs in self.asked.items():
            for c in cs:
                if f"{r}:{c}" not in have:
                    return False
            if self.needs_model_verdict and p.get("model_verdicts", {}).get(str(r)) is None:
                return False
        return True


@dataclass
class TrialJob:
    """A trial being graded."""

    inp: TrialInput
    extraction: FolderExtraction
    files: list[str]
    prefilled: dict[tuple[int, int], CriterionVerdict]
    second: dict[tuple[int, int], dict[str, Any]]
    units: list[Unit]
    unit_of: dict[tuple[int, int], Unit]
    flags: list[str]
    injection: list[dict[str, str]]
    norm_text: str
    timings: dict[str, float]
    started: float
    remaining: int = 0
    no_deliverable: str | None = None
    """Why the trial has nothing gradeable (``no gradeable deliverable: …``), or None."""
    completed_prompts: list[str] = field(default_factory=list)
    """:func:`prompt_text` of every call of this trial whose reply has come back, in
    completion order (guarded by the grader's lock; emptied when the trial is done)."""


# ----------------------------------------------------------------------------- grader


LEAD_WAIT = 120.0
"""Default :attr:`Grader.lead_wait`, seconds: longer than a typical judge call, far shorter
than a request's time-out (``JudgeConfig.timeout``, 300 s) times its attempts."""


class Grader:
    """Grades trials under one :class:`JudgeConfig`.

    Args:
        config: the judge configuration.
        prices: price table (default: packaged defaults + ``config.prices_file``).
        client: a :class:`JudgeClient` (default: built from ``config`` when it uses an LLM).
        cache: a :class:`JudgeCache` (default: ``config.resolved_cache_path()`` when
            ``config.cache``; None disables).
        progress: show a rich progress bar on stderr.
        before_first_call: called once, before the first request to the judge (the lazy
            preflight of ``jobbench grade``); what it raises aborts :meth:`grade`.
        schedule: how a trial's units are submitted to the pool (:meth:`grade`):
            ``"prefix"`` (default) sends one unit of each prefix group first and the rest of
            the group when it returns; ``"all"`` submits every unit at once (the schedule
            before prefix grouping, kept for benchmarks).
        lead_wait: seconds a prefix group's other units wait for its first unit under
            ``schedule="prefix"``; past it they are released all the same (a hung or very
            slow first call costs the group its cached prefix, not the run's wall time).

    Raises:
        ValueError: ``schedule`` is neither ``"prefix"`` nor ``"all"``, or ``lead_wait``
            is not positive.
    """

    def __init__(
        self,
        config: JudgeConfig,
        *,
        prices: PriceTable | None = None,
        client: JudgeClient | None = None,
        cache: JudgeCache | None = None,
        progress: bool = False,
        before_first_call: Callable[[], None] | None = None,
        schedule: Schedule = "prefix",
        lead_wait: float = LEAD_WAIT,
    ):
        self.config = config
        if schedule not in ("prefix", "all"):
            raise ValueError(f"schedule must be 'prefix' or 'all', not {schedule!r}")
        if not lead_wait > 0:
            raise ValueError(f"lead_wait must be positive seconds, not {lead_wait!r}")
        self.schedule: Schedule = schedule
        self.lead_wait = lead_wait
        # called once, under a lock, before the first request to the judge (the lazy
        # preflight of ``jobbench grade``); what it raises aborts :meth:`grade`
        self.before_first_call = before_first_call
        self._first_call_lock = threading.Lock()
        self._first_call_error: BaseException | None = None
        self._first_call_done = False
        self.prices = prices or load_prices(config.prices_file)
        self.client = client
        if self.client is None and config.uses_llm:
            self.client = JudgeClient(config, self.prices)
        self.cache = cache
        self._own_cache = False
        if self.cache is None and config.cache and config.uses_llm:
            self.cache = JudgeCache(config.resolved_cache_path())
            self._own_cache = True
        self.progress = progress
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the cache if this grader opened it."""
        if self._own_cache and self.cache is not None:
            self.cache.close()

    # -------------------------------------------------------------- planning

    def plan(self, inp: TrialInput) -> TrialJob:
        """Extract, run checks and build the LLM units of one trial (no LLM call)."""
        from ..extract import extract_dir

        cfg = self.config
        t0 = time.monotonic()
        root = Path(inp.deliverables_dir)
        if root.is_dir() and not root.is_symlink():
            extraction = extract_dir(root, max_chars_per_file=cfg.max_chars_per_file)
            nothing = extraction.no_deliverable_reason()
        else:
            extraction = FolderExtraction(files=[], text="")
            nothing = "no gradeable deliverable: the deliverable folder does not exist"
        files = [] if nothing else list_deliverables(root)
        t_extract = time.monotonic() - t0
        flags: list[str] = []
        injection: list[dict[str, str]] = []
        for ex in extraction.files:
            if any(d.level == "error" for d in ex.diagnostics):
                flags.append(f"extraction_error:{ex.path}")
            hit = detect_injection(ex.path, ex.text)
            for img in ex.images:  # an image's name is shown to the judge too
                hit = hit or detect_injection(ex.path, img.name)
            if ex.hidden:
                flags.append(f"hidden_content:{ex.path}")
                hit = detect_hidden_injection(ex.path, ex.hidden) or hit
            if hit:
                flags.append(f"prompt_injection:{ex.path}")
                injection.append({"file": hit.file, "excerpt": hit.excerpt})
        norm_text = normalise("\n".join(ex.text for ex in extraction.files))

        t1 = time.monotonic()
        task = inp.task
        decide = cfg.effective_decide
        checks: dict[tuple[int, int], CheckResult] = {}
        if files:
            flags.extend(volume_flags(root, files, extraction))
        for r in task.rubrics:
            for c in r.criteria:
                if c.check is not None and files:
                    scope = check_scope(c.check.file, files, c.text, r.files)
                    with scoped(scope):
                        res = evaluate_check(c.check, inp.deliverables_dir, extraction)
                        matched = len(select_files(root, c.check.file))
                    if scope is not None and not scope and not res.passed and not res.error:
                        res = res.model_copy(
                            update={
                                "detail": res.detail + " (the criterion names "
                                "the file(s) to read; none is among the deliverables)"
                            }
                        )
                    checks[(r.index, c.index)] = res
                    if res.conflict:
                        flags.append(f"{CONFLICT_FLAG}{r.id}/{c.index}")
                    if matched > CAPS.files_per_check:
                        flags.append(f"{OVER_CAP_FLAG}files_per_check:{r.id}/{c.index}:{matched}")
        flags[:] = list(dict.fromkeys(flags))
        t_checks = time.monotonic() - t1

        prefilled: dict[tuple[int, int], CriterionVerdict] = {}
        second: dict[tuple[int, int], dict[str, Any]] = {}
        asked: dict[int, list[int]] = {}
        for r in task.rubrics:
            for c in r.criteria:
                rc = (r.index, c.index)
                check_res = checks.get(rc)
                if nothing:
                    prefilled[rc] = CriterionVerdict(
                        rubric_index=r.index,
                        criterion_index=c.index,
                        verdict="fail",
                        source="none",
                        reasoning=nothing,
                    )
                    continue
                if check_res is not None and decide in ("auto", "checks"):
                    prefilled[rc] = _check_verdict(r.index, c.index, check_res)
                elif decide == "checks":
                    prefilled[rc] = CriterionVerdict(
                        rubric_index=r.index,
                        criterion_index=c.index,
                        verdict="unjudged",
                        source="none",
                        reasoning="no programmatic check and no LLM judge",
                    )
                else:
                    asked.setdefault(r.index, []).append(c.index)
                    if check_res is not None:
                        second[rc] = {
                            "source": "check",
                            "verdict": "judge_error"
                            if check_res.error
                            else ("pass" if check_res.passed else "fail"),
                            "detail": check_res.detail,
                            "evidence": check_res.evidence,
                        }

        job = TrialJob(
            inp=inp,
            extraction=extraction,
            files=files,
            prefilled=prefilled,
            second=second,
            units=[],
            unit_of={},
            flags=flags,
            injection=injection,
            norm_text=norm_text,
            timings={"extract_s": round(t_extract, 4), "checks_s": round(t_checks, 4)},
            started=t0,
            no_deliverable=nothing,
        )
        if asked and cfg.uses_llm:
            self._build_units(job, asked)
        return job

    def _scope(
        self, job: TrialJob, globs: list[str] | None, boundary: str
    ) -> tuple[str, str, list[Extraction]]:
        """(prompt text, text for the cache key, files) of the deliverables in scope.

        The prompt text marks each file section with a line carrying ``boundary`` (which
        no deliverable contains), so a deliverable cannot forge another file's section;
        the key text is the same without the boundary (a digest of the deliverable text,
        so it adds nothing to the key)."""
        ex = job.extraction
        chosen = (
            list(ex.files)
            if not globs
            else [f for f in ex.files if any(glob_match(f.path, g) for g in globs)]
        )
        if not chosen:
            none = f"(no deliverable matches {', '.join(globs or [])})"
            return none, none, []
        text, _ = folder_text(chosen, PROMPT_TOTAL_CHARS, boundary=boundary)
        key_text, _ = folder_text(chosen, PROMPT_TOTAL_CHARS)
        return text, key_text, chosen

    def _build_units(self, job: TrialJob, asked: dict[int, list[int]]) -> None:
        cfg = self.config
        task = job.inp.task
        all_text = job.extraction.text + "\n".join(f.text for f in job.extraction.files)
        boundary = make_boundary(all_text)
        rubrics = {r.index: r for r in task.rubrics}

        def base_parts() -> dict[str, Any]:
            return {
                "model": cfg.model,
                "temperature": cfg.temperature,
                "seed": cfg.seed,
                "response_format": cfg.response_format,
                "max_tokens": cfg.max_tokens,
                "prompt": PROMPT_VERSION,
                "mode": cfg.mode,
                "epoch": job.inp.epoch,
            }

        def make(kind: str, sub: dict[int, list[int]], uid: str) -> Unit:
            rs = [rubrics[r] for r in sub]
            globs: list[str] | None
            if any(r.files is None for r in rs):
                globs = None
            else:
                globs = sorted({g for r in rs for g in (r.files or [])})
            text, key_text, chosen = self._scope(job, globs, boundary)
            if not chosen and job.extraction.files:
                # the judge sees no file for these rubrics although the trial has some: a
                # negative criterion ("does not contain …") may pass on nothing; say so
                job.flags.extend(f"judge_scope_empty:{r.id}" for r in rs)
            imgs: list[tuple[str, str, str]] = []
            choice = ImageChoice()
            if cfg.vision and cfg.max_images > 0 and any(needs_vision(r) for r in rs):
                choice = choose_images(chosen, rs, cfg.max_images)
                imgs = choice.data_urls()
            in_scope = sum(len(f.images) for f in chosen)
            if kind == "task":
                tail = task_part(rs, sub, len(imgs))
                schema_name, schema = "task_verdicts", TASK_SCHEMA
            elif kind == "criterion":
                ((r, cs),) = sub.items()
                tail = criterion_part(rubrics[r], cs[0], len(imgs))
                schema_name, schema = "criterion_verdict", CRITERION_SCHEMA
            else:
                ((r, cs),) = sub.items()
                tail = rubric_part(rubrics[r], cs, len(imgs))
                schema_name, schema = "rubric_verdicts", RUBRIC_SCHEMA
            messages = build_messages(
                deliverables_part(text, boundary),
                tail,
                [(n, u) for n, u, _ in imgs],
                system=system_prompt(kind),
                left_out=choice.left_out,
                images_in_scope=in_scope,
            )
            key = unit_key(
                {
                    **base_parts(),
                    "kind": kind,
                    "asked": [
                        {
                            "rubric": rubrics[r].question,
                            "files": rubrics[r].files,
                            "criteria": [[c, rubrics[r].criteria[c].text] for c in cs],
                        }
                        for r, cs in sub.items()
                    ],
                    "deliverables": sorted([f.path, f.sha256] for f in chosen),
                    "text": _sha(key_text),
                    "images": [s for _, _, s in imgs],
                }
            )
            return Unit(
                job=job,
                uid=uid,
                kind=kind,
                asked=sub,
                key=key,
                messages=messages,
                schema_name=schema_name,
                schema=schema,
                images=[n for n, _, _ in imgs],
                needs_model_verdict=(cfg.mode == "official"),
                images_left_out=choice.left_out,
            )

        units: list[Unit] = []
        if cfg.mode == "task":
            units.append(make("task", dict(asked), "task"))
        elif cfg.mode == "criterion":
            for r, cs in asked.items():
                for c in cs:
                    units.append(make("criterion", {r: [c]}, f"rubric:{r}/criterion:{c}"))
        else:
            for r, cs in asked.items():
                units.append(make("rubric", {r: cs}, f"rubric:{r}"))
        # Resume: every verdict a previous grade of the same inputs obtained for a unit (same
        # base key) is kept; a unit is asked again only for what is still missing.
        prior: dict[str, dict[str, Any]] = {}
        prior_usage: dict[str, Usage] = {}
        if job.inp.prior is not None:
            for earlier in job.inp.prior.units:
                if not isinstance(earlier.payload, dict):
                    continue
                bk = earlier.base_key or earlier.key
                prior_usage[bk] = (
                    prior_usage.get(bk, Usage()) + earlier.usage + earlier.cached_usage
                )
                agg = prior.setdefault(
                    bk, {"verdicts": {}, "model_verdicts": {}, "overall": {}, "raw": []}
                )
                pl = earlier.payload
                for k, v in (pl.get("verdicts") or {}).items():
                    agg["verdicts"].setdefault(k, v)
                for k, v in (pl.get("model_verdicts") or {}).items():
                    if v is not None and agg["model_verdicts"].get(k) is None:
                        agg["model_verdicts"][k] = v
                for k, v in (pl.get("overall") or {}).items():
                    agg["overall"].setdefault(k, v)
        final: list[Unit] = []
        for u in units:
            old = prior.get(u.key)
            if old is not None and old["verdicts"]:
                u.payload = old
                carried_usage = prior_usage.get(u.key)
                if u.complete:
                    u.reused = True
                    u.cached_usage = carried_usage
                elif cfg.mode != "official":  # the public rule needs the full rubric asked again
                    remaining = {
                        r: [c for c in cs if f"{r}:{c}" not in old["verdicts"]]
                        for r, cs in u.asked.items()
                    }
                    remaining = {r: cs for r, cs in remaining.items() if cs}
                    if remaining:
                        reduced = make(u.kind, remaining, u.uid)
                        reduced.base_key = u.key
                        reduced.carried = {k: v for k, v in old["verdicts"].items()}
                        reduced.carried_model = dict(old["model_verdicts"])
                        reduced.full_asked = u.asked
                        reduced.cached_usage = carried_usage
                        u = reduced
                    else:  # only a model-level verdict is missing: nothing to re-ask
                        u.reused = True
                        u.cached_usage = carried_usage
                else:
                    u.payload = None
            final.append(u)
        for u in final:
            for r, cs in u.full_asked.items():
                for c in cs:
                    job.unit_of[(r, c)] = u
        units = final
        job.units = units

    # -------------------------------------------------------------- running

    def _first_call(self) -> None:
        """Run :attr:`before_first_call` once; re-raise what it raised on every later call
        (wrapped in :class:`FirstCallAborted`, so :meth:`grade` stops instead of recording
        an internal error)."""
        if self.before_first_call is None:
            return
        with self._first_call_lock:
            if not self._first_call_done:
                self._first_call_done = True
                try:
                    self.before_first_call()
                except Exception as exc:  # noqa: BLE001 - handed to grade()'s caller
                    self._first_call_error = exc
        if self._first_call_error is not None:
            raise FirstCallAborted(self._first_call_error)

    def run_unit(self, unit: Unit) -> None:
        """Fill ``unit.payload`` from the prior record, the cache or the endpoint."""
        if unit.reused:
            return
        t0 = time.monotonic()
        if self.cache is not None:
            for key in dict.fromkeys(
                (unit.key, unit.base_key)
            ):  # a resumed unit may be cached whole
                hit = self.cache.get_entry(cache_key(key, self.config))
                asked = unit.asked if key == unit.key else unit.full_asked
                if hit is not None and not _covers(hit[0], asked):
                    hit = None  # stored under other rubric indexes: ask again
                if hit is not None:
                    unit.payload, original = hit
                    unit.cached = True
                    if (
                        key == unit.key and unit.key != unit.base_key
                    ):  # the missing part; carried verdicts stay
                        unit.cached_usage = (unit.cached_usage or Usage()) + Usage(**original)
                    else:  # the whole unit
                        unit.cached_usage = Usage(**original)
                    return
        assert self.client is not None
        self._first_call()
        payload: dict[str, Any] = {"verdicts": {}, "model_verdicts": {}, "overall": {}, "raw": []}
        unit.payload = payload
        messages = unit.messages
        for _attempt in range(self.config.max_attempts):
            prompt = prompt_text(wire_messages(messages))  # the prompt as the server reads it
            with self._lock:  # the calls of this trial that had completed when this one is sent
                earlier = list(unit.job.completed_prompts)
            try:
                reply = self.client.chat(messages, unit.schema_name, unit.schema)
            except JudgeCallError as exc:
                unit.error = str(exc)
                unit.cause = exc.cause
                unit.downgrades = list(dict.fromkeys(unit.downgrades + exc.downgrades))
                unit.replies.append(
                    {
                        "error": str(exc),
                        "attempts": exc.attempts,
                        "abandoned": exc.abandoned,
                        "errors": exc.errors,
                        "cause": exc.cause,
                        "status": exc.status,
                        "server_message": exc.server_message[:2000],
                        "downgrades": exc.downgrades,
                    }
                )
                break
            with self._lock:
                unit.job.completed_prompts.append(prompt)
            rec: dict[str, Any] = {
                "raw": reply.content,
                "usage": reply.usage.model_dump(),
                "prefix_cacheable": prefix_cacheable(
                    prompt, earlier, reply.usage.input_tokens
                ).model_dump(),
                "attempts": reply.attempts,
                "abandoned": reply.abandoned,
                "errors": reply.errors,
                "elapsed_s": round(reply.elapsed, 4),
                "response_format": reply.response_format,
                "finish_reason": reply.finish_reason,
                "sent": reply.sent,
                "downgrades": reply.downgrades,
            }
            if reply.reasoning:
                rec["reasoning_chars"] = len(reply.reasoning)
            unit.downgrades = list(dict.fromkeys(unit.downgrades + reply.downgrades))
            payload["raw"].append(reply.content)
            ambiguous = ""
            try:
                cut = reply.finish_reason == "length"
                sole = None if cut else sole_object(reply.content)
                objects = [sole] if sole is not None else reply_objects(reply.content, cut=cut)
                ambiguous = self._ambiguity(unit, [obj for obj, _ in objects])
                if ambiguous:
                    raise ValueError(ambiguous)
                pos = self._pick(unit, objects)
                obj, method = objects[pos]
                rec["parse"] = (
                    method
                    if len(objects) == 1
                    else (f"{method} (object {pos + 1} of {len(objects)}: last of the asked shape)")
                )
                doubts = reply_doubts(unit.kind, obj, unit.asked) if sole is not None else []
                if doubts:
                    rec["pass_doubts"] = doubts[:10]
                notes = self._merge(
                    unit,
                    obj,
                    reply.downgrades,
                    provisional=method == "truncated",
                    passes=sole is not None and not doubts,
                )
                if notes:
                    rec["items"] = notes
                    unit.notes = list(dict.fromkeys(unit.notes + notes))
            except Exception as exc:  # noqa: BLE001 - any unreadable reply is a bad reply
                rec["parse"] = f"failed: {type(exc).__name__}: {str(exc)[:300]}"
            unit.replies.append(rec)
            if unit.complete:
                unit.error = None
                unit.cause = None
                break
            missing = self._missing(unit)
            why = ambiguous
            if not why and any(n.startswith("judge_pass_withheld:") for n in rec.get("items", [])):
                misfit = "; ".join(rec.get("pass_doubts", [])[:3])
                why = (
                    "a pass is taken only from a reply that is one JSON object alone, in the "
                    "asked shape: "
                    + (
                        f"this reply's object does not fit it: {misfit}"
                        if misfit
                        else "this reply is not one JSON object alone"
                    )
                    + "; a deliverable may have planted what was read"
                )
            unit.error = f"no valid verdict for {', '.join(missing)}" + (f" ({why})" if why else "")
            unit.cause = "bad_reply"
            note = (
                "Note: your previous reply did not contain a valid verdict for "
                f"{', '.join(missing)}. "
                + (
                    "It held several JSON objects in the requested shape with different "
                    "verdicts; reply with exactly one. "
                    if ambiguous
                    else ""
                )
                + "Reply again with the complete JSON object in the requested shape and "
                "nothing else: no text before or after it."
            )
            messages = unit.messages[:-1] + [
                {
                    "role": "user",
                    "content": list(unit.messages[-1]["content"])
                    + [{"type": "text", "text": note}],
                }
            ]
        unit.elapsed = time.monotonic() - t0
        if unit.complete and self.cache is not None:
            total = sum((Usage(**r["usage"]) for r in unit.replies if "usage" in r), Usage())
            if total.calls and total.cost_usd is None:
                total.cost_usd = self.prices.cost(self.config.model, total)
            self.cache.put(
                cache_key(unit.key, self.config),
                self.config.model or "",
                payload,
                total.model_dump(),
            )

    def _missing(self, unit: Unit) -> list[str]:
        p = unit.payload or {}
        out = []
        for r, cs in unit.asked.items():
            for c in cs:
                if f"{r}:{c}" not in p.get("verdicts", {}):
                    out.append(f"rubric {r} criterion {c}")
            if unit.needs_model_verdict and p.get("model_verdicts", {}).get(str(r)) is None:
                out.append(f"rubric {r} overall verdict (rubric_passed)")
        return out

    @staticmethod
    def _shape_ok(kind: str, obj: dict[str, Any]) -> bool:
        """``obj`` has the shape of the reply a ``kind`` unit asks for (its top-level keys)."""
        if kind == "task":
            return isinstance(obj.get("rubrics"), list)
        if kind == "criterion":
            return any(k in obj for k in _VERDICT_KEYS) or isinstance(obj.get("criteria"), list)
        return isinstance(obj.get("criteria", obj.get("criteria_results")), list)

    def _reading(self, unit: Unit, obj: dict[str, Any]) -> tuple[Any, ...]:
        """What ``obj`` decides for ``unit``: its verdict words per asked criterion and its
        overall rubric verdicts, as a sorted tuple (reasoning and evidence left out), so that
        two objects decide the same exactly when their readings are equal."""
        if unit.kind == "task":
            verdicts, model = parse_task_reply(obj, unit.asked)
            return (
                tuple(sorted((r, c, v["verdict"]) for (r, c), v in verdicts.items())),
                tuple(sorted((r, mv) for r, mv in model.items() if mv is not None)),
            )
        ((r, cs),) = unit.asked.items()
        if unit.kind == "criterion":
            cv = parse_criterion_reply(obj)
            return ((cs[0], cv["verdict"]) if cv is not None else None,)
        by_criterion, mv, _ = parse_rubric_reply(obj, cs)
        return (tuple(sorted((c, v["verdict"]) for c, v in by_criterion.items())), mv)

    def _ambiguity(self, unit: Unit, objects: list[dict[str, Any]]) -> str:
        """Why a reply cannot be read, or ``""``: it holds two or more objects of the asked
        shape (:meth:`_shape_ok`) that decide differently (:meth:`_reading`), or one of the
        asked shape beside one of another shape with verdict keys (:func:`_has_verdict_keys`).
        Which of them is the judge's own answer and which one it quoted from a deliverable
        cannot be told apart (the quote may come before or after the answer), so such a
        reply gives no verdict and is asked again; objects that decide the same (a judge
        repeating itself) are read as one."""
        shaped = [o for o in objects if self._shape_ok(unit.kind, o)]
        if len({self._reading(unit, o) for o in shaped}) > 1:
            return (
                f"ambiguous reply: {len(shaped)} JSON objects in the asked shape with different "
                "verdicts; none was taken"
            )
        others = [o for o in objects if not self._shape_ok(unit.kind, o) and _has_verdict_keys(o)]
        if shaped and others:
            return (
                "ambiguous reply: a JSON object in the asked shape and another holding verdicts "
                "in another shape (the judge's own answer may be the other one); none was taken"
            )
        return ""

    def _pick(self, unit: Unit, objects: list[tuple[dict[str, Any], str]]) -> int:
        """The position of the judge's own answer among a reply's ``(object, method)``
        entries (:func:`jobbench.judge._jsonfix.reply_objects`): the last one of the shape
        the unit asked for, else the last one; never one found after a reasoning tag
        (method ``reasoning``: compared by :meth:`_ambiguity`, never taken; the list holds
        at least one other)."""
        own = [i for i, (_, how) in enumerate(objects) if how != "reasoning"]
        for i in reversed(own):
            if self._shape_ok(unit.kind, objects[i][0]):
                return i
        return own[-1]

    def _merge(
        self,
        unit: Unit,
        obj: dict[str, Any],
        downgrades: list[str],
        provisional: bool = False,
        passes: bool = True,
    ) -> list[str]:
        """Add the valid verdicts of ``obj`` not yet in the unit's payload (each tagged with
        the ``downgrades`` of the call that gave it). Verdicts recovered from a reply cut
        off at the token limit are ``provisional``: a later reply that is not cut replaces
        them (it is the judge's complete answer; the cut one may have been cut before the
        judge corrected itself). With ``passes`` False (``obj`` was read from a reply that
        is not one JSON object alone, :func:`jobbench.judge._jsonfix.sole_object`, or has
        :func:`jobbench.judge._prompts.reply_doubts`), only fail verdicts are taken: a pass
        and a ``rubric_passed`` true are left out and flagged
        ``judge_pass_withheld:<unit>/<key>``, so the unit is asked again. A fail replaces an
        earlier pass of the same criterion (``judge_verdict_changed:<unit>/<key>``). Returns
        the flags about its criterion items (``judge_extra_item:<unit>/<index>``,
        ``judge_missing_item:…``,
        ``judge_duplicate_item:…``, ``judge_invalid_item:…``, ``judge_unindexed_items:…``,
        ``judge_no_criteria_list:<unit>``)."""
        p = unit.payload
        assert p is not None

        def tag(v: dict[str, Any]) -> dict[str, Any]:
            return {**v, "downgrades": list(downgrades)} if downgrades else v

        notes: list[str] = []

        def put(key: str, v: dict[str, Any]) -> None:
            if not passes and v["verdict"] == "pass":
                notes.append(f"judge_pass_withheld:{unit.uid}/{key}")
                return
            if key in p["verdicts"] and v["verdict"] == "fail" != p["verdicts"][key]["verdict"]:
                # a later reply fails what an earlier one passed: the fail decides (the
                # earlier reply may have been read through a planted text)
                notes.append(f"judge_verdict_changed:{unit.uid}/{key}")
                p["verdicts"][key] = tag(v)
                unit.provisional.discard(key)
                return
            if key not in p["verdicts"] or (key in unit.provisional and not provisional):
                p["verdicts"][key] = tag(v)
                (unit.provisional.add if provisional else unit.provisional.discard)(key)

        def put_model(r: int, mv: bool | None) -> None:
            key = f"rubric_passed:{r}"
            if not passes and mv:
                notes.append(f"judge_pass_withheld:{unit.uid}/{key}")
                return
            if mv is not None and (
                p["model_verdicts"].get(str(r)) is None
                or (key in unit.provisional and not provisional)
            ):
                p["model_verdicts"][str(r)] = mv
                (unit.provisional.add if provisional else unit.provisional.discard)(key)
            elif p["model_verdicts"].get(str(r)) is None:
                p["model_verdicts"][str(r)] = mv

        def note(items: Any, asked: list[int], where: str) -> None:
            for kind, what in criteria_notes(items, asked):
                name = {"no_list": "no_criteria_list", "unindexed": "unindexed_items"}.get(
                    kind, f"{kind}_item"
                )
                notes.append(f"judge_{name}:{where}" + (f"/{what}" if what else ""))

        if unit.kind == "task":
            verdicts, model = parse_task_reply(obj, unit.asked)
            for (r, c), v in verdicts.items():
                put(f"{r}:{c}", v)
            for r, mv in model.items():
                put_model(r, mv)
            items = obj.get("rubrics")
            seen: set[int] = set()
            for it in items if isinstance(items, list) else []:
                ri = it.get("index", it.get("rubric_index")) if isinstance(it, dict) else None
                if isinstance(ri, int) and ri in unit.asked and ri not in seen:
                    seen.add(ri)
                    note(
                        it.get("criteria", it.get("criteria_results")),
                        unit.asked[ri],
                        f"{unit.uid}/rubric:{ri}",
                    )
                else:
                    notes.append(f"judge_extra_item:{unit.uid}/rubric:{ri}")
            for r in unit.asked:
                if r not in seen:
                    notes.append(f"judge_missing_item:{unit.uid}/rubric:{r}")
        elif unit.kind == "criterion":
            ((r, cs),) = unit.asked.items()
            cv = parse_criterion_reply(obj)
            if cv is not None:
                put(f"{r}:{cs[0]}", cv)
            elif isinstance(obj.get("criteria"), list):
                note(obj["criteria"], [cs[0]], unit.uid)
        else:
            ((r, cs),) = unit.asked.items()
            by_criterion, mv, overall = parse_rubric_reply(obj, cs)
            for c, v in by_criterion.items():
                put(f"{r}:{c}", v)
            put_model(r, mv)
            if overall and not p["overall"].get(str(r)):
                p["overall"][str(r)] = overall
            note(obj.get("criteria", obj.get("criteria_results")), cs, unit.uid)
        return notes

    # -------------------------------------------------------------- assembling

    def assemble(self, job: TrialJob) -> GradeRecord:
        """Turn a planned-and-run trial into its :class:`GradeRecord` (scores in code)."""
        cfg = self.config
        task = job.inp.task
        grades: list[RubricGrade] = []
        model_verdicts: list[bool | None] = []
        for r in task.rubrics:
            crits: list[CriterionVerdict] = []
            llm_verdicts: list[str] = []
            mv: bool | None = None
            for c in r.criteria:
                rc = (r.index, c.index)
                if rc in job.prefilled:
                    crits.append(job.prefilled[rc])
                    continue
                unit = job.unit_of[rc]
                v, carried = unit.verdict(r.index, c.index)
                extra: dict[str, Any] = {
                    "unit": unit.uid,
                    "cached": unit.cached or unit.reused or carried,
                }
                if v is None:
                    cv = CriterionVerdict(
                        rubric_index=r.index,
                        criterion_index=c.index,
                        verdict="judge_error",
                        source="llm",
                        reasoning=unit.error or "no valid verdict",
                        cause=unit.cause or "bad_reply",
                        downgrades=list(unit.downgrades),
                        **extra,
                    )
                else:
                    found = evidence_found(v.get("evidence", ""), job.norm_text)
                    verdict = v["verdict"]
                    reasoning = v.get("reasoning", "")
                    if cfg.strict_evidence and verdict == "pass" and not found and not unit.images:
                        verdict = "fail"
                        reasoning = (
                            "[strict evidence: the quoted evidence was not found "
                            "in the deliverables] " + reasoning
                        )
                        extra["strict_override"] = True
                    cv = CriterionVerdict(
                        rubric_index=r.index,
                        criterion_index=c.index,
                        verdict=verdict,
                        source="llm",
                        reasoning=reasoning,
                        evidence=v.get("evidence", ""),
                        evidence_found=found,
                        downgrades=[str(d) for d in v.get("downgrades") or []],
                        **extra,
                    )
                    llm_verdicts.append(v["verdict"])
                if rc in job.second:
                    cv.second_opinion = job.second[rc]
                crits.append(cv)
            units = {
                job.unit_of[(r.index, c.index)].uid: job.unit_of[(r.index, c.index)]
                for c in r.criteria
                if (r.index, c.index) in job.unit_of
            }
            for u in units.values():
                got = u.model_verdict(r.index)
                if got is not None:
                    mv = got
            model_verdicts.append(mv)
            overall = next(
                (
                    (u.payload or {}).get("overall", {}).get(str(r.index))
                    for u in units.values()
                    if (u.payload or {}).get("overall", {}).get(str(r.index))
                ),
                None,
            )
            g = RubricGrade(
                index=r.index,
                id=r.id,
                weight=r.weight,
                criteria=crits,
                passed=None,
                requires=list(r.requires),
                model_verdict=mv,
                disagreement=disagrees(mv, llm_verdicts),
                overall_reasoning=overall or None,
                images=sorted({n for u in units.values() for n in u.images}),
                images_left_out=sorted({n for u in units.values() for n in u.images_left_out}),
            )
            grades.append(g)

        if cfg.mode == "official" and cfg.uses_llm:
            if not job.files:
                values = official_values([False] * len(grades))
            else:
                # our one departure from the public judge (docs/judge.md): the model's rubric
                # verdict decides only when every criterion of the rubric got a valid verdict
                errored = [
                    any(c.verdict == "judge_error" and c.source == "llm" for c in g.criteria)
                    for g in grades
                ]
                values = official_values(model_verdicts, errored)
        else:
            values = chain_values(
                [[c.verdict for c in g.criteria] for g in grades], [g.requires for g in grades]
            )
        for g, value in zip(grades, values):
            g.passed = value.passed
            g.chain_break = value.chain_break
            g.undecided = value.undecided or None
        ts = task_score([g.weight for g in grades], values)
        if job.no_deliverable:
            status = "no_deliverable"
        elif ts.score is not None:
            status = "complete"
        elif any(v.undecided == "judge_error" for v in values):
            status = "judge_error"
        else:
            status = "unjudged"

        usage = Usage()
        cached_usage = Usage()
        unit_records = []
        for u in job.units:
            u_usage = sum((Usage(**r["usage"]) for r in u.replies if "usage" in r), Usage())
            if u_usage.calls and u_usage.cost_usd is None:
                u_usage.cost_usd = self.prices.cost(cfg.model, u_usage)
            usage = usage + u_usage
            u_prefix = sum(
                (
                    PrefixCacheable(**r["prefix_cacheable"])
                    for r in u.replies
                    if "prefix_cacheable" in r
                ),
                PrefixCacheable(),
            )
            u_cached = u.cached_usage or Usage()
            if u_cached.calls and u_cached.cost_usd is None:
                u_cached.cost_usd = self.prices.cost(cfg.model, u_cached)
            cached_usage = cached_usage + u_cached
            unit_records.append(
                {
                    "unit": u.uid,
                    "kind": u.kind,
                    "key": u.key,
                    "base_key": u.base_key,
                    "asked": {str(r): cs for r, cs in u.asked.items()},
                    "complete": u.complete,
                    "cached": u.cached,
                    "reused": u.reused,
                    "error": u.error,
                    "cause": u.cause if u.error else None,
                    "downgrades": u.downgrades,
                    "images": u.images,
                    "images_left_out": u.images_left_out,
                    "usage": u_usage.model_dump(),
                    "cached_usage": u_cached.model_dump(),
                    "prefix_cacheable": u_prefix.model_dump(),
                    "elapsed_s": round(u.elapsed, 4),
                    "replies": u.replies,
                    "payload": u.merged_payload(),
                }
            )
        t_llm = sum(u.elapsed for u in job.units)
        judge = cfg.identity()
        used = list(dict.fromkeys(d for g in grades for c in g.criteria for d in c.downgrades))
        if used:  # what the endpoint was actually sent differs from the settings above
            judge["downgrades"] = used
        flags = list(dict.fromkeys(job.flags + [n for u in job.units for n in u.notes]))
        return GradeRecord(
            trial_id=job.inp.trial_id,
            task_id=task.id,
            judge=judge,
            rubrics=grades,
            score=ts.score,
            max_score=ts.max_score,
            passed_weight=ts.passed_weight,
            status=status,
            usage=usage,
            flags=flags,
            created_at=_now(),
            epoch=job.inp.epoch,
            undecided_weight=ts.undecided_weight,
            passed_count=ts.passed_count,
            total_count=ts.total_count,
            cached_usage=cached_usage,
            disagreements=sum(1 for g in grades if g.disagreement),
            injection=[InjectionHit(**hit) for hit in job.injection],
            status_reason=job.no_deliverable,
            ignored=list(job.extraction.ignored),
            deliverables=[
                GradedDeliverable(path=f.path, sha256=f.sha256, size=f.size, kind=f.kind)
                for f in job.extraction.files
            ],
            timings={
                **job.timings,
                "llm_s": round(t_llm, 4),
                "wall_s": round(time.monotonic() - job.started, 4),
            },
            units=[JudgeUnit.model_validate(u) for u in unit_records],
            **job.inp.extra,
        )

    # -------------------------------------------------------------- driving

    def grade(self, inputs: list[TrialInput]) -> list[GradeRecord]:
        """Grade many trials with at most ``config.concurrency`` LLM calls in flight.

        Trials are planned (extraction + checks) one after another in this thread; each
        trial's LLM units are released to the pool as soon as it is planned, so extraction
        overlaps with judging. Each record is written to ``inp.out_path`` (atomically) as
        soon as its trial is done.

        With ``schedule="prefix"`` a trial's units are grouped by their shared prompt prefix
        (:func:`prefix_groups`); the first unit of each group is submitted alone, and the
        group's other units are submitted by the worker that ran it, when it has returned, so
        they reach the endpoint after a call carrying their prefix has completed (a
        provider's prompt-prefix cache can then serve that prefix). Other trials' units keep
        the pool busy meanwhile. A first unit answered from the verdict cache made no call,
        so the next unit of its group goes first instead; a first unit that failed (an
        endpoint error, a bad reply, an exception) releases the rest all the same, and so
        does a first unit still running after :attr:`lead_wait` seconds (its group's
        other units are then submitted without waiting for it). With ``schedule="all"``
        every unit is submitted at once.

        Returns:
            Records in the order of ``inputs``.

        Raises:
            Whatever :attr:`before_first_call` raised (the other units are cancelled).
        """
        if not inputs:
            return []
        records: dict[int, GradeRecord] = {}
        jobs: list[TrialJob] = []
        spent = Usage()

        def finish(i: int) -> None:
            rec = self.assemble(jobs[i])
            inp = jobs[i].inp
            if inp.save is not None:
                inp.save(rec)
            elif inp.out_path is not None:
                atomic_write_json(inp.out_path, rec)
            if inp.on_written is not None:
                inp.on_written(rec)
            records[i] = rec
            with self._lock:  # every call of the trial has returned
                jobs[i].completed_prompts.clear()

        with (
            stderr_progress(self.progress) as prog,
            ThreadPoolExecutor(max_workers=self.config.concurrency) as pool,
        ):
            plan_bar = prog.add_task("extracting + checks", total=len(inputs)) if prog else None
            call_bar = prog.add_task("judging", total=0) if prog else None
            futs: dict[Future[None], tuple[int, Unit]] = {}
            # guards futs, leads and stopping: workers submit the units a first unit held
            lock = threading.Lock()
            stopping = False
            # groups whose first unit is running, by id of their held list: (deadline on
            # the monotonic clock, trial, held units); whoever pops an entry releases it
            leads: dict[int, tuple[float, int, list[Unit]]] = {}

            def submit(i: int, u: Unit, held: list[Unit]) -> None:
                """Submit unit ``u`` of trial ``i``; ``held`` (units of its prefix group)
                are released by the same worker once ``u`` has run, before its future
                completes, so the loop below never sees ``futs`` empty while some wait, or
                by :func:`expire` once ``u`` has run for :attr:`lead_wait` seconds."""

                def work() -> None:
                    try:
                        self.run_unit(u)
                    finally:
                        if held:
                            release(i, u, held)

                with lock:
                    if not stopping:  # grade is leaving: no new work for a closing pool
                        if held:
                            leads[id(held)] = (time.monotonic() + self.lead_wait, i, held)
                        futs[pool.submit(work)] = (i, u)

            def release(i: int, u: Unit, held: list[Unit]) -> None:
                with lock:
                    if leads.pop(id(held), None) is None:  # expire() released them
                        return
                if u.cached:  # no call carried the prefix: the next unit of the group leads
                    submit(i, held[0], held[1:])
                else:
                    for other in held:
                        submit(i, other, [])

            def expire() -> float | None:
                """Release the groups whose first unit has run past its deadline; return
                the seconds until the next deadline (None: no group is waiting)."""
                now = time.monotonic()
                with lock:
                    late = [k for k, (due, _, _) in leads.items() if due <= now]
                    overdue = [leads.pop(k) for k in late]
                    nxt = min((due for due, _, _ in leads.values()), default=None)
                for _, i, held in overdue:
                    for other in held:
                        submit(i, other, [])
                return None if nxt is None else max(0.0, nxt - now)

            def collect(done: set[Future[None]]) -> None:
                nonlocal spent, stopping
                for f in done:
                    with lock:
                        i, u = futs.pop(f)
                    exc = f.exception()
                    if isinstance(exc, FirstCallAborted):  # the lazy preflight refused
                        with lock:
                            stopping = True
                            for other in futs:
                                other.cancel()
                        raise exc.error
                    if exc is not None:  # a bug: fail closed for this unit
                        u.error = f"internal error: {type(exc).__name__}: {exc}"
                        if u.payload is None:
                            u.payload = {
                                "verdicts": {},
                                "model_verdicts": {},
                                "overall": {},
                                "raw": [],
                            }
                    for r in u.replies:
                        if "usage" in r:
                            spent = spent + Usage(**r["usage"])
                    jobs[i].remaining -= 1
                    if jobs[i].remaining == 0:
                        finish(i)
                    if prog:
                        cost = f", ${spent.cost_usd:.4f}" if spent.cost_usd is not None else ""
                        prog.update(
                            call_bar,
                            advance=1,
                            description=(
                                f"judging ({spent.calls} calls, "
                                f"{spent.input_tokens + spent.output_tokens:,} tokens{cost})"
                            ),
                        )

            try:
                for i, inp in enumerate(inputs):
                    job = self.plan(inp)
                    jobs.append(job)
                    todo = [u for u in job.units if not u.reused]
                    job.remaining = len(todo)
                    if prog:
                        prog.advance(plan_bar)
                        prog.update(call_bar, total=(prog.tasks[call_bar].total or 0) + len(todo))
                    if not todo:
                        finish(i)
                    if self.schedule == "prefix":
                        for first, *rest in prefix_groups(todo):
                            submit(i, first, rest)
                    else:
                        for u in todo:
                            submit(i, u, [])
                    expire()
                    with lock:
                        done = {f for f in futs if f.done()}
                    if done:
                        collect(done)
                while True:
                    left = expire()
                    with lock:
                        pending = set(futs)
                    if not pending:
                        break
                    done, _ = wait(pending, timeout=left, return_when=FIRST_COMPLETED)
                    collect(done)
            finally:
                with lock:
                    stopping = True
        return [records[i] for i in range(len(jobs))]


CHARS_PER_TOKEN = 4
"""Characters per token of :func:`prefix_cacheable`'s estimate when a reply reports no input
tokens."""


def _covers(payload: dict[str, Any], asked: dict[int, list[int]]) -> bool:
    """True when a cached ``payload`` holds a verdict for every criterion ``asked``
    (``{rubric index: [criterion indexes]}``): the cache key leaves out where a rubric sits
    in its task, and a payload stores verdicts by index."""
    have = payload.get("verdicts") or {}
    return all(f"{r}:{c}" in have for r, cs in asked.items() for c in cs)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text of chat ``messages`` in the order a provider reads it, for prefix comparisons:
    per message a line ``<role>``, then its content (a string, or each part in order: a text
    part's text, an image part as ``[image <first 16 hex digits of sha256 of its URL>]``),
    each followed by a newline. Equal messages give equal text; an image counts as its
    placeholder, not as its tokens."""
    out: list[str] = []
    for m in messages:
        out.append(f"<{m.get('role', '')}>\n")
        content = m.get("content")
        parts: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        )
        for p in parts:
            if p.get("type") == "image_url":
                url = str((p.get("image_url") or {}).get("url", ""))
                out.append(f"[image {_sha(url)[:16]}]\n")
            else:
                out.append(f"{p.get('text', '')}\n")
    return "".join(out)


def common_prefix_len(a: str, b: str) -> int:
    """Length (characters) of the longest common prefix of ``a`` and ``b``, found by
    bisecting with slice comparisons (the character work is done in C; linear in the shorter
    length overall)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def prefix_cacheable(prompt: str, earlier: list[str], input_tokens: int = 0) -> PrefixCacheable:
    """The :class:`PrefixCacheable` figure of one call.

    Args:
        prompt: the call's :func:`prompt_text`.
        earlier: the prompt texts of the calls of the same trial that had completed when it
            was sent.
        input_tokens: the input tokens the reply reports (0: unknown).

    Returns:
        ``calls`` 1, ``chars`` the longest prefix ``prompt`` shares with one of ``earlier``
        (0 when there is none), ``tokens`` its estimate (``round(input_tokens · chars /
        len(prompt))``, or ``chars // CHARS_PER_TOKEN`` without ``input_tokens``) and
        ``prompt_chars`` ``len(prompt)``.
    """
    chars = max((common_prefix_len(prompt, q) for q in earlier), default=0)
    if input_tokens > 0 and prompt:
        tokens = round(input_tokens * chars / len(prompt))
    else:
        tokens = chars // CHARS_PER_TOKEN
    return PrefixCacheable(calls=1, chars=chars, tokens=tokens, prompt_chars=len(prompt))


Schedule = Literal["prefix", "all"]
"""How :meth:`Grader.grade` submits a trial's units: ``prefix`` (one unit of each prefix
group first, the rest when it returns) or ``all`` (every unit at once)."""


def prefix_key(unit: Unit) -> str:
    """Hex sha256 of the part of ``unit``'s prompt that every unit of its trial with the same
    deliverable scope shares: the system message and the first user part (the fenced
    deliverables)."""
    system, user = unit.messages[0], unit.messages[1]
    head = user["content"][0] if isinstance(user["content"], list) else user["content"]
    blob = json.dumps([system, head], sort_keys=True, ensure_ascii=False)
    return _sha(blob)


def prefix_groups(units: list[Unit]) -> list[list[Unit]]:
    """``units`` (of one trial) grouped by :func:`prefix_key`: groups in the order of their
    first unit, units in their given order; every list is non-empty."""
    groups: dict[str, list[Unit]] = {}
    for u in units:
        groups.setdefault(prefix_key(u), []).append(u)
    return list(groups.values())


class FirstCallAborted(Exception):
    """Internal: :attr:`Grader.before_first_call` raised ``error``; :meth:`Grader.grade`
    re-raises ``error`` itself."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def _check_verdict(r: int, c: int, res: CheckResult) -> CriterionVerdict:
    verdict = "judge_error" if res.error else ("pass" if res.passed else "fail")
    return CriterionVerdict(
        rubric_index=r,
        criterion_index=c,
        verdict=verdict,
        source="check",
        reasoning=res.detail,
        evidence=res.evidence,
        evidence_found=None,
    )


def grade_trial(
    task: Task,
    deliverables_dir: Path,
    config: JudgeConfig,
    *,
    trial_id: str | None = None,
    epoch: int = 1,
    prior: GradeRecord | None = None,
    out_path: Path | None = None,
    client: Any = None,
) -> GradeRecord:
    """Grade one trial's deliverables (convenience wrapper around :class:`Grader`).

    Args:
        task: the task whose rubrics apply.
        deliverables_dir: the deliverable folder.
        config: judge configuration.
        trial_id: identity for the record (default ``<task_id>/-@-/epoch-<epoch>``).
        epoch: epoch number (part of the cache key).
        prior: an earlier record; its valid verdicts are reused (resume).
        out_path: also write the record there (atomically).
        client: the judge's client (default: a :class:`JudgeClient` for ``config``; the
            Inspect scorer passes one that calls Inspect's ``grader`` model).

    Returns:
        The :class:`GradeRecord`.
    """
    grader = Grader(config, client=client)
    try:
        inp = TrialInput(
            trial_id=trial_id or make_trial_id(task.id, "-", None, epoch),
            task=task,
            deliverables_dir=Path(deliverables_dir),
            epoch=epoch,
            prior=prior,
            out_path=out_path,
        )
        return grader.grade([inp])[0]
    finally:
        grader.close()


CHECKS_VERSION = "3"
"""Version of the programmatic checks' semantics, part of every grade's ``inputs_digest``:
bump it when a check kind starts deciding differently on the same files, so that grades made
by the old logic are redone (2: ``number``/``regex`` read only a deliverable's own content,
never the extractor's notes; 3: a quantity stated with disagreeing values fails, and a check
with a glob reads only the files its criterion names)."""


@dataclass(frozen=True)
class VolumeCaps:
    """Deliverable volumes past which a trial is flagged ``over_cap:…`` (it is still graded).

    Attributes:
        files: gradeable deliverables per trial (default 50).
        total_bytes: their total size in bytes (default 50 MiB).
        files_per_check: deliverables one check's ``file`` glob selects, after the
            criterion's scope (default 5).
    """

    files: int = 50
    total_bytes: int = 50 * 1024 * 1024
    files_per_check: int = 5


CAPS = VolumeCaps()
"""The documented caps (docs/judge.md, "Enumeration and volume")."""
CONFLICT_FLAG = "conflicting_values:"
"""Flag prefix of a criterion whose check saw the quantity stated with disagreeing values:
``conflicting_values:<rubric id>/<criterion index>``."""
OVER_CAP_FLAG = "over_cap:"
"""Flag prefix of a trial past :data:`CAPS`: ``over_cap:files:<n>``,
``over_cap:bytes:<n>``, ``over_cap:files_per_check:<rubric id>/<criterion index>:<n>``."""


def volume_flags(root: Path, files: list[str], extraction: FolderExtraction) -> list[str]:
    """``over_cap:files:<n>`` / ``over_cap:bytes:<n>`` when the deliverables ``files`` under
    ``root`` exceed :data:`CAPS` (sizes from ``extraction``, else from disk)."""
    out = []
    if len(files) > CAPS.files:
        out.append(f"{OVER_CAP_FLAG}files:{len(files)}")
    sizes = {f.path: f.size for f in extraction.files}
    total = 0
    for rel in files:
        size = sizes.get(rel)
        if size is None:
            try:
                size = (root / rel).stat(follow_symlinks=False).st_size
            except OSError:
                size = 0
        total += size or 0
    if total > CAPS.total_bytes:
        out.append(f"{OVER_CAP_FLAG}bytes:{total}")
    return out


def inputs_digest(
    task_digest: str, deliverables: list[tuple[str, str]], config: JudgeConfig
) -> str:
    """Digest of everything a grade depends on: task, deliverable manifest, judge identity
    (model, mode, prompt version, …), and the versions of the extractor and of the
    programmatic checks (:data:`jobbench.extract.EXTRACTOR_VERSION`, :data:`CHECKS_VERSION`),
    so that upgrading JobBench redoes grades whose logic changed (LLM verdicts still come
    from the cache when the text the judge saw is unchanged)."""
    from ..extract import EXTRACTOR_VERSION

    blob = json.dumps(
        {
            "task": task_digest,
            "deliverables": sorted(deliverables),
            "judge": config.fingerprint(),
            "grading": {"extractor": EXTRACTOR_VERSION, "checks": CHECKS_VERSION},
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()
