"""Record what the real ``codex``, ``opencode`` and ``claude`` CLIs print when their model
endpoint fails, for the unit tests' fake executables (tests/runner/test_cli_recorded.py).

    python scripts/record_cli_failures.py PREFIX [CLI[:SCENARIO] …]

PREFIX is an npm prefix holding the CLIs (``node_modules/.bin/{codex,opencode,claude}``, as
``scripts/verify_cli_agents.sh --record`` installs them). Each scenario runs one trial of
the adapter through :func:`jobbench.runner.run_trials` (sandbox included, no retries)
against the scripted server of ``tests/runner/fake_model_apis.py`` on 127.0.0.1 and writes
``tests/runner/<cli>_recorded/<scenario>/``:

* ``stdout.jsonl``: the lines the CLI printed on standard output, in order (each JSON event
  as the adapter decoded it, re-serialised; other lines as printed); string values longer
  than 1500 characters are cut to 300 plus ``…[trimmed]``;
* ``stderr.txt``: its standard error (the last 20,000 characters the runner keeps);
* ``outcome.json``: exit code, whether the time limit ended it, the time limit, the trial's
  status and error as classified by the code that recorded it, and what the server
  answered (count, statuses, paths).

Scenarios (every model request gets the same answer):

* ``not_found_404``: HTTP 404 ``{"detail": "Not Found"}`` (FastAPI's answer for a route
  the server lacks: the API path is wrong);
* ``auth_401``: HTTP 401 with the provider's invalid-key error body;
* ``model_not_found``: HTTP 404 with the provider's unknown-model error body;
* ``zero_tokens``: HTTP 200 with an empty reply (no text, no tool call) and zero usage.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "runner"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(ROOT / "src"))

from fake_model_apis import FakeModelAPI, Turn  # noqa: E402
from runner_helpers import build_dataset  # noqa: E402

from jobbench.agents import AgentLimits, ModelSettings  # noqa: E402
from jobbench.runner import AgentSpec, RunConfig, run_trials  # noqa: E402

#: adapter name -> (binary under node_modules/.bin, recordings directory)
CLIS = {
    "codex": ("codex", "codex_recorded"),
    "opencode": ("opencode", "opencode_recorded"),
    "claude-code": ("claude", "claude_code_recorded"),
}

MODEL = "fake-model"


def error_body(scenario: str, api: str) -> tuple[int, dict[str, Any]]:
    """The status and error body of ``scenario`` in the wire format of ``api``
    (OpenAI's error object for ``responses``/``chat``, Anthropic's for ``messages``)."""
    if scenario == "not_found_404":
        return 404, {"detail": "Not Found"}
    if api == "messages":
        if scenario == "auth_401":
            return 401, {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            }
        return 404, {
            "type": "error",
            "error": {"type": "not_found_error", "message": f"model: {MODEL}"},
        }
    if scenario == "auth_401":
        return 401, {
            "error": {
                "message": "Incorrect API key provided: sk-local. You can find your API key at "
                "http://127.0.0.1/keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    return 404, {
        "error": {
            "message": f"The model `{MODEL}` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        }
    }


def script_for(scenario: str):
    def script(api: str, req: dict) -> Turn:
        if scenario == "zero_tokens":
            return Turn(text=None, input_tokens=0, output_tokens=0)
        status, body = error_body(scenario, api)
        return Turn(status=status, body=body)

    return script


#: scenario -> the trial's time limit (s)
SCENARIOS = {
    "not_found_404": 120.0,
    "auth_401": 120.0,
    "model_not_found": 120.0,
    "zero_tokens": 45.0,
}


def trim(v: Any) -> Any:
    if isinstance(v, str) and len(v) > 1500:
        return v[:300] + "…[trimmed]"
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    if isinstance(v, list):
        return [trim(x) for x in v]
    return v


def version_of(prefix: Path, binary: str) -> str:
    from jobbench.agents import cli_version

    return cli_version(prefix / "node_modules" / ".bin" / binary) or "?"


def record(prefix: Path, agent: str, scenario: str) -> None:
    binary, dirname = CLIS[agent]
    out = TESTS / dirname / scenario
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"cli-record-{agent}-{scenario}-"))
    timeout = SCENARIOS[scenario]
    os.environ["JOBBENCH_API_KEY"] = "sk-local"
    with FakeModelAPI(script_for(scenario)) as srv:
        base = srv.base_url
        if agent == "claude-code":  # ANTHROPIC_BASE_URL: Claude Code appends /v1/messages
            base = base.removesuffix("/v1")
        spec = AgentSpec(
            agent,
            MODEL,
            ModelSettings(),
            {"executable": str(prefix / "node_modules" / ".bin" / binary), "api_base": base},
        )
        cfg = RunConfig(
            dataset=build_dataset(tmp / "data"),
            agents=[spec],
            run_dir=tmp / "runs",
            task_glob="*task2",
            limits=AgentLimits(timeout=timeout),
            infra_retries=0,
        )
        summary = run_trials(cfg)
    rec = summary.records[0]
    traj = [
        json.loads(line)
        for line in (summary.run_dir / "trials" / rec.trial_id / "trajectory.jsonl")
        .read_text()
        .splitlines()
    ]
    lines = []
    for e in traj:
        if e["type"] == "cli_event":
            lines.append(json.dumps(trim(e["event"]), ensure_ascii=False))
        elif e["type"] == "cli_output":
            lines.append(e["text"])
    (out / "stdout.jsonl").write_text("".join(line + "\n" for line in lines))
    exit_ev = next(e for e in traj if e["type"] == "cli_exit")
    (out / "stderr.txt").write_text(exit_ev["stderr"])
    statuses: dict[str, int] = {}
    for s in srv.served:
        statuses[str(s.turn.status)] = statuses.get(str(s.turn.status), 0) + 1
    outcome = {
        "cli": agent,
        "cli_version": version_of(prefix, binary),
        "recorded": datetime.date.today().isoformat(),
        "time_limit": timeout,
        "exit_code": exit_ev["exit_code"],
        "timed_out": exit_ev["timed_out"],
        "seconds": exit_ev["seconds"],
        "classified_as": {"status": rec.status.value, "error": rec.error},
        "served": {
            "requests": len(srv.served),
            "statuses": statuses,
            "paths": sorted({s.path for s in srv.served}),
            "other": sorted({f"{m} {p}" for m, p in srv.other}),
        },
    }
    (out / "outcome.json").write_text(json.dumps(outcome, indent=2, ensure_ascii=False) + "\n")
    line = f"{agent} {scenario}: exit {exit_ev['exit_code']} -> {rec.status.value} {rec.error}"
    print(line[:400])


def main(argv: list[str]) -> None:
    prefix = Path(argv[0]).resolve()
    wanted = argv[1:] or [f"{a}:{s}" for a in CLIS for s in SCENARIOS]
    for item in wanted:
        agent, _, scenario = item.partition(":")
        for s in [scenario] if scenario else list(SCENARIOS):
            record(prefix, agent, s)


if __name__ == "__main__":
    main(sys.argv[1:])
