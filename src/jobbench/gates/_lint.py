"""Rubric lint: the paper's four principles for criteria, plus exact-phrase traps.

JobBench criteria must be **self-contained** (judged alone), **binary** (yes/no),
**objective** (two careful graders agree) and **unambiguous** (units, tolerances, one fact
each) (JobBench paper, §3 "Chained rubric grading"). Public audits of the dataset also found
criteria that demand a literal label or position the instructions never asked for; those
are *exact-phrase traps*.

Each rule is a small function ``(criterion text, context) -> list[(message)]`` registered
in :data:`LINT_RULES` under its id (catalogue: :data:`jobbench.gates.RULES`). The rules are
deliberately conservative word patterns: a finding is a prompt for the author, with a fix
hint; errors are reserved for patterns that are wrong in any context.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..tasks import RUBRICS, NumberCheck, Task, display_path
from ._findings import RULES, Finding, Severity, make_finding
from ._text import NumberToken, normalize, numbers


@dataclass(frozen=True)
class LintContext:
    """What a rule may look at besides the criterion.

    Attributes:
        instructions: the task's TASK_INSTRUCTIONS.txt text.
        rubric_question: the question of the rubric holding the criterion.
        check: the criterion's programmatic check, or None.
    """

    instructions: str = ""
    rubric_question: str = ""
    check: object | None = None


RuleFn = Callable[[str, LintContext], list[str]]
LINT_RULES: dict[str, RuleFn] = {}


def _rule(rule_id: str) -> Callable[[RuleFn], RuleFn]:
    def deco(fn: RuleFn) -> RuleFn:
        LINT_RULES[rule_id] = fn
        return fn

    return deco


def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


SOFT = " (warning)"
"""Suffix a rule function appends to a message to lower that finding to a warning
(:func:`lint_text` strips it)."""


def _q(text: str) -> str:
    return f"\u201c{text}\u201d"


# --- self-contained -----------------------------------------------------------------------

_BACKREF = _rx(
    r"\bas "
    r"(?:stated|mentioned|noted|described|shown|discussed|defined|specified|given|listed|required|e"
    r"xplained)"
    r"\s+(?:above|before|earlier|previously|in (?:the "
    r")?(?:previous|prior|preceding|above|earlier|last))\b",
    r"\b(?:see|as|from) above\b",
    r"\bthe above\b",
    r"\babove[- ]mentioned\b",
    r"\baforementioned\b",
    r"\b(?:the )?(?:previous|preceding|prior|earlier|above|next|following|other) "
    r"(?:criterion|criteria|rubric|rubrics|item|question|point|requirement|check|answer|one)\b",
    r"\b(?:criterion|criteria|rubric|rubrics) #?\d+\b",
    r"\b(?:see|in|from|per|like|as in|than in|with) item #?\d+\b",
    r"\bthe same (?:value|figure|number|amount|one|result)\b(?! as\b)",
    r"\bthe former\b",
    r"\bthe latter\b",
    r"\bas before\b",
)


@_rule("SC1")
def back_reference(text: str, ctx: LintContext) -> list[str]:
    """Phrases pointing at other criteria or earlier text ("as above", "the previous
    criterion", "aforementioned", "criterion 2", "the latter")."""
    return [f"refers elsewhere: {_q(m.group(0))}" for m in _BACKREF.finditer(text)]


_PRONOUNS = {
    "it",
    "its",
    "it's",
    "they",
    "them",
    "their",
    "theirs",
    "he",
    "she",
    "his",
    "her",
    "hers",
}
_DEMONSTRATIVES = {"this", "that", "these", "those", "such"}
_DANGLING_NEXT = {
    "is",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "does",
    "do",
    "did",
    "should",
    "must",
    "will",
    "can",
    "could",
    "would",
    "shows",
    "states",
    "includes",
    "contains",
    "lists",
    "matches",
    "equals",
    "value",
    "values",
    "figure",
    "figures",
    "number",
    "numbers",
    "amount",
    "amounts",
    "one",
    "ones",
    "result",
    "results",
    "item",
    "items",
    "answer",
    "same",
}


@_rule("SC2")
def dangling_pronoun(text: str, ctx: LintContext) -> list[str]:
    """A criterion opening with a pronoun ("It is …") or a demonstrative used as a pronoun
    or with a generic noun ("This value …", "These are …")."""
    toks = re.findall(r"[A-Za-z']+", text)
    if not toks:
        return []
    first = toks[0].lower()
    nxt = toks[1].lower() if len(toks) > 1 else ""
    if first in _PRONOUNS:
        return [f"opens with the pronoun {_q(toks[0])} without an antecedent"]
    if first in _DEMONSTRATIVES and (nxt in _DANGLING_NEXT or nxt == ""):
        return [
            f"opens with {_q(' '.join(toks[:2]))}, which points at something outside the criterion"
        ]
    return []


# --- binary ------------------------------------------------------------------------------

_GRADED = _rx(
    r"\bto what (?:extent|degree)\b",
    r"\bhow "
    r"(?:well|good|thoroughly|clearly|effectively|accurately|completely|convincingly|strongly)\b",
    r"\bon a (?:\d+[- ]point |\d+\s*(?:-|–|to)\s*\d+ )?scale\b",
    r"\b(?:scale|score|rating|rated|rate) (?:of|from) \d+\s*(?:-|–|to)\s*\d+\b",
    r"\b\d+\s*(?:-|–|to)\s*\d+\s*(?:point )?scale\b",
    r"\bpartial(?:ly)?\b",
    r"\b(?:mostly|somewhat|largely|more or less|to some degree|to a (?:large|great|certain) "
    r"(?:extent|degree))\b",
    r"\bas (?:much|many|well|clearly|thoroughly|fully) as possible\b",
    r"\b(?:rate|grade|score|assess|evaluate|judge) (?:the quality|how|the degree|the extent)\b",
    r"\bthe (?:better|more|higher)\b[^.;]*\bthe (?:better|higher|more)\b",
)


@_rule("BI1")
def graded_scale(text: str, ctx: LintContext) -> list[str]:
    """Degrees and scales ("to what extent", "how well", "on a 1–5 scale", "partially",
    "mostly", "the more … the better")."""
    return [
        f"asks for a degree, not a yes/no fact: {_q(m.group(0))}" for m in _GRADED.finditer(text)
    ]


# --- objective ---------------------------------------------------------------------------

_VAGUE_ADJ = _rx(
    r"\bappropriate\b",
    r"\binappropriate\b",
    r"\bgood\b",
    r"\bclear\b",
    r"\bunclear\b",
    r"\bprofessional\b",
    r"\breasonable\b",
    r"\badequate\b",
    r"\bsufficient\b",
    r"\bsuitable\b",
    r"\bproper\b",
    r"\bwell[- "
    r"](?:written|organi[sz]ed|structured|formatted|presented|reasoned|supported|explained|justifi"
    r"ed|argued|designed)\b",
    r"\bhigh[- ]quality\b",
    r"\bnice\b",
    r"\bpolished\b",
    r"\bcompelling\b",
    r"\bconvincing\b",
    r"\bpersuasive\b",
    r"\beasy to (?:read|understand|follow)\b",
    r"\breadable\b",
    r"\bneat\b",
    r"\bexcellent\b",
)
# Softer quality words: often meant loosely, reported as warnings.
_VAGUE_ADJ_SOFT = _rx(
    r"\bconcise\b",
    r"\bcomprehensive\b",
    r"\bthorough\b",
    r"\bmeaningful\b",
    r"\beffective\b",
    r"\bsensible\b",
    r"\binsightful\b",
    r"\bstrong\b",
    r"\bsolid\b",
    r"\brelevant\b",
)
_VAGUE_ADV = _rx(
    r"\bappropriately\b",
    r"\bclearly\b",
    r"\bprofessionally\b",
    r"\breasonably\b",
    r"\badequately\b",
    r"\bsufficiently\b",
    r"\bsuitably\b",
    r"\bproperly\b",
    r"\bnicely\b",
    r"\bconcisely\b",
    r"\bcomprehensively\b",
    r"\bthoroughly\b",
    r"\bmeaningfully\b",
    r"\beffectively\b",
    r"\bconvincingly\b",
    r"\bneatly\b",
    r"\bsensibly\b",
    r"\bexplicitly and clearly\b",
)
# Terms of art in which these words carry a fixed meaning.
_TERMS_OF_ART = _rx(
    r"\bgood (?:standing|faith|cause|title)\b",
    r"\bclear (?:title|and convincing)\b",
    r"\bmak(?:e|es|ing) (?:it )?clear\b",
    r"\bclear(?:ly)? erroneous\b",
    r"\bprofessional "
    r"(?:engineer|engineers|liability|services|service|fees|fee|license|licence|licensure|"
    r"development|association|certification|corporation|employer|organization|organisation|conduct "
    r"rules)\b",
    r"\breasonable (?:doubt|person|accommodation|assurance)\b",
    r"\badequate (?:yearly|annual) progress\b",
    r"\bstrong (?:password|authentication)\b",
    r"\beffective (?:date|tax rate|interest rate|rate|annual rate|dose|date of)\b",
    r"\brelevant (?:range|market)\b",
    r"\bsufficient (?:evidence|consideration)\b",
    r"\bproper (?:noun|fraction|subset)\b",
)
_ANCHOR = _rx(
    r"\(",
    r"\bi\.?\s?e\.?",
    r"\be\.?\s?g\.?",
    r"\bsuch as\b",
    r"\bmeaning\b",
    r"\bnamely\b",
    r"\bdefined as\b",
    r"\bthat is\b",
    r":",
    r"\bat least\b",
    r"\bat most\b",
    r"\bno more than\b",
    r"\bwithin\b",
    r"\bspecifically\b",
    r"\bincluding\b",
    r"\bwhich means\b",
    r"\bin that\b",
)


def _unanchored(text: str, pattern: re.Pattern[str]) -> list[str]:
    terms = [m.span() for m in _TERMS_OF_ART.finditer(text)]
    out: list[str] = []
    for m in pattern.finditer(text):
        if any(a <= m.start() < b for a, b in terms):
            continue
        if _ANCHOR.search(text[m.end() :]):
            continue
        out.append(m.group(0))
    return out


@_rule("OB1")
def unanchored_judgement(text: str, ctx: LintContext) -> list[str]:
    """Quality adjectives with no definition after them ("appropriate", "good", "clear",
    "professional", "reasonable", "well-written", …); terms of art such as "good standing"
    and anchored uses ("appropriate (a bar or line chart)") are allowed. Softer words
    ("comprehensive", "relevant", "effective", …) are reported as warnings."""
    out = [
        f"{_q(w)} is a judgement with no stated yardstick" for w in _unanchored(text, _VAGUE_ADJ)
    ]
    out += [
        f"{_q(w)} is a judgement with no stated yardstick{SOFT}"
        for w in _unanchored(text, _VAGUE_ADJ_SOFT)
    ]
    return out


@_rule("OB2")
def subjective_adverb(text: str, ctx: LintContext) -> list[str]:
    """Subjective adverbs hedging a fact ("clearly states", "appropriately labels")."""
    return [
        f"{_q(w)} makes a checkable fact a matter of taste" for w in _unanchored(text, _VAGUE_ADV)
    ]


# --- unambiguous -------------------------------------------------------------------------

_INDEX_WORDS = {
    "row",
    "rows",
    "column",
    "col",
    "line",
    "lines",
    "page",
    "pages",
    "p",
    "pp",
    "section",
    "sec",
    "table",
    "figure",
    "fig",
    "chart",
    "step",
    "rubric",
    "criterion",
    "item",
    "question",
    "q",
    "part",
    "chapter",
    "appendix",
    "exhibit",
    "tab",
    "sheet",
    "version",
    "v",
    "no",
    "number",
    "task",
    "phase",
    "tier",
    "level",
    "grade",
    "class",
    "form",
    "schedule",
    "article",
    "clause",
    "rule",
    "code",
    "zone",
    "district",
    "ward",
    "route",
    "unit",
    "suite",
    "room",
    "floor",
    "building",
    "lot",
    "parcel",
    "box",
    "id",
    "account",
    "acct",
    "invoice",
    "order",
    "policy",
    "claim",
    "case",
    "docket",
    "cell",
    "region",
    "sample",
    "round",
    "quarter",
    "week",
    "day",
    "month",
    "fy",
    "cfr",
    "usc",
    "§",
    "title",
    "paragraph",
    "para",
    "slide",
    "option",
    "scenario",
    "plan",
    "model",
    "batch",
    "lane",
    "gate",
    "platform",
    "channel",
    "flight",
    "store",
    "branch",
    "site",
    "plant",
    "well",
    "station",
    "sector",
    "ticket",
    "po",
    "sku",
    "ssn",
    "ein",
    "zip",
    "tract",
    "block",
    "highway",
    "interstate",
    "hwy",
    "i",
    "us",
    "sr",
    "state",
    "county",
    "precinct",
    "year",
    "years",
    "check",
    "cheque",
    "receipt",
    "record",
    "entry",
    "voucher",
    "transaction",
    "serial",
    "employee",
    "patient",
    "customer",
    "vendor",
    "member",
    "items",
    "catalog",
}
_FUNCTION_WORDS = {
    "and",
    "or",
    "the",
    "a",
    "an",
    "in",
    "is",
    "are",
    "was",
    "were",
    "of",
    "to",
    "for",
    "on",
    "at",
    "by",
    "with",
    "from",
    "as",
    "than",
    "if",
    "but",
    "not",
    "which",
    "that",
    "this",
    "it",
    "be",
    "nor",
    "vs",
    "versus",
    "while",
    "when",
    "where",
    "after",
    "before",
    "into",
    "onto",
    "per",
    "plus",
    "minus",
    "times",
    "so",
    "then",
    "whereas",
}
_TOLERANCE = _rx(
    r"±",
    r"\+/-",
    r"\+-",
    r"\bplus or minus\b",
    r"\bwithin\b",
    r"\btolerance\b",
    r"\bto the nearest\b",
    r"\brounded\b",
    r"\bround(?:ing|s)?\b",
    r"\bdecimal places?\b",
    r"\bdecimals?\b",
    r"\bsignificant (?:figures|digits)\b",
    r"\bexact(?:ly)?\b",
    r"\bat least\b",
    r"\bat most\b",
    r"\bor (?:more|less|fewer|greater|higher|lower|above|below)\b",
    r"\bno (?:more|less|fewer) than\b",
    r"\bbetween\b",
    r"\brange\b",
    r"\bgreater than\b",
    r"\bless than\b",
    r"\bmore than\b",
    r"\bfewer than\b",
    r"\bexceeds?\b",
    r"\bbelow\b",
    r"\babove\b",
    r"\bunder\b",
    r"\bover\b",
    r"\bup to\b",
    r"\bmaximum\b",
    r"\bminimum\b",
    r"[<>≤≥]",
)


_DIMENSIONLESS = re.compile(
    r"\b(?:rate|rates|ratio|ratios|share|fraction|proportion|correlation|coefficient|r|rho|index|sc"
    r"ore|factor|"
    r"multiplier|odds|probability|p-value|p|w/cm|w/c|elasticity|beta|alpha|r2|r-squared)\b"
    r"(?:(?!\band\b)[^.;,\d]){0,30}$",
    re.IGNORECASE,
)


def _in_parens(text: str, pos: int) -> bool:
    """Whether ``pos`` lies inside parentheses (an explanatory aside)."""
    return text.count("(", 0, pos) > text.count(")", 0, pos)


def _fact_numbers(text: str) -> list[NumberToken]:
    """Numbers that state a quantity: not years, indexes or parenthetical asides."""
    return [
        n
        for n in numbers(text)
        if not n.is_year and not _is_index(n) and not _in_parens(text, n.start)
    ]


_TOLERANCE_BEFORE = re.compile(r"(?:±|\+/-|\+-|plus or minus|within)\s*[$€£¥]?\s*$", re.IGNORECASE)


def _is_index(n: NumberToken) -> bool:
    return n.prev_word in _INDEX_WORDS or n.prev_word in ("#", "§")


def _has_unit(n: NumberToken) -> bool:
    if n.currency or n.percent or n.scale != 1.0:
        return True
    return bool(n.next_word) and n.next_word not in _FUNCTION_WORDS


@_rule("UN1")
def number_without_unit(text: str, ctx: LintContext) -> list[str]:
    """Numbers that are neither years nor indexes ("row 5", "check 2207") and carry no
    currency sign, ``%``, scale word or following noun ("42 days", "3 vendors"). Numbers in
    parentheses (asides), after "per", and rates, ratios or coefficients ("a rate of 0.77",
    "r = 0.31") are not flagged."""
    out = []
    toks = numbers(text)
    for i, n in enumerate(toks):
        if (
            n.is_year
            or _is_index(n)
            or _has_unit(n)
            or _in_parens(text, n.start)
            or n.prev_word == "per"
        ):
            continue
        before = text[max(0, n.start - 40) : n.start]
        if _TOLERANCE_BEFORE.search(before[-20:]):
            continue  # "± 0.1": a tolerance takes the unit of the figure it qualifies
        if _DIMENSIONLESS.search(before):
            continue  # rates, ratios, coefficients: no unit to give
        # "10 and 20 days", "5 to 7 %": the unit written after the last number of a range
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if (
            nxt is not None
            and n.next_word in ("and", "to", "or")
            and nxt.start - n.end <= 8
            and _has_unit(nxt)
        ):
            continue
        out.append(f"the number {_q(n.text)} has no unit")
    return out


_APPROX_ALWAYS = _rx(
    r"\bapproximately\b",
    r"\bapprox\.?(?!\w)",
    r"\broughly\b",
    r"\bcirca\b",
    r"\bca\.(?=\s*\d)",
    r"\bin the (?:ballpark|neighbou?rhood|vicinity|order) of\b",
    r"\bon the order of\b",
    r"≈",
    r"~(?=\s*[$€£¥]?\d)",
)
_APPROX_BEFORE_NUMBER = _rx(
    r"\b(?:about|around|nearly|almost|close to|some)\s+(?=[$€£¥]?\s?\(?-?\d)"
)
_BOUND = _rx(
    r"±",
    r"\+/-",
    r"\+-",
    r"\bplus or minus\b",
    r"\bwithin\b",
    r"\btolerance\b",
    r"\bto the nearest\b",
    r"\brounded\b",
    r"\bbetween\b[^.;]*\band\b",
    r"\brange of\b",
    r"\berror of\b",
    r"\bmargin\b",
)


@_rule("UN2")
def approximate_without_bound(text: str, ctx: LintContext) -> list[str]:
    """ "approximately", "roughly", "~", or "about"/"around"/"nearly" before a number,
    without a stated bound (±, within, tolerance, to the nearest, rounded, between)."""
    if _BOUND.search(text):
        return []
    hits = [m.group(0).strip() for m in _APPROX_ALWAYS.finditer(text)]
    hits += [m.group(0).strip() for m in _APPROX_BEFORE_NUMBER.finditer(text)]
    return [f"{_q(h)} without a stated bound" for h in hits]


_CLAIM_VERBS = re.compile(
    r"\b(?:states?|identif(?:y|ies)|lists?|reports?|includes?|contains?|shows?|mentions?|notes?|exp"
    r"lains?|"
    r"recommends?|flags?|gives?|provides?|calculates?|computes?|uses?|names?|cites?|concludes?|attr"
    r"ibutes?|"
    r"excludes?|records?|sums?|totals?|highlights?|describes?|specifies|specify|proposes?|is|are|wa"
    r"s|were|"
    r"equals?|matches|match|has|have)\b",
    re.IGNORECASE,
)
_RANGE = re.compile(r"\bbetween\b[^.;]{0,60}?\band\b", re.IGNORECASE)


def _fact_units(part: str) -> int:
    return len(_fact_numbers(part)) + (1 if _CLAIM_VERBS.search(part) else 0)


@_rule("UN3")
def compound_criterion(text: str, ctx: LintContext) -> list[str]:
    """Several facts in one criterion: it splits on "and"/";"/"as well as" into two or
    more parts each holding its own claim (a claim verb plus a number or another verb);
    "between X and Y" ranges and lists of names ("vendors A and B") do not count."""
    body = re.sub(r"\([^()]*\)", " ", text)  # asides in parentheses are not extra facts
    body = _RANGE.sub("between-range", body)
    parts = [
        p
        for p in re.split(r"\band\b|;|\bas well as\b|\balso\b", body, flags=re.IGNORECASE)
        if p.strip()
    ]
    if len(parts) < 2:
        return []
    strong = [p for p in parts if _fact_units(p) >= 2]
    verbish = [p for p in parts if _CLAIM_VERBS.search(p) or _fact_numbers(p)]
    if len(strong) >= 2 or (len(strong) >= 1 and len(verbish) >= 2 and len(verbish) == len(parts)):
        return [f"tests {len(verbish)} facts joined by \u201cand\u201d/\u201c;\u201d"]
    return []


@_rule("UN4")
def decimal_without_tolerance(text: str, ctx: LintContext) -> list[str]:
    """Non-integer numbers (``20.2%``, ``3.725``) with no rounding or tolerance wording.
    Two-decimal amounts (``1,250.00``, ``$3.75``: cents) and parenthetical asides are
    taken as exact."""
    if _TOLERANCE.search(text):
        return []
    return [
        f"{_q(n.text)} is not an integer and no rounding or tolerance is stated"
        for n in _fact_numbers(text)
        if n.decimals > 0 and n.decimals != 2
    ]


# --- exact-phrase traps ------------------------------------------------------------------

_QUOTED = re.compile(
    r"[\"“]([^\"“”\n]{1,80})[\"”]|(?<![\w])'([^'\n]{1,80})'(?![\w])|`([^`\n]{1,80})`"
)


_LABEL_BEFORE = re.compile(
    r"(?:\btitled|\bentitled|\blabell?ed|\blabel|\bnamed|\bcalled|\bheading|\bheader|\bheaded|\bcap"
    r"tion(?:ed)?|"
    r"\bcolumn|\bsheet|\btab|\bworksheet|\bfield|\bexact(?:ly)?|\bverbatim|\bliteral(?:ly)?|\bphras"
    r"e|\bwords?|"
    r"\btext|\bstring|\bwording|\breads|\bspelled|\bsubject line|\btitle)\s*(?:of|as|to|is|:)?\s*$",
    re.IGNORECASE,
)
_LABEL_AFTER = re.compile(
    r"^\s*(?:column|sheet|tab|worksheet|heading|header|label|title|field|section)\b", re.IGNORECASE
)


@_rule("EX1")
def literal_label_trap(text: str, ctx: LintContext) -> list[str]:
    """A quoted literal demanded as a title, label, heading, sheet/column name or exact
    wording (the cue word is right before the quote, or a "column"/"sheet"/… noun right
    after it), when the instructions do not contain that literal."""
    instr = normalize(ctx.instructions)
    out = []
    for m in _QUOTED.finditer(text):
        lit = next(g for g in m.groups() if g is not None)
        before, after = text[max(0, m.start() - 40) : m.start()], text[m.end() : m.end() + 25]
        if not (_LABEL_BEFORE.search(before) or _LABEL_AFTER.search(after)):
            continue  # a quoted value ("1,250.00", "Acme") rather than a demanded label
        norm = normalize(lit).strip(" .,:;")
        if not norm or norm in instr:
            continue
        out.append(f"demands the literal {_q(lit)}, which the instructions never ask for")
    return out


_POSITION = _rx(
    r"\b(?:in|at) cell [A-Z]{1,3}\d+\b",
    r"\bcell [A-Z]{1,3}\d+\b",
    r"\b(?:first|second|third|last|top|bottom|opening|final|closing) "
    r"(?:line|row|sentence|paragraph|page|column|"
    r"cell|bullet|heading|slide|word|section)s?\b",
    r"\b(?:begins|starts|opens|ends) with\b",
    r"\bat the (?:top|bottom|start|beginning|end)\b",
    r"\bin the (?:title|header|footer|subject line)\b",
)


@_rule("EX2")
def position_trap(text: str, ctx: LintContext) -> list[str]:
    """A demanded position (``cell B2``, "first sentence", "at the top", "begins with")
    that the instructions do not mention."""
    instr = normalize(ctx.instructions)
    out = []
    for m in _POSITION.finditer(text):
        phrase = normalize(m.group(0))
        key = re.sub(r"^(?:in|at) ", "", phrase)
        if key in instr:
            continue
        out.append(f"demands a position, {_q(m.group(0))}, that the instructions never ask for")
    return out


# --- check consistency -------------------------------------------------------------------


def _expected_numbers(check: object) -> tuple[list[float], float, float, bool]:
    """(values, abs_tol, rel_tol, percent) a check expects; empty values when not numeric."""
    if isinstance(check, NumberCheck):
        return [check.value], check.abs_tol, check.rel_tol, check.percent
    expect = getattr(check, "expect", None)
    if expect is None:
        return [], 0.0, 0.0, False
    vals: list[float] = []
    if isinstance(expect.equals, (int, float)) and not isinstance(expect.equals, bool):
        vals.append(float(expect.equals))
    for v in expect.any_of or []:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            vals.append(float(v))
    return vals, expect.abs_tol, expect.rel_tol, False


def _number_matches(t: NumberToken, v: float, abs_tol: float, rel_tol: float) -> bool:
    # the written number, with and without its scale word ("2,901.7 thousand scripts" may
    # state a value kept in thousands), against v, v×100 and v/100 (percent vs fraction)
    for written, scale in ((t.value, t.scale), (t.value / t.scale, 1.0)):
        rounding = 0.5 * 10 ** (-t.decimals) * scale
        for cand in (v, v * 100, v / 100):
            tol = max(abs_tol, rel_tol * abs(cand), rounding, 1e-9 * max(1.0, abs(cand)))
            if math.isclose(abs(written), abs(cand), abs_tol=tol):
                return True
    return False


_COUNT_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"single": 1}
_COUNT_WORD_RE = re.compile(r"\b(" + "|".join(_COUNT_WORDS) + r")\b", re.IGNORECASE)


def _stated_counts(text: str) -> list[tuple[str, float]]:
    """``[(as written, value), ...]`` of the counts a sentence states: number words
    (``zero``–``twenty``, ``single``) and whole numbers with no currency sign, ``%``, scale
    word or decimals that are neither years nor indexes."""
    out = [
        (m.group(1), float(_COUNT_WORDS[m.group(1).lower()])) for m in _COUNT_WORD_RE.finditer(text)
    ]
    out += [
        (n.text, n.value)
        for n in numbers(text)
        if n.decimals == 0
        and not (n.currency or n.percent or n.is_year or _is_index(n))
        and n.scale == 1.0
        and n.value >= 0
    ]
    return out


def _count_mismatch(text: str, vals: list[float], abs_tol: float) -> list[str]:
    """CK1 for a ``count``/``nunique`` aggregate: its expected values are counts, compared
    with the counts the sentence states (never with its amounts); no stated count, no
    finding."""
    counts = _stated_counts(text)
    if not counts or any(
        math.isclose(c, v, abs_tol=max(abs_tol, 1e-9)) for _, c in counts for v in vals
    ):
        return []
    shown = ", ".join(f"{v:g}" for v in vals)
    written = ", ".join(w for w, _ in counts)
    return [f"the check expects a count of {shown} but the criterion states {written}"]


@_rule("CK1")
def check_text_mismatch(text: str, ctx: LintContext) -> list[str]:
    """A numeric check (``number`` value, ``expect.equals``/``any_of`` numbers) whose value
    matches none of the numbers written in the criterion (within the check's tolerance, the
    text's rounding, and percent/fraction scaling). A ``count``/``nunique`` aggregate's value
    is compared with the counts the criterion states instead (:func:`_stated_counts`)."""
    if ctx.check is None:
        return []
    vals, abs_tol, rel_tol, _ = _expected_numbers(ctx.check)
    if not vals:
        return []
    if getattr(ctx.check, "aggregate", None) in ("count", "nunique"):
        return _count_mismatch(text, vals, abs_tol)
    toks = [n for n in numbers(text) if not _is_index(n)]
    if not toks:
        return []
    if any(_number_matches(t, v, abs_tol, rel_tol) for t in toks for v in vals):
        return []
    shown = ", ".join(f"{v:g}" for v in vals)
    written = ", ".join(t.text for t in toks)
    return [f"the check expects {shown} but the criterion states {written}"]


# --- driver ------------------------------------------------------------------------------

QUESTION_RULES: tuple[str, ...] = ("BI1",)
"""Rules also applied to rubric questions (the public judge shows them to the model)."""


def lint_text(
    text: str, ctx: LintContext | None = None, rules: list[str] | None = None
) -> list[tuple[str, str, Severity]]:
    """Lint one criterion sentence.

    Args:
        text: the criterion.
        ctx: instructions, rubric question and check for the context-aware rules.
        rules: rule ids to run (default: all of :data:`LINT_RULES`).

    Returns:
        ``[(rule_id, message, severity), ...]`` in rule order; the severity is the rule's
        default unless the rule lowered it (soft quality words of ``OB1``).
    """
    ctx = ctx or LintContext()
    out: list[tuple[str, str, Severity]] = []
    for rid, fn in LINT_RULES.items():
        if rules is not None and rid not in rules:
            continue
        for msg in fn(text, ctx):
            sev: Severity = RULES[rid].severity
            if msg.endswith(SOFT):
                msg, sev = msg[: -len(SOFT)], "warning"
            out.append((rid, msg, sev))
    return out


def lint_task(task: Task, rules: list[str] | None = None) -> list[Finding]:
    """Lint every criterion (and rubric question, for :data:`QUESTION_RULES`) of a task.

    Returns:
        Findings located at ``rubrics[i].criterion[j]`` / ``rubrics[i].rubric`` in
        RUBRICS.json, each with the rule's fix hint.
    """
    file = display_path(task.root / RUBRICS)
    out: list[Finding] = []
    for r in task.rubrics:
        for rid, msg, sev in lint_text(
            r.question,
            LintContext(task.instructions, r.question),
            [x for x in QUESTION_RULES if rules is None or x in rules],
        ):
            out.append(
                make_finding(
                    rid,
                    msg,
                    task_id=task.id,
                    file=file,
                    severity=sev,
                    where=f"rubrics[{r.index}].rubric",
                )
            )
        for c in r.criteria:
            ctx = LintContext(task.instructions, r.question, c.check)
            for rid, msg, sev in lint_text(c.text, ctx, rules):
                out.append(
                    make_finding(
                        rid,
                        msg,
                        task_id=task.id,
                        file=file,
                        severity=sev,
                        where=f"rubrics[{r.index}].criterion[{c.index}]",
                    )
                )
    return out
