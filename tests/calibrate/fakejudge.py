"""A scripted judge that knows the truth: it answers the criteria a JobBench prompt asks
about with the verdicts of the deliverable set's ``expected.json``, optionally contradicting
a chosen set of criteria. Shared by the calibrate tests."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

from jobbench.tasks import load_dataset
from jobbench.testing import ScriptedReply, chat_reply

MARKER = "zz_calibration_marker.txt"
PROMPT_TOKENS, COMPLETION_TOKENS = 1000, 100


def _code(i: int) -> str:
    letters = string.ascii_lowercase
    return "calibrationmarker" + letters[i // 26] + letters[i % 26]


class Truth:
    """What the server knows: marker → (occupation, decoy, task, expected verdicts).

    Args:
        root: a copy of the sample split; every decoy's ``deliverables/`` gets a marker file
            (letters only) so that the server can tell which set a prompt shows.
        errors: (occupation, decoy, rubric, criterion) the model ``wrong_model`` answers wrongly.
        wrong_model: the model name that errs.
    """

    def __init__(self, root: Path, errors: dict | None = None, wrong_model: str = "judge-wrong"):
        self.errors = dict(errors or {})
        self.wrong_model = wrong_model
        ds = load_dataset(root)
        self.tasks = {t.occupation: t for t in ds.tasks}
        self.sets: dict[str, tuple[str, str, dict[tuple[int, int], bool]]] = {}
        i = 0
        for occ, task in sorted(self.tasks.items()):
            for d in sorted((task.root / "solution" / "decoys").iterdir()):
                raw = json.loads((d / "expected.json").read_text())
                verdicts = {
                    (r["index"], j): v for r in raw["rubrics"] for j, v in enumerate(r["criteria"])
                }
                code = _code(i)
                i += 1
                (d / "deliverables" / MARKER).write_text(code + "\n")
                self.sets[code] = (occ, d.name, verdicts)
        self.problems: list[str] = []

    def answer(
        self, model: str, occ: str, decoy: str, verdicts: dict, r: int, j: int
    ) -> dict[str, Any]:
        want = verdicts[(r, j)]
        if model == self.wrong_model and (occ, decoy, r, j) in self.errors:
            want = not want
        word = "pass" if want else "fail"
        return {
            "index": j,
            "reasoning": f"{model} on {decoy} {r}.{j}: {word}",
            "evidence": "",
            "verdict": word,
        }

    def marker_of(self, occ: str, decoy: str) -> str:
        return next(c for c, (o, d, _) in self.sets.items() if (o, d) == (occ, decoy))

    def reply(self, req: dict[str, Any]) -> ScriptedReply:
        model = req.get("model", "")
        content = req["messages"][-1]["content"]
        if isinstance(content, str):  # a text-only prompt is one string: the rubric part
            heads = [h.start() for h in re.finditer(r"(?m)^## Rubric", content)]  # is last
            texts = [content, content[heads[-1] :] if heads else content]
        else:
            texts = [p["text"] for p in content if p.get("type") == "text"]
        m = re.search(
            re.escape(f"=== FILE: {MARKER} ===") + r"\n(calibrationmarker[a-z]{2})", texts[0]
        )
        if not m or m.group(1) not in self.sets:
            self.problems.append("no marker in a prompt")
            return ScriptedReply(status=400, body={"error": {"message": "no marker"}})
        occ, decoy, verdicts = self.sets[m.group(1)]
        task = self.tasks[occ]
        tail = texts[-1]
        if tail.startswith("## Rubrics\n"):  # task mode: every rubric in '### Rubric i' blocks
            out = []
            parts = re.split(r"^### Rubric (\d+)\n", tail, flags=re.M)
            for idx, body in zip(parts[1::2], parts[2::2]):
                r = int(idx)
                asked = [int(j) for j in re.findall(r"^Criterion (\d+): ", body, flags=re.M)]
                crits = [self.answer(model, occ, decoy, verdicts, r, j) for j in asked]
                out.append(
                    {
                        "index": r,
                        "criteria": crits,
                        "rubric_passed": all(c["verdict"] == "pass" for c in crits),
                    }
                )
            return chat_reply(
                json.dumps({"rubrics": out}),
                prompt_tokens=PROMPT_TOKENS,
                completion_tokens=COMPLETION_TOKENS,
                model=model,
            )
        # rubric mode: '## Rubric\n<question>' then 'Criterion j: <text>' lines
        lines = dict(
            (int(j), t) for j, t in re.findall(r"^Criterion (\d+): (.*)$", tail, flags=re.M)
        )
        hits = [
            rb
            for rb in task.rubrics
            if tail.startswith(f"## Rubric\n{rb.question}")
            and all(
                j < len(rb.criteria) and rb.criteria[j].text.startswith(t) for j, t in lines.items()
            )
        ]
        if len(hits) != 1:
            self.problems.append(
                f"{occ}: cannot tell the rubric of a prompt ({len(hits)} candidates)"
            )
            return ScriptedReply(status=400, body={"error": {"message": "which rubric?"}})
        r = hits[0].index
        crits = [self.answer(model, occ, decoy, verdicts, r, j) for j in sorted(lines)]
        body = {
            "criteria": crits,
            "overall_reasoning": "ok",
            "rubric_passed": all(c["verdict"] == "pass" for c in crits),
        }
        return chat_reply(
            json.dumps(body),
            prompt_tokens=PROMPT_TOKENS,
            completion_tokens=COMPLETION_TOKENS,
            model=model,
        )
