"""Calibration figures from paired grade records (pure: no file access).

:func:`calibrate` takes the grades of two or more judges (and optionally expected verdicts)
and returns a :class:`CalibrationReport`:

* per judge: criteria decided, pass rate, usage and cost of one full grading pass;
* per pair of judges: percent agreement, Cohen's kappa, Krippendorff's alpha, the 2×2 verdict
  table, and the score deviation (mean |Δ s_t| over trials and per task, and the micro
  overall difference);
* over all judges: Krippendorff's alpha and the all-agree rate;
* verdict flips: every criterion the judges decided differently, with each reasoning;
* checks vs LLM: agreement between a programmatic check and the LLM on the same criterion,
  from ``second_opinion`` fields (``--decide llm``);
* against expected verdicts: accuracy, precision, recall, F1 (``pass`` positive), every
  wrong verdict, and the score deviation from the expected scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from ..records import CriterionVerdict, GradeRecord, Usage
from ..tasks import Task
from ._expected import expected_score
from ._grades import JudgeGrades, criterion_map, verdict_label
from ._metrics import (
    ScorePoint,
    all_agree_rate,
    cohen_kappa,
    confusion,
    krippendorff_alpha,
    percent_agreement,
    score_deviation,
)

CriterionKey = tuple[str, int, int]
"""(trial id, rubric index, criterion index)."""


class JudgeSummary(BaseModel):
    """One judge key over the calibration set.

    Attributes:
        key: judge key; model, mode, decide: from the records' ``judge`` identity.
        trials: trials it graded; pass_trials: trials of the full pass (graded by every judge).
        criteria: criterion verdicts it holds; decided: of those, ``pass`` or ``fail``;
            undecided: ``judge_error`` or ``unjudged``; pass_rate: passes / decided.
        by_source: verdict counts per source (``check``, ``llm``, ``none``).
        usage: summed judge usage over the full pass (the trials every judge graded).
        cost_per_pass_usd: US dollars of that pass; None when some call has no known price.
        tokens_per_pass: input + output tokens of that pass; calls_per_pass: API calls.
        cached_units: LLM units answered from the verdict cache or reused from an earlier
            grade in that pass: their calls are not counted, so cost and tokens understate a
            fresh pass when this is not 0.
        scored_trials: trials with a complete score.
    """

    key: str
    model: str | None = None
    mode: str | None = None
    decide: str | None = None
    trials: int = 0
    pass_trials: int = 0
    criteria: int = 0
    decided: int = 0
    undecided: int = 0
    pass_rate: float | None = None
    by_source: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    cost_per_pass_usd: float | None = None
    tokens_per_pass: int = 0
    calls_per_pass: int = 0
    cached_units: int = 0
    scored_trials: int = 0


class TaskDeviation(BaseModel):
    """Score deviation between two judges on one task (over its paired trials).

    Attributes:
        task_id; trials: trials scored by both; score_a, score_b: mean s_t of each judge;
        mean_abs_diff: mean |s_A − s_B| over the task's trials.
    """

    task_id: str
    trials: int
    score_a: float
    score_b: float
    mean_abs_diff: float


class ScoreDeviationSummary(BaseModel):
    """Score deviation of judge A from judge B (see :func:`jobbench.calibrate.score_deviation`).

    Attributes:
        trials: trials scored by both; mean_abs_diff, max_abs_diff: of s_t (0..1);
        micro_a, micro_b: Σ points / Σ maxima over those trials; micro_abs_diff: |micro_a −
        micro_b| (0..1; ×100 = percentage points); micro_rel_diff: relative to micro_b;
        per_task: one row per task.
    """

    trials: int = 0
    mean_abs_diff: float | None = None
    max_abs_diff: float | None = None
    micro_a: float | None = None
    micro_b: float | None = None
    micro_abs_diff: float | None = None
    micro_rel_diff: float | None = None
    per_task: list[TaskDeviation] = Field(default_factory=list)


class PairSummary(BaseModel):
    """Agreement of judge ``a`` with judge ``b`` (``b`` is the reference when one is set).

    Attributes:
        criteria_both: criteria both decided (pass/fail); undecided_a / undecided_b:
            criteria of trials both graded that only the other decided or neither decided.
        agree: criteria with the same verdict; percent_agreement = agree / criteria_both.
        kappa: Cohen's kappa; alpha: Krippendorff's alpha of the two (nominal).
        table: counts ``{"pass/pass", "pass/fail", "fail/pass", "fail/fail"}`` as a/b.
        flips: criteria_both − agree.
        score: the score deviation of a from b.
    """

    a: str
    b: str
    criteria_both: int = 0
    undecided_a: int = 0
    undecided_b: int = 0
    agree: int = 0
    percent_agreement: float | None = None
    kappa: float | None = None
    alpha: float | None = None
    table: dict[str, int] = Field(default_factory=dict)
    flips: int = 0
    score: ScoreDeviationSummary = Field(default_factory=ScoreDeviationSummary)


class OverallAgreement(BaseModel):
    """Agreement over all judges at once.

    Attributes:
        judges: judge keys; units: criteria with at least two decided verdicts;
        alpha: Krippendorff's alpha (nominal, missing verdicts allowed);
        all_agree: share of those criteria on which every deciding judge agreed.
    """

    judges: list[str]
    units: int = 0
    alpha: float | None = None
    all_agree: float | None = None


class FlipVerdict(BaseModel):
    """One judge's side of a flip."""

    verdict: str
    source: str
    reasoning: str = ""
    evidence: str = ""


class Flip(BaseModel):
    """A criterion the judges decided differently.

    Attributes:
        trial_id, task_id, rubric, criterion: where; criterion_text: from the task, if known;
        expected: the expected verdict (True = pass) when known; verdicts: judge key → its
        verdict with reasoning and evidence (undecided judges included).
    """

    trial_id: str
    task_id: str
    rubric: int
    criterion: int
    criterion_text: str | None = None
    expected: bool | None = None
    verdicts: dict[str, FlipVerdict]


class CheckDisagreement(BaseModel):
    """A criterion where the programmatic check and the LLM differ."""

    trial_id: str
    rubric: int
    criterion: int
    criterion_text: str | None = None
    check_verdict: str
    check_detail: str = ""
    llm_verdict: str
    llm_reasoning: str = ""


class ChecksVsLlm(BaseModel):
    """Programmatic checks against LLM verdicts on the same criteria, within one judge key
    (from ``second_opinion``; present with ``--decide llm`` or ``official`` mode).

    Attributes:
        judge: judge key; n: criteria where both decided; agree; percent_agreement; kappa;
        undecided: criteria with a second opinion where one side is undecided;
        table: counts as check/llm; disagreements: every differing criterion.
    """

    judge: str
    n: int = 0
    agree: int = 0
    percent_agreement: float | None = None
    kappa: float | None = None
    undecided: int = 0
    table: dict[str, int] = Field(default_factory=dict)
    disagreements: list[CheckDisagreement] = Field(default_factory=list)


class ExpectedError(BaseModel):
    """A verdict that contradicts the expected one (``verdict`` may be undecided)."""

    trial_id: str
    rubric: int
    criterion: int
    criterion_text: str | None = None
    expected: bool
    verdict: str
    source: str = ""
    reasoning: str = ""


class ExpectedTrial(BaseModel):
    """One deliverable set under one judge: criteria with an expectation, how many the judge
    got right, its score and the expected score."""

    trial_id: str
    criteria: int
    correct: int
    undecided: int
    accuracy: float | None
    score: float | None
    expected_score: float | None


class ExpectedSummary(BaseModel):
    """One judge against expected verdicts.

    Attributes:
        judge: judge key; sets: deliverable sets it graded (of those with expectations);
        missing_sets: sets with expectations it did not grade.
        criteria: criteria with a known expectation in the graded sets; decided: of those,
            with a pass/fail verdict; undecided: ``judge_error``/``unjudged``.
        tp, fp, fn, tn: the confusion counts over decided criteria (``pass`` positive);
        accuracy, precision, recall, f1: from those counts (None when undefined);
        accuracy_all: correct / criteria (an undecided verdict counts as wrong).
        score: deviation of the judge's scores from the expected scores (a = judge,
            b = expected).
        per_trial: one row per set; errors: every wrong or undecided verdict.
    """

    judge: str
    sets: int = 0
    missing_sets: int = 0
    criteria: int = 0
    decided: int = 0
    undecided: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    accuracy: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    accuracy_all: float | None = None
    score: ScoreDeviationSummary = Field(default_factory=ScoreDeviationSummary)
    per_trial: list[ExpectedTrial] = Field(default_factory=list)
    errors: list[ExpectedError] = Field(default_factory=list)


class CalibrationReport(BaseModel):
    """Everything ``jobbench calibrate`` measures (written as ``calibration.json``).

    Attributes:
        created_at: ISO time; reference: the reference judge key (b in every pair it is in);
        judges, pairs, overall, flips, checks_vs_llm, expected: see the classes;
        sources: where the grades came from (runs, expected sets, output folder);
        warnings: things a reader must know (pairs left out, cached calls, …).
    """

    created_at: str
    reference: str | None
    judges: list[JudgeSummary]
    pairs: list[PairSummary]
    overall: OverallAgreement
    flips: list[Flip]
    checks_vs_llm: list[ChecksVsLlm]
    expected: list[ExpectedSummary]
    sources: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------- helpers


def _point(rec: GradeRecord | None) -> ScorePoint | None:
    if rec is None or rec.score is None:
        return None
    return ScorePoint(passed_weight=rec.passed_weight, max_score=rec.max_score)


def _crit_text(tasks: Mapping[str, Task], task_id: str, r: int, c: int) -> str | None:
    t = tasks.get(task_id)
    if t is None:
        return None
    for rub in t.rubrics:
        if rub.index == r:
            for cr in rub.criteria:
                if cr.index == c:
                    return cr.text
    return None


def _deviation_summary(
    a: Mapping[str, ScorePoint | None],
    b: Mapping[str, ScorePoint | None],
    task_of: Mapping[str, str],
) -> ScoreDeviationSummary:
    dev = score_deviation(a, b)
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for tid, (sa, sb) in dev.per_trial.items():
        groups[task_of.get(tid, tid)].append((sa, sb))
    per_task = [
        TaskDeviation(
            task_id=t,
            trials=len(v),
            score_a=sum(x for x, _ in v) / len(v),
            score_b=sum(y for _, y in v) / len(v),
            mean_abs_diff=sum(abs(x - y) for x, y in v) / len(v),
        )
        for t, v in sorted(groups.items())
    ]
    return ScoreDeviationSummary(
        trials=dev.n,
        mean_abs_diff=dev.mean_abs_diff,
        max_abs_diff=dev.max_abs_diff,
        micro_a=dev.micro_a,
        micro_b=dev.micro_b,
        micro_abs_diff=dev.micro_abs_diff,
        micro_rel_diff=dev.micro_rel_diff,
        per_task=per_task,
    )


def _cached_units(rec: GradeRecord) -> int:
    return sum(1 for u in rec.units if u.cached or u.reused)


def _judge_summary(jg: JudgeGrades, pass_trials: list[str]) -> JudgeSummary:
    ident = jg.identity
    s = JudgeSummary(
        key=jg.key,
        model=ident.get("model"),
        mode=ident.get("mode"),
        decide=ident.get("decide"),
        trials=len(jg.records),
        pass_trials=len(pass_trials),
    )
    passes = 0
    by_source: dict[str, int] = defaultdict(int)
    for rec in jg.records.values():
        s.scored_trials += rec.score is not None
        for cv in criterion_map(rec).values():
            s.criteria += 1
            by_source[cv.source] += 1
            lab = verdict_label(cv)
            if lab is None:
                s.undecided += 1
            else:
                s.decided += 1
                passes += lab == "pass"
    s.pass_rate = passes / s.decided if s.decided else None
    s.by_source = dict(sorted(by_source.items()))
    usage = Usage()
    cost_known = True
    for tid in pass_trials:
        rec = jg.records[tid]
        usage = usage + rec.usage
        if rec.usage.calls and rec.usage.cost_usd is None:
            cost_known = False
        s.cached_units += _cached_units(rec)
    s.usage = usage
    s.calls_per_pass = usage.calls
    s.tokens_per_pass = usage.input_tokens + usage.output_tokens
    s.cost_per_pass_usd = (usage.cost_usd or 0.0) if cost_known else None
    return s


def _pair(
    a: JudgeGrades,
    b: JudgeGrades,
    maps: Mapping[str, Mapping[str, dict]],
    task_of: Mapping[str, str],
) -> PairSummary:
    both = sorted(set(a.records) & set(b.records))
    la: list[str | None] = []
    lb: list[str | None] = []
    for tid in both:
        ma, mb = maps[a.key][tid], maps[b.key][tid]
        for rc in sorted(set(ma) | set(mb)):
            la.append(verdict_label(ma.get(rc)))
            lb.append(verdict_label(mb.get(rc)))
    p = PairSummary(a=a.key, b=b.key)
    table = {"pass/pass": 0, "pass/fail": 0, "fail/pass": 0, "fail/fail": 0}
    for x, y in zip(la, lb):
        if x is not None and y is not None:
            table[f"{x}/{y}"] += 1
        elif x is None and y is not None:
            p.undecided_a += 1
        elif y is None and x is not None:
            p.undecided_b += 1
        else:
            p.undecided_a += 1
            p.undecided_b += 1
    p.table = table
    p.criteria_both = sum(table.values())
    p.agree = table["pass/pass"] + table["fail/fail"]
    p.flips = p.criteria_both - p.agree
    p.percent_agreement = percent_agreement(la, lb)
    p.kappa = cohen_kappa(la, lb)
    p.alpha = krippendorff_alpha(list(zip(la, lb)))
    p.score = _deviation_summary(
        {t: _point(a.records[t]) for t in both}, {t: _point(b.records[t]) for t in both}, task_of
    )
    return p


def _checks_vs_llm(jg: JudgeGrades, tasks: Mapping[str, Task]) -> ChecksVsLlm | None:
    check_l: list[str | None] = []
    llm_l: list[str | None] = []
    out = ChecksVsLlm(judge=jg.key)
    table = {"pass/pass": 0, "pass/fail": 0, "fail/pass": 0, "fail/fail": 0}
    seen = False
    for tid in sorted(jg.records):
        rec = jg.records[tid]
        for (r, c), cv in sorted(criterion_map(rec).items()):
            so = cv.second_opinion
            if (
                not isinstance(so, dict)
                or so.get("source") not in ("check", "llm")
                or so.get("source") == cv.source
            ):
                continue
            if cv.source not in ("check", "llm"):
                continue
            seen = True
            other = so.get("verdict")
            other_l = other if other in ("pass", "fail") else None
            own_l = verdict_label(cv)
            chk_raw: str
            llm_raw: str
            if cv.source == "check":
                chk, llm = own_l, other_l
                chk_raw, llm_raw = cv.verdict, str(other)
                chk_detail, llm_reason = cv.reasoning, str(so.get("reasoning", ""))
            else:
                chk, llm = other_l, own_l
                chk_raw, llm_raw = str(other), cv.verdict
                chk_detail, llm_reason = str(so.get("detail", "")), cv.reasoning
            check_l.append(chk)
            llm_l.append(llm)
            if chk is None or llm is None:
                out.undecided += 1
                continue
            table[f"{chk}/{llm}"] += 1
            if chk != llm:
                out.disagreements.append(
                    CheckDisagreement(
                        trial_id=tid,
                        rubric=r,
                        criterion=c,
                        criterion_text=_crit_text(tasks, rec.task_id, r, c),
                        check_verdict=chk_raw,
                        check_detail=chk_detail,
                        llm_verdict=llm_raw,
                        llm_reasoning=llm_reason,
                    )
                )
    if not seen:
        return None
    out.table = table
    out.n = sum(table.values())
    out.agree = table["pass/pass"] + table["fail/fail"]
    out.percent_agreement = percent_agreement(check_l, llm_l)
    out.kappa = cohen_kappa(check_l, llm_l)
    return out


def _expected_summary(
    jg: JudgeGrades,
    expected: Mapping[str, Mapping[tuple[int, int], bool | None]],
    tasks: Mapping[str, Task],
) -> ExpectedSummary:
    out = ExpectedSummary(judge=jg.key)
    exp_l: list[bool] = []
    got_l: list[bool] = []
    judge_pts: dict[str, ScorePoint | None] = {}
    exp_pts: dict[str, ScorePoint | None] = {}
    task_of: dict[str, str] = {}
    correct_all = 0
    for tid in sorted(expected):
        rec = jg.records.get(tid)
        if rec is None:
            out.missing_sets += 1
            continue
        out.sets += 1
        task_of[tid] = rec.task_id
        cmap = criterion_map(rec)
        n = correct = und = 0
        for (r, c), want in sorted(expected[tid].items()):
            if want is None:
                continue
            n += 1
            cv = cmap.get((r, c))
            lab = verdict_label(cv)
            if lab is None:
                und += 1
                out.errors.append(
                    ExpectedError(
                        trial_id=tid,
                        rubric=r,
                        criterion=c,
                        criterion_text=_crit_text(tasks, rec.task_id, r, c),
                        expected=want,
                        verdict=cv.verdict if cv else "missing",
                        source=cv.source if cv else "",
                        reasoning=cv.reasoning if cv else "no verdict in the grade record",
                    )
                )
                continue
            exp_l.append(want)
            got_l.append(lab == "pass")
            if (lab == "pass") == want:
                correct += 1
            else:
                out.errors.append(
                    ExpectedError(
                        trial_id=tid,
                        rubric=r,
                        criterion=c,
                        criterion_text=_crit_text(tasks, rec.task_id, r, c),
                        expected=want,
                        verdict=lab,
                        source=cv.source if cv else "",
                        reasoning=cv.reasoning if cv else "",
                    )
                )
        correct_all += correct
        out.criteria += n
        out.undecided += und
        task = tasks.get(rec.task_id)
        ep = expected_score(task, dict(expected[tid])) if task is not None else None
        judge_pts[tid] = _point(rec)
        exp_pts[tid] = ep
        out.per_trial.append(
            ExpectedTrial(
                trial_id=tid,
                criteria=n,
                correct=correct,
                undecided=und,
                accuracy=correct / n if n else None,
                score=rec.score,
                expected_score=ep.score if ep else None,
            )
        )
    conf = confusion(exp_l, got_l)
    out.decided = conf.total
    out.tp, out.fp, out.fn, out.tn = conf.tp, conf.fp, conf.fn, conf.tn
    out.accuracy, out.precision, out.recall, out.f1 = (
        conf.accuracy,
        conf.precision,
        conf.recall,
        conf.f1,
    )
    out.accuracy_all = correct_all / out.criteria if out.criteria else None
    out.score = _deviation_summary(judge_pts, exp_pts, task_of)
    return out


# ---------------------------------------------------------------------------- entry point


def calibrate(
    judges: Mapping[str, JudgeGrades],
    *,
    reference: str | None = None,
    expected: Mapping[str, Mapping[tuple[int, int], bool | None]] | None = None,
    tasks: Mapping[str, Task] | None = None,
    max_flips: int | None = None,
) -> CalibrationReport:
    """Compute every calibration figure for a set of judges.

    Args:
        judges: judge key → its grades (see :func:`jobbench.calibrate.read_run_grades`).
            One judge is enough for the expected-verdict and checks-vs-LLM figures; pairs
            need two.
        reference: the judge every other one is compared with first (``b`` in its pairs and
            the x = cost, y = agreement plot); default the first key of ``judges``.
        expected: trial id → {(rubric, criterion): True/False/None} for deliverable sets with
            known verdicts (see :func:`jobbench.calibrate.discover_sets`).
        tasks: task id → :class:`Task` for criterion texts and expected scores (optional).
        max_flips: keep at most this many flips in the report (None: all; the count of
            flips per pair is always complete).

    Returns:
        The :class:`CalibrationReport`.

    Raises:
        ValueError: no judge, or ``reference`` is not one of ``judges``.
    """
    if not judges:
        raise ValueError("no judge to calibrate (no grades found)")
    keys = list(judges)
    if reference is None:
        reference = keys[0]
    if reference not in judges:
        raise ValueError(
            f"reference judge {reference!r} is not among the judges ({', '.join(keys)})"
        )
    tasks = dict(tasks or {})
    expected = dict(expected or {})
    warnings: list[str] = []

    maps = {
        k: {tid: criterion_map(rec) for tid, rec in jg.records.items()} for k, jg in judges.items()
    }
    task_of = {tid: rec.task_id for jg in judges.values() for tid, rec in jg.records.items()}
    all_trials = sorted(set(task_of))
    common = sorted(set.intersection(*(set(jg.records) for jg in judges.values())))
    if len(common) < len(all_trials):
        warnings.append(
            f"{len(all_trials) - len(common)} of {len(all_trials)} trial(s) "
            "are not graded by every judge: "
            "they are left out of the cost per pass and of pairs that lack them"
        )

    summaries = [_judge_summary(judges[k], common) for k in keys]
    for s in summaries:
        if s.cached_units:
            warnings.append(
                f"{s.key}: {s.cached_units} LLM unit(s) in the full pass came from the cache "
                "or an earlier grade; their calls are not in its cost and tokens "
                "(regrade with --no-cache to measure)"
            )
        if s.cost_per_pass_usd is None:
            warnings.append(
                f"{s.key}: no price known for some calls; cost per pass is unknown "
                "(see --prices of `jobbench grade`)"
            )

    ordered = [reference] + [k for k in keys if k != reference]
    pairs = []
    for x, y in combinations(ordered, 2):
        a, b = (y, x) if x == reference else (x, y)  # the reference is always b
        pairs.append(_pair(judges[a], judges[b], maps, task_of))

    # overall alpha and flips over the union of criteria
    units: list[list[str | None]] = []
    flips: list[Flip] = []
    for tid in all_trials:
        rcs = sorted({rc for k in keys for rc in maps[k].get(tid, {})})
        for rc in rcs:
            cvs: dict[str, CriterionVerdict | None] = {
                k: maps[k].get(tid, {}).get(rc) for k in keys
            }
            labels = [verdict_label(cvs[k]) for k in keys]
            units.append(labels)
            decided = {lab for lab in labels if lab is not None}
            if len(decided) > 1:
                exp = expected.get(tid, {}).get(rc)
                flips.append(
                    Flip(
                        trial_id=tid,
                        task_id=task_of[tid],
                        rubric=rc[0],
                        criterion=rc[1],
                        criterion_text=_crit_text(tasks, task_of[tid], *rc),
                        expected=exp,
                        verdicts={
                            k: FlipVerdict(
                                verdict=cv.verdict,
                                source=cv.source,
                                reasoning=cv.reasoning,
                                evidence=cv.evidence,
                            )
                            for k, cv in cvs.items()
                            if cv is not None
                        },
                    )
                )
    overall = OverallAgreement(
        judges=keys,
        units=sum(1 for u in units if sum(v is not None for v in u) >= 2),
        alpha=krippendorff_alpha(units) if len(keys) > 1 else None,
        all_agree=all_agree_rate(units) if len(keys) > 1 else None,
    )
    if max_flips is not None and len(flips) > max_flips:
        warnings.append(f"{len(flips)} verdict flips; the first {max_flips} are listed")
        flips = flips[:max_flips]

    cvl = [x for x in (_checks_vs_llm(judges[k], tasks) for k in keys) if x is not None]
    exp_summaries = (
        [_expected_summary(judges[k], expected, tasks) for k in keys] if expected else []
    )
    for es in exp_summaries:
        if es.missing_sets:
            warnings.append(
                f"{es.judge}: {es.missing_sets} deliverable set(s) with expected verdicts "
                "were not graded"
            )
    return CalibrationReport(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        reference=reference,
        judges=summaries,
        pairs=pairs,
        overall=overall,
        flips=flips,
        checks_vs_llm=cvl,
        expected=exp_summaries,
        warnings=warnings,
    )
