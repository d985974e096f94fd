"""Findings, gate results and the rule catalogue shared by every quality gate.

A *finding* is one thing a gate noticed about one task (a missing file, a vague criterion,
a decoy verdict that does not match its ``expected.json``). Every finding carries a stable
rule id (``A1``, ``OB1``, …), a severity and a fix hint, so task authors can act on it and
CI can fail on it.

Severities:
    ``error``: the gate fails for that task;
    ``warning``: reported, the gate still passes (``--strict`` turns warnings into failures);
    ``info``: context only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["error", "warning", "info"]
GateStatus = Literal["pass", "warn", "fail", "skip", "error"]
"""``pass``: no finding above info; ``warn``: warnings only; ``fail``: at least one error
finding; ``skip``: the gate did not apply (e.g. a task without decoys); ``error``: the gate
could not run (infrastructure: an endpoint down, a missing stage). ``error`` is never a
verdict on the task."""


@dataclass(frozen=True)
class Rule:
    """A rule in the catalogue.

    Attributes:
        id: stable short id (``SC1``); never reused for another meaning.
        gate: the gate that emits it (``audit``, ``lint``, ``decoy``, …).
        name: kebab-case name (``back-reference``).
        principle: for lint rules, the paper's principle (self-contained, binary, objective,
            unambiguous) or ``exact-phrase`` / ``consistency``; for other gates, a short
            topic.
        severity: default severity of its findings.
        summary: one line saying what trips it.
        hint: how to fix a finding.
    """

    id: str
    gate: str
    name: str
    principle: str
    severity: Severity
    summary: str
    hint: str


_RULES: list[Rule] = [
    # --- audit (static) ---------------------------------------------------------------
    Rule(
        "A1",
        "audit",
        "missing-reference-file",
        "instructions",
        "error",
        "TASK_INSTRUCTIONS.txt names a file that is not in task_folder/ (nor in "
        "files_required_to_search/), and nothing marks it as a deliverable.",
        "Add the file to task_folder/, fix the name in the instructions, or, if it is a "
        'deliverable, say so ("save … as NAME") and refer to it from a rubric.',
    ),
    Rule(
        "A2",
        "audit",
        "unreferenced-workspace-file",
        "instructions",
        "warning",
        "A workspace file is never named in TASK_INSTRUCTIONS.txt.",
        "Name the file in the instructions (or its folder), or remove it if it is noise "
        "that the task does not need; planted distractors may stay unnamed.",
    ),
    Rule(
        "A3",
        "audit",
        "deliverable-name-mismatch",
        "deliverables",
        "error",
        "A rubric `files` glob, a check `file` glob or a file name in a criterion refers "
        "to a deliverable that the instructions never ask for.",
        "Use the same deliverable file name in TASK_INSTRUCTIONS.txt, rubric `files`, check "
        "`file` and criterion text.",
    ),
    Rule(
        "A4",
        "audit",
        "deliverable-unreferenced",
        "deliverables",
        "warning",
        "The instructions ask for a deliverable that no rubric, check or criterion refers to.",
        "Grade the deliverable (add a criterion naming it) or drop it from the instructions.",
    ),
    Rule(
        "A5",
        "audit",
        "rubric-text-leak",
        "leakage",
        "error",
        "A workspace file (other than TASK_INSTRUCTIONS.txt) shares most word n-grams of a "
        "criterion or rubric question.",
        "Remove or reword the passage in the workspace file; agents must never see rubric text.",
    ),
    Rule(
        "A6",
        "audit",
        "reference-answer-leak",
        "leakage",
        "error",
        "A workspace file contains most answer-bearing word n-grams of a reference deliverable "
        "(solution output; decoys are the baseline).",
        "Remove the copied answer from the workspace; keep reference outputs under solution/.",
    ),
    Rule(
        "A7",
        "audit",
        "hidden-file-in-workspace",
        "leakage",
        "error",
        "task_folder/ holds RUBRICS.json, task_card.md, a solution/ path, an expected.json, "
        "or a byte-identical copy of a hidden file (decoys excluded).",
        "Move hidden files out of task_folder/; agents see everything inside it.",
    ),
    Rule(
        "A8",
        "audit",
        "search-file-in-workspace",
        "leakage",
        "warning",
        "A file of files_required_to_search/ is also in task_folder/ (byte-identical), so "
        "the agent need not search for it.",
        "Remove the copy from task_folder/ or drop it from files_required_to_search/.",
    ),
    Rule(
        "A9",
        "audit",
        "extract-error",
        "readability",
        "error",
        "A workspace file cannot be read by jobbench.extract (error diagnostic or exception).",
        "Repair or re-export the file; the agent's tools and the judge read files the same way.",
    ),
    Rule(
        "A10",
        "audit",
        "extract-unsupported",
        "readability",
        "warning",
        "jobbench.extract has no reader for a workspace file's format.",
        "Convert the file to a supported format, or accept that agents and judges will see "
        "only a placeholder for it.",
    ),
    Rule(
        "A11",
        "audit",
        "no-deliverable-named",
        "deliverables",
        "warning",
        "TASK_INSTRUCTIONS.txt names no deliverable file.",
        "Tell the agent the deliverable file names and formats.",
    ),
    # --- rubric lint -------------------------------------------------------------------
    Rule(
        "SC1",
        "lint",
        "back-reference",
        "self-contained",
        "error",
        'The criterion points elsewhere ("as above", "the previous criterion", '
        '"aforementioned", "criterion 2").',
        "Restate the fact the criterion depends on; criteria are judged one by one.",
    ),
    Rule(
        "SC2",
        "lint",
        "dangling-pronoun",
        "self-contained",
        "warning",
        "The criterion opens with a pronoun or demonstrative without an antecedent "
        '("It is …", "This value …").',
        'Name the deliverable or item explicitly ("The memo …", "The Q3 total …").',
    ),
    Rule(
        "BI1",
        "lint",
        "graded-scale",
        "binary",
        "error",
        'The criterion asks for a degree ("to what extent", "how well", a scale, '
        '"partially", "mostly").',
        "Rewrite as a yes/no statement about one observable fact.",
    ),
    Rule(
        "OB1",
        "lint",
        "unanchored-judgement",
        "objective",
        "error",
        'The criterion relies on an undefined quality word ("appropriate", "good", '
        '"clear", "professional", "reasonable", …).',
        "Replace the word with the observable property it stands for, or anchor it "
        '("appropriate, i.e. …", "such as …").',
    ),
    Rule(
        "OB2",
        "lint",
        "subjective-adverb",
        "objective",
        "warning",
        'The criterion hedges a fact with a subjective adverb ("clearly states", '
        '"appropriately labels").',
        "Drop the adverb; the fact alone is checkable.",
    ),
    Rule(
        "UN1",
        "lint",
        "number-without-unit",
        "unambiguous",
        "warning",
        "A number in the criterion has no unit, currency or counted noun.",
        'Add the unit ("$", "%", "days", "rows", …).',
    ),
    Rule(
        "UN2",
        "lint",
        "approximate-without-bound",
        "unambiguous",
        "error",
        'The criterion says "approximately"/"about"/"roughly" without a bound.',
        'State the tolerance ("$1.2 million ± $0.05 million", "within 0.5 %").',
    ),
    Rule(
        "UN3",
        "lint",
        "compound-criterion",
        "unambiguous",
        "warning",
        'One criterion tests several facts joined by "and" or ";".',
        "Split it into one criterion per fact in the same rubric (the chain keeps the AND).",
    ),
    Rule(
        "UN4",
        "lint",
        "decimal-without-tolerance",
        "unambiguous",
        "warning",
        "A non-integer number is given without rounding or tolerance.",
        'Say how close is close enough ("20.2 % ± 0.1", "rounded to one decimal").',
    ),
    Rule(
        "EX1",
        "lint",
        "literal-label-trap",
        "exact-phrase",
        "error",
        "The criterion demands a quoted label, title or wording that the instructions "
        "never ask for.",
        "Ask for the label in TASK_INSTRUCTIONS.txt, or accept any wording that states the fact.",
    ),
    Rule(
        "EX2",
        "lint",
        "position-trap",
        "exact-phrase",
        "warning",
        "The criterion demands a position (cell, first line, top of page) that the "
        "instructions never ask for.",
        "Ask for the position in the instructions, or test the fact wherever it appears.",
    ),
    Rule(
        "CK1",
        "lint",
        "check-text-mismatch",
        "consistency",
        "warning",
        "The criterion's numbers do not include the value its programmatic check expects.",
        "Make the criterion sentence and its check state the same figure (the sentence is "
        "the authority for LLM judges).",
    ),
    Rule(
        "LLM1",
        "llm",
        "llm-review",
        "review",
        "warning",
        "A reviewer model judged the criterion to violate a principle (advisory).",
        "Read the model's reason; fix the criterion if you agree.",
    ),
    # --- oracle / null / decoy / consistency -------------------------------------------
    Rule(
        "O1",
        "oracle",
        "oracle-fails",
        "reachability",
        "error",
        "The reference solution's deliverables fail a criterion (the task cannot score 100 %).",
        "Fix the gold value, the check, or the solution.",
    ),
    Rule(
        "O2",
        "oracle",
        "oracle-ungraded",
        "reachability",
        "error",
        "No complete grade of the oracle agent exists for the task.",
        "Run the oracle agent and grade it (`jobbench run --agent oracle`).",
    ),
    Rule(
        "N1",
        "null",
        "null-passes",
        "vacuity",
        "error",
        "A rubric passes for the null agent, who delivers nothing.",
        "Make the rubric's criteria require something the deliverables must contain.",
    ),
    Rule(
        "N2",
        "null",
        "null-ungraded",
        "vacuity",
        "error",
        "No complete grade of the null agent exists for the task.",
        "Run the null agent and grade it (`jobbench run --agent null`).",
    ),
    Rule(
        "D1",
        "decoy",
        "decoy-verdict-mismatch",
        "calibration",
        "error",
        "A programmatic check's verdict on a decoy differs from the decoy's expected.json.",
        "Fix the check, its gold value, the decoy, or expected.json.",
    ),
    Rule(
        "D2",
        "decoy",
        "decoy-expected-invalid",
        "calibration",
        "error",
        "A decoy's expected.json is missing, not JSON, or does not align with RUBRICS.json.",
        'Write {"rubrics": [{"index": i, "criteria": [true|false, …]}]} with one '
        "boolean per criterion of every rubric.",
    ),
    Rule(
        "D3",
        "decoy",
        "decoy-unchecked",
        "calibration",
        "info",
        "A decoy criterion has no programmatic check, so only an LLM judge can verify it.",
        "Add a check, or calibrate the LLM judge on this decoy.",
    ),
    Rule(
        "D4",
        "decoy",
        "decoy-too-good",
        "calibration",
        "warning",
        "The decoy's expected score is 60 % or more, so it barely separates right from wrong.",
        "Plant a mistake that costs more rubric weight.",
    ),
    Rule(
        "S1",
        "solve",
        "below-reachability",
        "reachability",
        "error",
        "The union of graded trials passes fewer than 90 % of the task's criteria.",
        "Prune or fix never-passed criteria, or run more models.",
    ),
    Rule(
        "S2",
        "solve",
        "never-passed",
        "reachability",
        "info",
        "No graded trial passed this criterion (candidate for pruning).",
        "Review the criterion in `jobbench review export`.",
    ),
    Rule(
        "C1",
        "consistency",
        "verdict-flips",
        "consistency",
        "warning",
        "Repeated grading of the same deliverables gave different verdicts on a criterion.",
        "Make the criterion more objective or add a programmatic check.",
    ),
    Rule(
        "V1",
        "validate",
        "invalid-task",
        "format",
        "error",
        "The task does not load (see the message).",
        "Fix the file and field named; `jobbench validate` lists every problem.",
    ),
]

RULES: dict[str, Rule] = {r.id: r for r in _RULES}
"""Every rule, by id."""


def rules_for(gate: str) -> list[Rule]:
    """The rules a gate emits, in catalogue order."""
    return [r for r in _RULES if r.gate == gate]


class Finding(BaseModel):
    """One thing a gate noticed.

    Attributes:
        gate: ``validate``, ``audit``, ``lint``, ``llm``, ``oracle``, ``null``, ``decoy``,
            ``solve`` or ``consistency``.
        rule: a rule id from :data:`RULES`.
        severity: ``error`` | ``warning`` | ``info``.
        task_id: ``split/occupation/taskN`` or None for dataset-level findings.
        file: display path of the file concerned, or None.
        where: location inside it: a JSON path (``rubrics[2].criterion[0]``), a workspace
            path, or a decoy name.
        message: what was found, quoting the offending text.
        hint: how to fix it (the rule's hint unless overridden).
    """

    model_config = ConfigDict(frozen=True)

    gate: str
    rule: str
    severity: Severity
    task_id: str | None = None
    file: str | None = None
    where: str | None = None
    message: str
    hint: str = ""

    def __str__(self) -> str:
        loc = ": ".join(x for x in (self.file, self.where) if x)
        return f"[{self.rule} {self.severity}] {loc + ': ' if loc else ''}{self.message}"


def make_finding(
    rule_id: str,
    message: str,
    *,
    task_id: str | None = None,
    file: str | None = None,
    where: str | None = None,
    severity: Severity | None = None,
    hint: str | None = None,
) -> Finding:
    """Build a :class:`Finding` for catalogue rule ``rule_id`` (gate, severity and hint
    default to the rule's).

    Raises:
        KeyError: ``rule_id`` is not in :data:`RULES`.
    """
    rule = RULES[rule_id]
    return Finding(
        gate=rule.gate,
        rule=rule.id,
        severity=severity or rule.severity,
        task_id=task_id,
        file=file,
        where=where,
        message=message,
        hint=rule.hint if hint is None else hint,
    )


class GateResult(BaseModel):
    """The outcome of one gate on one task (or on the dataset).

    Attributes:
        gate: gate name.
        status: see :data:`GateStatus`.
        findings: everything found, errors first.
        reason: why the gate was skipped or could not run.
        metrics: gate-specific figures (e.g. ``{"reachability": 0.95}``).
    """

    gate: str
    status: GateStatus
    findings: list[Finding] = Field(default_factory=list)
    reason: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_findings(
        cls,
        gate: str,
        findings: list[Finding],
        *,
        metrics: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> GateResult:
        """``fail`` if any error finding (or warning with ``strict``), ``warn`` if any
        warning, else ``pass``."""
        order = {"error": 0, "warning": 1, "info": 2}
        findings = sorted(findings, key=lambda f: order[f.severity])
        sev = {f.severity for f in findings}
        if "error" in sev or (strict and "warning" in sev):
            status: GateStatus = "fail"
        elif "warning" in sev:
            status = "warn"
        else:
            status = "pass"
        return cls(gate=gate, status=status, findings=findings, metrics=metrics or {})

    @classmethod
    def skipped(cls, gate: str, reason: str) -> GateResult:
        """A gate that did not apply."""
        return cls(gate=gate, status="skip", reason=reason)

    @classmethod
    def errored(cls, gate: str, reason: str, findings: list[Finding] | None = None) -> GateResult:
        """A gate that could not run (never a verdict on the task)."""
        return cls(gate=gate, status="error", reason=reason, findings=findings or [])


class GateUnavailable(RuntimeError):
    """A gate needs a stage (runner, judge) or an endpoint that is not available here."""
