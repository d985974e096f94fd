"""No module outside :mod:`jobbench.rundir` spells a run-directory path.

What counts, found with :mod:`ast` in every module of ``src/jobbench`` except
``jobbench/rundir/`` (docstrings are never looked at):

1. any string constant that is exactly a name of the layout's files (``lock.json``,
   ``trial.json``, ``trajectory.jsonl``, ``.run.lock``, ``.jobbench-probe``) or ends with the
   judge-usage suffix ``.usage.json``;
2. any string constant (or literal part of an f-string) that spells an epoch component the
   way paths and trial ids do: ``epoch-`` followed by a digit, ``*``, a formatted value or
   the end of the string (``epoch-N`` in prose is fine);
3. a folder name of the layout (``trials``, ``grades``, ``deliverables``, ``report``) used as
   path material: an operand of ``/``, an argument of ``Path``, ``joinpath``, ``glob``,
   ``rglob`` or ``os.path.join`` (or a ``/``-separated segment of one), or the value of a
   module-level constant;
4. any call of ``.rglob`` (recursive globbing is how records used to be picked up from
   deliverables; no reader of run directories may walk them that way).

``ALLOWED`` lists the few occurrences that are not about run directories, each with the
reason; an entry that no longer matches anything fails the test too, so the list stays
exact.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "jobbench"
STORE = SRC / "rundir"

FILE_NAMES = {"lock.json", "trial.json", "trajectory.jsonl", ".run.lock", ".jobbench-probe"}
DIR_NAMES = {"trials", "grades", "deliverables", "report"}
EPOCH = re.compile(r"(^|[^A-Za-z0-9_])epoch-(\d|\*|$)")
PATH_CALLS = {"Path", "joinpath", "glob", "rglob", "join", "PurePath", "PosixPath"}

ALLOWED: dict[tuple[str, str], str] = {
    (
        "gates/_decoy.py",
        "deliverables",
    ): "a decoy's folder solution/decoys/<name>/deliverables/ in a task",
    (
        "calibrate/_expected.py",
        "deliverables",
    ): "an expected-verdict set's folder <set>/deliverables/ in a task",
    (
        "calibrate/_expected.py",
        "rglob",
    ): "expected.json files under the solution/ folders of a dataset",
    ("agents/_simple.py", "rglob"): "the oracle's harness-made copy of a task's solution/ folder",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))  # attribute docstrings
    return out


def _strings(node: ast.AST) -> list[str]:
    """The literal text of a constant string or of an f-string's constant parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        ]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left) + _strings(node.right)
    return []


def _names_a_dir(text: str) -> str | None:
    for seg in text.split("/"):
        if seg in DIR_NAMES:
            return seg
    return None


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def findings(path: Path) -> list[tuple[str, str, int]]:
    """``(rule, offending text, line)`` for one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docs = _docstrings(tree)
    out: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            v = node.value
            if v in FILE_NAMES or v.endswith(".usage.json"):
                out.append(("file name", v, node.lineno))
            if EPOCH.search(v):  # f-string parts are constants too
                out.append(("epoch component", v, node.lineno))
        material: list[ast.AST] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            material += [node.left, node.right]
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in PATH_CALLS:
                material += list(node.args)
            if name == "rglob":
                out.append(("recursive glob", "rglob", node.lineno))
        for m in material:
            for text in _strings(m):
                d = _names_a_dir(text)
                if d:
                    out.append(("folder name as a path", d, m.lineno))
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for text in _strings(stmt.value):
                if text in DIR_NAMES:
                    out.append(("folder name as a constant", text, stmt.lineno))
    return out


def test_no_run_directory_path_outside_the_store() -> None:
    seen: set[tuple[str, str]] = set()
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(STORE):
            continue
        rel = path.relative_to(SRC).as_posix()
        for rule, text, line in findings(path):
            if (rel, text) in ALLOWED:
                seen.add((rel, text))
                continue
            bad.append(f"{rel}:{line}: {rule}: {text!r}")
    assert bad == [], "run-directory paths belong to jobbench.rundir:\n" + "\n".join(bad)
    assert set(ALLOWED) <= seen, f"stale ALLOWED entries: {sorted(set(ALLOWED) - seen)}"


def test_the_rules_catch_what_they_describe(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text('''"""Docstring: trials/<id>/trial.json and epoch-1 are fine here."""
from pathlib import Path
LOCK = "lock.json"
GRADES = "grades"
def f(run, tid, key, n):
    """``grades/<key>/epoch-<N>.json`` in a docstring is fine."""
    a = run / "trials" / tid / "deliverables"
    b = Path(run, "grades/" + key)
    c = run.rglob("*.json")
    d = f"{tid}/oracle@-/epoch-{n}"
    e = run.glob("oracle@*/epoch-*/deliverables")
    g = run / f"{key}.usage.json"
    msg = "see the epoch-N folders and the report"
    return {"trials": 1, "report": msg}
''')
    got = sorted((rule, text) for rule, text, _ in findings(sample))
    assert got == sorted(
        [
            ("file name", "lock.json"),
            ("folder name as a constant", "grades"),
            ("folder name as a path", "trials"),
            ("folder name as a path", "deliverables"),
            ("folder name as a path", "grades"),
            ("recursive glob", "rglob"),
            ("epoch component", "/oracle@-/epoch-"),
            ("epoch component", "oracle@*/epoch-*/deliverables"),
            ("folder name as a path", "deliverables"),
            ("file name", ".usage.json"),
        ]
    )
