"""The static audit gate: instructions against files, deliverable names, leaks, readability.

No LLM and no agent: the audit reads the task directory (through :mod:`jobbench.extract`)
and reports :class:`~jobbench.gates.Finding` records with rule ids ``A1``–``A11``
(catalogue in :data:`jobbench.gates.RULES`).

Leak detection compares word n-grams (lower-cased ``\\w+`` tokens):

* rubric text (``A5``): for every criterion and rubric question with at least
  ``rubric_ngram + 2`` words, the share of its ``rubric_ngram``-grams found in a workspace
  file; ``TASK_INSTRUCTIONS.txt`` is exempt because criteria legitimately restate the
  instructions (the deliverable names, the columns asked for);
* reference answers (``A6``): for every reference deliverable (files under
  ``solution/expected|output|outputs|deliverables/`` and any extra folders passed in, e.g.
  an oracle trial's deliverables), the share of its *answer-bearing* ``reference_ngram``-
  grams found in a workspace file. Answer-bearing n-grams are those that appear neither in
  the instructions nor in any decoy: a decoy is a plausible wrong answer built from the same
  inputs, so what a reference shares with the decoys (copied input rows, headers,
  boilerplate) is not the answer. Without decoys, a workspace file that is the verbatim
  *source* of a deliverable which copies it (a deduplicated ledger, say) can trip this
  check: add a decoy or raise ``reference_threshold`` for such a task.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..tasks import (
    INSTRUCTIONS,
    RUBRICS,
    SEARCH,
    SOLUTION,
    TASK_CARD,
    Task,
    display_path,
    sha256_file,
)
from ._findings import Finding, make_finding
from ._text import (
    Mention,
    containment,
    file_mentions,
    glob_matches,
    is_glob,
    ngrams,
    normalize,
    same_file,
    words,
)

REFERENCE_OUTPUT_DIRS: tuple[str, ...] = ("expected", "output", "outputs", "deliverables")
"""Folders under ``solution/`` whose files are reference deliverables (compared by ``A6``)."""

HIDDEN_NAMES: frozenset[str] = frozenset({RUBRICS.lower(), TASK_CARD.lower(), "expected.json"})
HIDDEN_DIRS: frozenset[str] = frozenset({SOLUTION, "decoys", SEARCH})

UNIVERSAL_GLOBS = frozenset({"*", "**", "**/*", "./*"})

OUTPUT_CUES = (
    "save",
    "saved",
    "saving",
    "write",
    "written",
    "writing",
    "produce",
    "create",
    "deliver",
    "deliverable",
    "deliverables",
    "submit",
    "output",
    "outputs",
    "export",
    "name it",
    "call it",
    "provide",
    "prepare",
    "draft",
    "generate",
    "return",
    "upload",
    "hand in",
    "place it",
    "put it",
    "as a file",
)
# After a name, only unambiguous cues count ("statement export" is a noun, not an order).
OUTPUT_CUES_AFTER = (
    "save",
    "write",
    "produce",
    "create",
    "deliver",
    "submit",
    "name it",
    "call it",
    "upload",
)
REFERENCE_CUES_AFTER = (
    "contains",
    "includes",
    "lists",
    "shows",
    "has",
    "provided",
    "attached",
    "exported from",
    "from our",
    "from the",
    "is our",
    "is the",
    "are the",
)
REFERENCE_HEADINGS = (
    "reference",
    "input",
    "source",
    "file",
    "attached",
    "material",
    "folder",
    "workspace",
    "enclosed",
    "included",
    "provided",
    "available",
    "you have",
    "data",
    "documents",
)

REFERENCE_CUES = (
    "read",
    "use",
    "using",
    "see",
    "refer",
    "review",
    "open",
    "attached",
    "provided",
    "found in",
    "based on",
    "reference",
    "source",
    "consult",
    "check",
    "compare",
    "given",
    "contains",
    "includes",
    "in the workspace",
    "in your workspace",
)


@dataclass
class AuditConfig:
    """Thresholds of the audit.

    Attributes:
        rubric_ngram: n of the word n-grams compared with criteria (words).
        rubric_threshold: a workspace file leaks a criterion when it holds at least this
            share of the criterion's n-grams.
        reference_ngram: n for reference deliverables (longer: data rows share short runs).
        reference_threshold: share of a reference file's n-grams that trips ``A6``.
        reference_min_ngrams: reference files with fewer n-grams are not compared.
        extra_reference_dirs: more folders of reference deliverables (e.g. an oracle run's
            ``deliverables/`` for this task).
        max_chars: extraction cap per file (characters).
    """

    rubric_ngram: int = 5
    rubric_threshold: float = 0.6
    reference_ngram: int = 8
    reference_threshold: float = 0.8
    reference_min_ngrams: int = 20
    extra_reference_dirs: list[Path] = field(default_factory=list)
    max_chars: int = 200_000


def _sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The line holding [start, end), widened to the sentence when the line is long."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    le = len(text) if le < 0 else le
    return ls, le


def _heading_before(text: str, pos: int) -> str:
    """The nearest preceding line that looks like a heading (ends with ':' or starts with
    '#', or is short and upper case), lower-cased; '' if none within 12 lines."""
    lines = text[:pos].split("\n")[:-1]
    for line in reversed(lines[-12:]):
        s = line.strip()
        if not s:
            continue
        if s.endswith(":") or s.startswith("#") or (s.isupper() and len(s) < 60):
            return s.lower()
    return ""


def _cue_class(text: str, mention: Mention) -> str | None:
    """``output`` or ``reference`` from the nearest cue word before the mention in its
    line, else the heading above it (a "Deliverables:" list), else the first cue after it
    in the line; None if no cue is found."""
    ls, le = _sentence_span(text, mention.start, mention.end)
    before = text[ls : mention.start].lower()
    after = text[mention.end : le].lower()

    def last_cue(segment: str) -> tuple[int, str] | None:
        best: tuple[int, str] | None = None
        for cls, cues in (("output", OUTPUT_CUES), ("reference", REFERENCE_CUES)):
            for cue in cues:
                for m in re.finditer(rf"\b{re.escape(cue)}\b", segment):
                    if best is None or m.start() > best[0]:
                        best = (m.start(), cls)
        return best

    def first_cue(segment: str) -> tuple[int, str] | None:
        best: tuple[int, str] | None = None
        for cls, cues in (("output", OUTPUT_CUES_AFTER), ("reference", REFERENCE_CUES_AFTER)):
            for cue in cues:
                m = re.search(rf"\b{re.escape(cue)}\b", segment)
                if m and (best is None or m.start() < best[0]):
                    best = (m.start(), cls)
        return best

    found = last_cue(before)
    if found:
        return found[1]
    heading = _heading_before(text, mention.start)
    if any(w in heading for w in ("deliverable", "output", "produce", "submit", "hand in")):
        return "output"
    if any(w in heading for w in REFERENCE_HEADINGS):
        return "reference"
    found = first_cue(after)
    return found[1] if found else None


def _rubric_globs(task: Task) -> list[tuple[str, str]]:
    """(glob, JSON path) for every rubric ``files`` entry and check ``file``."""
    out: list[tuple[str, str]] = []
    for r in task.rubrics:
        for k, g in enumerate(r.files or []):
            out.append((g, f"rubrics[{r.index}].files[{k}]"))
        for c in r.criteria:
            f = getattr(c.check, "file", None) if c.check is not None else None
            if f:
                out.append((f, f"rubrics[{r.index}].checks[{c.index}].file"))
    return out


def _rubric_texts(task: Task) -> list[tuple[str, str]]:
    """(text, JSON path) of every rubric question and criterion."""
    out: list[tuple[str, str]] = []
    for r in task.rubrics:
        out.append((r.question, f"rubrics[{r.index}].rubric"))
        for c in r.criteria:
            out.append((c.text, f"rubrics[{r.index}].criterion[{c.index}]"))
    return out


def _walk(folder: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d != "__pycache__" and not (Path(dirpath) / d).is_symlink()
        )
        for n in sorted(filenames):
            p = Path(dirpath) / n
            if p.is_file() and not p.is_symlink():
                out.append(p.relative_to(folder).as_posix())
    return out


def reference_files(task: Task, extra_dirs: list[Path] | None = None) -> list[tuple[str, Path]]:
    """Reference deliverables of a task (the right answers): ``(label, path)`` for every
    file under ``solution/{expected,output,outputs,deliverables}/`` and under
    ``extra_dirs`` (e.g. an oracle trial's ``deliverables/``)."""
    out: list[tuple[str, Path]] = []
    sol = task.root / SOLUTION
    if sol.is_dir() and not sol.is_symlink():
        for sub in REFERENCE_OUTPUT_DIRS:
            d = sol / sub
            if d.is_dir() and not d.is_symlink():
                out += [(f"{SOLUTION}/{sub}/{rel}", d / rel) for rel in _walk(d)]
    for d in extra_dirs or []:
        for rel in _walk(d):
            out.append((f"{display_path(d)}/{rel}", d / rel))
    return out


def decoy_files(task: Task) -> list[tuple[str, Path]]:
    """Files of every ``solution/decoys/<name>/`` (``expected.json`` excluded): plausible
    wrong answers, used as the baseline of the reference-answer check."""
    decoys = task.root / SOLUTION / "decoys"
    if not decoys.is_dir() or decoys.is_symlink():
        return []
    return [
        (f"{SOLUTION}/decoys/{rel}", decoys / rel)
        for rel in _walk(decoys)
        if PurePosixPath(rel).name.lower() != "expected.json"
    ]


def audit_task(task: Task, config: AuditConfig | None = None) -> list[Finding]:
    """Run every static audit check on one task.

    Args:
        task: a loaded task (see :func:`jobbench.tasks.load_task`).
        config: thresholds; defaults to :class:`AuditConfig()`.

    Returns:
        Findings with rule ids ``A1``–``A11``, in check order. The task directory is only
        read.
    """
    from ..extract import extract

    cfg = config or AuditConfig()
    tid = task.id
    findings: list[Finding] = []
    instr_path = display_path(task.workspace_dir / INSTRUCTIONS)
    rubrics_path = display_path(task.root / RUBRICS)
    text = task.instructions
    workspace = [f for f in task.workspace_files]
    known = workspace + task.search_files
    mentions = file_mentions(text, known=known)

    # --- A1 / A11 / A3 / A4: names in the instructions vs workspace and rubrics ----------
    rubric_globs = _rubric_globs(task)
    rubric_texts = _rubric_texts(task)
    rubric_blob = normalize(" ".join(t for t, _ in rubric_texts))
    in_workspace = lambda n: any(same_file(n, w) for w in workspace)  # noqa: E731
    in_search = lambda n: any(same_file(n, s) for s in task.search_files)  # noqa: E731

    declared: list[str] = []  # names in the instructions that are not existing inputs
    for m in mentions:
        name = m.name
        if in_workspace(name) or in_search(name):
            continue
        if any(same_file(name, d) for d in declared):
            continue
        declared.append(name)

    deliverables: list[str] = []
    for name in declared:
        m = next(x for x in mentions if x.name == name)
        referenced = any(glob_matches(g, name) for g, _ in rubric_globs) or _named_in(
            rubric_blob, name
        )
        cue = _cue_class(text, m)
        # an explicit cue decides (criteria may name input files too); else a rubric reference
        if cue == "output" or (cue is None and referenced):
            deliverables.append(name)
        else:
            findings.append(
                make_finding(
                    "A1",
                    f"instructions name {name!r}, which is not in task_folder/"
                    + (" or files_required_to_search/" if task.search_dir else "")
                    + (
                        " (the sentence reads it as a reference file)" if cue == "reference" else ""
                    ),
                    task_id=tid,
                    file=instr_path,
                    where=name,
                )
            )

    if not deliverables:
        findings.append(
            make_finding(
                "A11",
                "no deliverable file name found in the instructions",
                task_id=tid,
                file=instr_path,
            )
        )

    # rubric / check globs must match a name the instructions mention
    for g, where in rubric_globs:
        if g.strip() in UNIVERSAL_GLOBS or any(glob_matches(g, d) for d in declared):
            continue
        if is_glob(g) and _glob_described(g, text):
            continue
        what = "glob" if is_glob(g) else "file"
        findings.append(
            make_finding(
                "A3",
                f"{where.split('.')[-1]} {what} {g!r} matches no deliverable named in the "
                "instructions"
                + (f" (instructions name: {', '.join(declared)})" if declared else ""),
                task_id=tid,
                file=rubrics_path,
                where=where,
            )
        )
    # file names written in criteria / questions must be inputs or declared deliverables
    for t, where in rubric_texts:
        for m in file_mentions(t, known=known + declared):
            n = m.name
            if in_workspace(n) or in_search(n) or any(same_file(n, d) for d in declared):
                continue
            findings.append(
                make_finding(
                    "A3",
                    f"names {n!r}, which is neither a workspace file nor a deliverable named in "
                    "the instructions",
                    task_id=tid,
                    file=rubrics_path,
                    where=where,
                )
            )
    for d in deliverables:
        if any(glob_matches(g, d) for g, _ in rubric_globs):
            continue
        if _named_in(rubric_blob, d):
            continue
        findings.append(
            make_finding(
                "A4",
                f"deliverable {d!r} is not referred to by any rubric, check or criterion",
                task_id=tid,
                file=instr_path,
                where=d,
            )
        )

    # --- A2: workspace files never named ------------------------------------------------
    low = normalize(text)
    for rel in workspace:
        if rel == INSTRUCTIONS:
            continue
        pure = PurePosixPath(rel)
        names = {rel.lower(), pure.name.lower()}
        stem = pure.stem.lower()
        hit = any(name in low for name in names)
        if not hit and len(stem) >= 4:
            hit = re.search(rf"(?<![\w]){re.escape(stem)}(?![\w])", low) is not None
        if not hit:
            for parent in pure.parents:
                if str(parent) in ("", "."):
                    continue
                pn = parent.as_posix().lower()
                if re.search(rf"(?<![\w]){re.escape(pn)}(?:/| folder| directory)", low):
                    hit = True
                    break
        if not hit:
            findings.append(
                make_finding(
                    "A2",
                    f"workspace file {rel!r} is never named in the instructions",
                    task_id=tid,
                    file=display_path(task.workspace_dir / rel),
                    where=rel,
                )
            )

    # --- A7 / A8: hidden files in the workspace ----------------------------------------
    hidden_hashes: dict[str, str] = {}
    for name in (RUBRICS, TASK_CARD):
        p = task.root / name
        if p.is_file() and not p.is_symlink():
            hidden_hashes[sha256_file(p)] = name
    sol = task.root / SOLUTION
    if sol.is_dir() and not sol.is_symlink():
        for rel in _walk(sol):
            if rel.split("/", 1)[0] == "decoys":
                continue  # a decoy may be an input handed back unchanged
            hidden_hashes.setdefault(sha256_file(sol / rel), f"{SOLUTION}/{rel}")
    search_hashes: dict[str, str] = {}
    if task.search_dir is not None:
        for rel in task.search_files:
            search_hashes[sha256_file(task.search_dir / rel)] = f"{SEARCH}/{rel}"
    ws_hashes: dict[str, str] = {}
    for rel in workspace:
        p = task.workspace_dir / rel
        parts = [x.lower() for x in PurePosixPath(rel).parts]
        digest = sha256_file(p)
        ws_hashes[rel] = digest
        reason = None
        if parts[-1] in HIDDEN_NAMES:
            reason = f"a file named {PurePosixPath(rel).name!r} is hidden from agents"
        elif any(x in HIDDEN_DIRS for x in parts[:-1]):
            reason = "its path contains a hidden folder name"
        elif digest in hidden_hashes and rel != INSTRUCTIONS:
            reason = f"it is a byte-identical copy of {hidden_hashes[digest]}"
        if reason:
            findings.append(
                make_finding(
                    "A7", f"{rel!r}: {reason}", task_id=tid, file=display_path(p), where=rel
                )
            )
        elif digest in search_hashes:
            findings.append(
                make_finding(
                    "A8",
                    f"{rel!r} is a copy of {search_hashes[digest]}",
                    task_id=tid,
                    file=display_path(p),
                    where=rel,
                )
            )

    # --- A9 / A10: extraction -----------------------------------------------------------
    texts: dict[str, str] = {}
    for rel in workspace:
        p = task.workspace_dir / rel
        try:
            ex = extract(p, rel=rel, max_chars=cfg.max_chars)
        except Exception as exc:  # noqa: BLE001 - any extractor crash is a finding
            findings.append(
                make_finding(
                    "A9",
                    f"{rel!r}: extractor raised {type(exc).__name__}: {exc}",
                    task_id=tid,
                    file=display_path(p),
                    where=rel,
                )
            )
            continue
        errors = [d.message for d in ex.diagnostics if d.level == "error"]
        if errors:
            findings.append(
                make_finding(
                    "A9",
                    f"{rel!r}: " + "; ".join(errors),
                    task_id=tid,
                    file=display_path(p),
                    where=rel,
                )
            )
        elif ex.kind == "unsupported":
            findings.append(
                make_finding(
                    "A10",
                    f"{rel!r}: no extractor for this format ({ex.text.strip()})",
                    task_id=tid,
                    file=display_path(p),
                    where=rel,
                )
            )
        if ex.kind not in ("unsupported", "refused"):
            texts[rel] = ex.text

    # --- A5: rubric text in workspace files ---------------------------------------------
    gram_n = cfg.rubric_ngram
    file_grams = {rel: ngrams(words(t), gram_n) for rel, t in texts.items() if rel != INSTRUCTIONS}
    for t, where in rubric_texts:
        grams = ngrams(words(t), gram_n)
        if len(grams) < 3:
            continue
        for rel, fg in file_grams.items():
            share = containment(grams, fg)
            if share >= cfg.rubric_threshold:
                findings.append(
                    make_finding(
                        "A5",
                        f"{rel!r} holds {share:.0%} of the {n}-word sequences of {where} "
                        f"({_clip(t)!r})",
                        task_id=tid,
                        file=display_path(task.workspace_dir / rel),
                        where=rel,
                    )
                )

    # --- A6: reference answers in workspace files ---------------------------------------
    rn = cfg.reference_ngram
    refs = reference_files(task, cfg.extra_reference_dirs)
    baseline = ngrams(words(text), rn)
    if refs:
        for label, path in decoy_files(task):
            baseline |= ngrams(words(_extract_text(extract, path, label, cfg.max_chars)), rn)
    ws_ref_grams = {rel: ngrams(words(t), rn) for rel, t in texts.items()}
    for label, path in refs:
        grams = ngrams(words(_extract_text(extract, path, label, cfg.max_chars)), rn) - baseline
        if len(grams) < cfg.reference_min_ngrams:
            continue
        for rel, fg in ws_ref_grams.items():
            share = containment(grams, fg)
            if share >= cfg.reference_threshold:
                findings.append(
                    make_finding(
                        "A6",
                        f"{rel!r} holds {share:.0%} of the {rn}-word sequences of reference "
                        f"deliverable {label}",
                        task_id=tid,
                        file=display_path(task.workspace_dir / rel),
                        where=rel,
                    )
                )
    return findings


FORMAT_WORDS: dict[str, tuple[str, ...]] = {
    "xlsx": ("xlsx", "excel", "workbook", "spreadsheet"),
    "xls": ("xls", "excel", "workbook", "spreadsheet"),
    "csv": ("csv", "comma-separated"),
    "tsv": ("tsv", "tab-separated"),
    "docx": ("docx", "word document", "word file"),
    "doc": ("doc", "word document"),
    "pdf": ("pdf",),
    "png": ("png", "image", "chart", "figure", "plot"),
    "jpg": ("jpg", "jpeg", "image", "photo"),
    "jpeg": ("jpg", "jpeg", "image", "photo"),
    "svg": ("svg", "image", "chart", "figure"),
    "md": ("markdown", ".md"),
    "pptx": ("pptx", "powerpoint", "slide deck", "slides", "presentation"),
    "json": ("json",),
    "db": ("sqlite", "database", ".db"),
    "sqlite": ("sqlite", "database"),
    "txt": ("text file", ".txt", "plain text"),
    "ipynb": ("notebook", "ipynb"),
    "html": ("html", "web page"),
}
"""Words that describe a deliverable format in prose (for wildcard rubric/check globs)."""


def _glob_described(pattern: str, instructions: str) -> bool:
    """A wildcard glob (``charts/*.png``, ``*.xlsx``) is described by the instructions when
    they mention its literal folder (``charts/``) or its format (``PNG``, ``Excel workbook``)."""
    low = normalize(instructions)
    p = PurePosixPath(pattern.strip().lower().lstrip("./"))
    folder = p.parent.as_posix()
    if (
        folder not in ("", ".")
        and not is_glob(folder)
        and re.search(rf"(?<![\w]){re.escape(folder)}(?:/| folder| directory)", low)
    ):
        return True
    ext = p.suffix.lstrip(".")
    if ext and not is_glob(ext):
        for w in FORMAT_WORDS.get(ext, (ext,)):
            if re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", low):
                return True
    return False


def _extract_text(extract: object, path: Path, label: str, max_chars: int) -> str:
    """Extracted text of a reference file; '' when it cannot be read (it cannot leak then)."""
    try:
        ex = extract(path, rel=label, max_chars=max_chars)  # type: ignore[operator]
    except Exception:  # noqa: BLE001
        return ""
    return "" if ex.kind in ("unsupported", "refused") else ex.text


def _named_in(blob: str, name: str) -> bool:
    """Whether the base name of ``name`` occurs in ``blob`` (normalised) as a whole token."""
    base = re.escape(PurePosixPath(name.strip().lower()).name)
    return re.search(rf"(?<![\w.-]){base}(?![\w-])", blob) is not None


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
