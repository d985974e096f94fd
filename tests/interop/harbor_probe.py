"""Run by the tests with an interpreter that has the real ``harbor`` package (Python >= 3.12;
see tests/interop/conftest.py). It never imports jobbench.

    python harbor_probe.py tasks DIR...         load each exported task with Harbor's models
    python harbor_probe.py job SPEC.json JOB     write a Harbor job directory with its models

``tasks`` prints one JSON object: task folder → what Harbor made of it (or the error).
``job`` reads a spec (trials: task folder, agent, model, output folder to collect, exception,
reward, timings, token usage) and writes ``JOB/config.json``, ``JOB/result.json`` and one
``JOB/<trial_name>/`` per trial (``config.json``, ``result.json``, ``artifacts/…``,
``verifier/reward.json``) exactly as Harbor's ``JobConfig``/``JobResult``/``TrialConfig``/
``TrialResult`` serialise them.
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import uuid4


def _missing_keys(raw: Any, dumped: Any, path: str = "") -> list[str]:
    """Keys of ``raw`` (the TOML as written) that the validated model dropped."""
    out: list[str] = []
    if isinstance(raw, dict):
        if not isinstance(dumped, dict):
            return [path or "(top level)"]
        for k, v in raw.items():
            here = f"{path}.{k}" if path else k
            if k not in dumped:
                out.append(here)
            else:
                out.extend(_missing_keys(v, dumped[k], here))
    return out


def probe_tasks(dirs: list[str]) -> dict[str, Any]:
    from harbor.models.task.config import TaskConfig
    from harbor.models.task.task import Task
    from harbor.models.task.verifier_mode import (
        resolve_task_verifier_mode,
        resolve_verifier_environment_definition,
    )

    out: dict[str, Any] = {}
    for d in dirs:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                task = Task(Path(d))
                text = task.paths.config_path.read_text()
                config = TaskConfig.model_validate_toml(text)
                definition = resolve_verifier_environment_definition(task.config, task.paths)
            raw = tomllib.loads(text)
            dumped = config.model_dump(mode="json")
            again = TaskConfig.model_validate_toml(config.model_dump_toml())
            out[d] = {
                "ok": True,
                "name": task.name,
                "instruction_chars": len(task.instruction),
                "verifier_mode": resolve_task_verifier_mode(task.config).value,
                "verifier_dir": definition.directory.name if definition else None,
                "verifier_bundled": definition.bundled_tests if definition else None,
                "agent_network": task.config.environment.network_mode.value,
                "verifier_network": task.config.verifier.environment.network_mode.value,
                "artifacts": [a if isinstance(a, str) else a.source for a in config.artifacts],
                "solve": task.paths.discovered_solve_path.name
                if task.paths.discovered_solve_path
                else None,
                "test": task.paths.discovered_test_path.name
                if task.paths.discovered_test_path
                else None,
                "dropped_keys": _missing_keys(raw, dumped),
                "round_trip": again == config,
                "warnings": [str(w.message) for w in caught],
                "metadata": config.metadata,
            }
        except Exception as exc:  # reported to the test, which fails on it
            out[d] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return out


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def write_job(spec: dict[str, Any], job_dir: Path) -> None:
    from harbor.models.agent.context import AgentContext
    from harbor.models.job.config import JobConfig
    from harbor.models.job.result import JobResult, JobStats
    from harbor.models.task.id import LocalTaskId
    from harbor.models.task.task import Task
    from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig
    from harbor.models.trial.paths import TrialPaths
    from harbor.models.trial.result import (
        AgentInfo,
        ExceptionInfo,
        ModelInfo,
        TimingInfo,
        TrialResult,
    )
    from harbor.models.verifier.result import VerifierResult

    job_dir.mkdir(parents=True)
    job_id = uuid4()
    job_config = JobConfig(job_name=spec["job_name"], jobs_dir=job_dir.parent)
    (job_dir / "config.json").write_text(job_config.model_dump_json(indent=4))
    results = []
    for t in spec["trials"]:
        task_dir = Path(t["task_dir"]).resolve()
        task = Task(task_dir)
        trial_name = t["trial_name"]
        paths = TrialPaths(job_dir / trial_name)
        paths.mkdir()
        model = t.get("model")
        config = TrialConfig(
            task=TaskConfig(path=task_dir),
            trial_name=trial_name,
            trials_dir=job_dir,
            agent=AgentConfig(
                name=t["agent"],
                model_name=f"{model['provider']}/{model['name']}" if model else None,
            ),
            job_id=job_id,
        )
        (paths.config_path).write_text(config.model_dump_json(indent=4))
        if t.get("output_dir"):
            dest = paths.host_artifact_path("main", t["artifact_source"])
            shutil.copytree(t["output_dir"], dest)
        exc = t.get("exception")
        reward = t.get("reward")
        if reward is not None:
            paths.reward_json_path.write_text(json.dumps(reward))
        tokens = t.get("tokens")
        timing = {
            k: TimingInfo(started_at=_dt(a), finished_at=_dt(b))
            for k, (a, b) in t["timings"].items()
        }
        result = TrialResult(
            task_name=task.name,
            trial_name=trial_name,
            trial_uri=paths.trial_dir.as_uri(),
            task_id=LocalTaskId(path=task_dir),
            task_checksum="0" * 64,
            config=config,
            agent_info=AgentInfo(
                name=t["agent"],
                version=t.get("version", "1.0.0"),
                model_info=ModelInfo(name=model["name"], provider=model["provider"])
                if model
                else None,
            ),
            agent_result=AgentContext(**tokens) if tokens else None,
            verifier_result=VerifierResult(rewards=reward) if reward is not None else None,
            exception_info=ExceptionInfo(
                exception_type=exc["type"],
                exception_message=exc["message"],
                exception_traceback="Traceback (most recent call last):\n",
                occurred_at=_dt(exc["occurred_at"]),
            )
            if exc
            else None,
            started_at=_dt(t["started_at"]),
            finished_at=_dt(t["finished_at"]),
            **timing,
        )
        paths.result_path.write_text(result.model_dump_json(indent=4))
        results.append(result)
    job = JobResult(
        id=job_id,
        started_at=min(r.started_at for r in results),
        finished_at=max(r.finished_at for r in results),
        n_total_trials=len(results),
        stats=JobStats.from_trial_results(results),
        trial_results=results,
    )
    (job_dir / "result.json").write_text(job.model_dump_json(indent=4))


def main() -> None:
    if sys.argv[1] == "tasks":
        print(json.dumps(probe_tasks(sys.argv[2:])))
    elif sys.argv[1] == "job":
        write_job(json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3]))
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")


if __name__ == "__main__":
    main()
