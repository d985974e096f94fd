"""Comparing records across executors, independently of the code under test.

Office files (xlsx, docx, pptx) are zip archives whose member headers, and whose
``docProps/core.xml`` (``dcterms:created``/``dcterms:modified``), carry the time they were
written, so two runs of the same solution give different bytes. The comparison replaces each
deliverable's sha256 by a digest of its members' names and contents with those two
timestamps blanked (zip files, whose compressed size is then ignored too) or of its bytes
(others), and drops timestamps and timings.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

TRIAL_TIME_FIELDS = {"started_at", "finished_at", "wall_seconds"}
GRADE_TIME_FIELDS = {"created_at", "timings"}
NESTED_TIME_FIELDS = {"elapsed_s"}  # per LLM unit and reply


def _strip_times(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip_times(v) for k, v in x.items() if k not in NESTED_TIME_FIELDS}
    if isinstance(x, list):
        return [_strip_times(v) for v in x]
    return x


_CORE_TIMES = re.compile(rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:)")


def content_digest(path: Path) -> str:
    """sha256 of the bytes, or for a zip archive of its sorted (name, content) members."""
    h = hashlib.sha256()
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for name in sorted(z.namelist()):
                data = z.read(name)
                if name == "docProps/core.xml":
                    data = _CORE_TIMES.sub(rb"\1\2", data)
                h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        return "zip:" + h.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _deliverables(items: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    out = []
    for d in items:
        p = folder / d["path"]
        if zipfile.is_zipfile(p):  # compressed size depends on the timestamps inside
            out.append({**d, "sha256": content_digest(p), "size": None})
        else:  # plain files must be byte-identical to their manifest
            assert hashlib.sha256(p.read_bytes()).hexdigest() == d["sha256"], p
            out.append(dict(d))
    return out


def trial_records(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``{trial_id: trial.json minus times, deliverable digests by content}``."""
    out = {}
    for p in sorted((run_dir / "trials").rglob("trial.json")):
        d = json.loads(p.read_text())
        d = {k: v for k, v in d.items() if k not in TRIAL_TIME_FIELDS}
        d["deliverables"] = _deliverables(d["deliverables"], p.parent / "deliverables")
        out[d["trial_id"]] = d
    return out


def grade_records(run_dir: Path, config: Any = None) -> dict[str, dict[str, Any]]:
    """``{trial_id: GradeRecord JSON minus timestamps and timings (also the LLM units'
    elapsed_s)}`` under ``config``'s judge key (default: checks only). ``inputs_digest`` (a
    function of the deliverable bytes) is checked against the trial's own record, then
    dropped."""
    from jobbench.judge import JudgeConfig, inputs_digest

    config = config or JudgeConfig()
    out = {}
    base = run_dir / "grades" / config.key
    for p in sorted(base.rglob("*.json")):
        d = json.loads(p.read_text())
        trial = json.loads((run_dir / "trials" / d["trial_id"] / "trial.json").read_text())
        manifest = [(x["path"], x["sha256"]) for x in trial["deliverables"]]
        assert d["inputs_digest"] == inputs_digest(trial["task_digest"], manifest, config), p
        d = _strip_times(
            {k: v for k, v in d.items() if k not in GRADE_TIME_FIELDS and k != "inputs_digest"}
        )
        folder = run_dir / "trials" / d["trial_id"] / "deliverables"
        d["deliverables"] = _deliverables(d.get("deliverables", []), folder)
        out[d["trial_id"]] = d
    return out
