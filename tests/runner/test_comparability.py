"""The report's "Comparable with the published leaderboard" section: a default run names
each of its deviations (in report.html, leaderboard.md and summary.json alike), a run
under ``--protocol public`` graded by the public rule has none of the agent ones, and only
a run matching the leaderboard in every respect is called comparable.

The expected sentences are the published settings written out here (Job-Bench/job-bench-eval
``eval/run_benchmark_*.sh``, ``eval/run_judge.sh``), not read from the code under test."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

from test_protocol import fake_cli
from typer.testing import CliRunner

from jobbench.cli import app

sys.path.insert(0, str(Path(__file__).parents[1] / "judge"))
from judge_helpers import TableJudge  # noqa: E402

from jobbench.testing import FakeOpenAIServer  # noqa: E402

JUDGE_VARS = (
    "JUDGE_MODEL",
    "JUDGE_API_BASE",
    "JUDGE_API_KEY",
    "JOBBENCH_JUDGE_MODEL",
    "JOBBENCH_JUDGE_API_BASE",
    "JOBBENCH_JUDGE_MODE",
    "JOBBENCH_JUDGE_CONFIG",
)


def invoke(args: list[str], env: dict[str, str] | None = None):
    r = CliRunner().invoke(app, args, env=env)
    assert r.exit_code == 0, r.output
    return r


def sections(run_dir: Path) -> tuple[dict, str, str]:
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    verdicts = {c["label"]: c["comparability"] for c in summary["configurations"]}
    md = (run_dir / "report" / "leaderboard.md").read_text()
    page = html.unescape((run_dir / "report" / "report.html").read_text())
    return verdicts, md, page


def test_a_default_run_names_each_deviation(tmp_path, dataset, monkeypatch):
    for name in JUDGE_VARS + ("OPENAI_BASE_URL",):
        monkeypatch.delenv(name, raising=False)
    bins = {
        a: fake_cli(tmp_path, a, {"write": {"memo.md": "done\n"}}, version=v)
        for a, v in (("claude", "2.1.332"), ("codex", "0.171.0"), ("opencode", "1.18.33"))
    }
    run_dir = tmp_path / "runs" / "default"
    invoke(
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "default",
            "--no-progress",
            "--agent",
            "claude-code@claude-sonnet-4-6",
            "--agent",
            "codex@gpt-5.4",
            "--agent",
            "opencode@openai/gpt-5.4",
            "--agent-bin",
            f"claude-code={bins['claude']}",
            "--agent-bin",
            f"codex={bins['codex']}",
            "--agent-bin",
            f"opencode={bins['opencode']}",
        ]
    )
    verdicts, md, page = sections(run_dir)
    split = next((run_dir / "trials").iterdir()).name  # the fixture's split folder
    common = [
        "prompt: the agent is confined to the task folder and output directory and not allowed to "
        "search online "
        "(the published prompt allows searching online for reference files)",
    ]
    run_level = [
        "judge: programmatic checks only (published: the grok-4.3 LLM judge, whose own "
        "rubric_passed decides: "
        "--mode official)",
        f"split: {split} (the leaderboard: main)",
        "tasks: 2 (the leaderboard: the 65 tasks of the main split)",
    ]
    expected = {
        "claude-code@claude-sonnet-4-6": common
        + ["turn cap: --max-turns 100 (published: no cap)"]
        + run_level,
        "codex@gpt-5.4": common
        + ["reasoning effort: the CLI default (published: xhigh for this model)"]
        + run_level,
        "opencode@openai/gpt-5.4": common
        + [
            "time limit: 3,600 s per attempt (published: 7,200 s)",
            "retries: 0 after a timeout (published: 1, partial output kept)",
            "output cap: 32,000 tokens (published: OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX=131072)",
            "provider timeouts: OpenCode's defaults (published: request timeout off, chunk timeout "
            "300 s)",
            "permissions: every tool and every external directory allowed, plugins skipped "
            "(--pure) (published: "
            "external directories denied except /tmp; plugins load)",
            "CLI version: 1.18.33 (published: 1.14.18)",
        ]
        + run_level,
    }
    assert {label: v["deviations"] for label, v in verdicts.items()} == expected
    for label, v in verdicts.items():
        assert v["comparable"] is False and v["protocol"] == "jobbench"
        assert v["verdict"] == f"not comparable ({len(expected[label])} deviations)"
        assert (v["judge_mode"], v["judge_model"], v["tasks"], v["missing_tasks"]) == (
            "checks",
            None,
            2,
            [],
        )
        for d in expected[label]:  # the same sentences in the Markdown and the HTML report
            assert d in page, d
            assert d.replace("*", "\\*").replace("[", "\\[").replace("]", "\\]") in md or d in md, d
    assert verdicts["opencode@openai/gpt-5.4"]["cli_version"] == "1.18.33"
    assert verdicts["opencode@openai/gpt-5.4"]["published_cli_version"] == "1.14.18"
    assert "## Comparable with the published leaderboard" in md
    assert 'id="comparability">Comparable with the published leaderboard</h2>' in page


def _main_dataset(root: Path, n: int) -> Path:
    """``n`` one-rubric tasks in a ``main`` split."""
    for i in range(n):
        d = root / "main" / f"occupation_{i % 5}" / f"task{i // 5 + 1}"
        (d / "task_folder").mkdir(parents=True)
        (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Write memo.md.")
        (d / "task_card.md").write_text("card")
        (d / "RUBRICS.json").write_text(
            json.dumps({"rubrics": [{"rubric": "Memo", "weight": 1, "criterion": ["Has a memo"]}]})
        )
    return root


def _public_run(tmp_path: Path, dataset: Path, name: str, version: str) -> Path:
    exe = fake_cli(tmp_path, "opencode", {"write": {"memo.md": "done\n"}}, version=version)
    table = TableJudge({"Has a memo": ("pass", "done")})
    with FakeOpenAIServer(table) as srv:
        env = {
            "JUDGE_API_BASE": srv.base_url,
            "JUDGE_API_KEY": "k",
            "JUDGE_MODEL": "x-ai/grok-4.3",
            "JOBBENCH_JUDGE_MODE": "official",
            "JOBBENCH_JUDGE_CACHE": str(tmp_path / f"{name}.sqlite"),
        }
        invoke(
            [
                "run",
                str(dataset),
                "--runs-dir",
                str(tmp_path / "runs"),
                "--run-name",
                name,
                "--no-progress",
                "--protocol",
                "public",
                "-j",
                "4",
                "--agent",
                "opencode@openai/gpt-5.4",
                "--agent-bin",
                f"opencode={exe}",
            ],
            env=env,
        )
    return tmp_path / "runs" / name


def test_a_public_run_on_the_leaderboard_task_set_is_comparable(tmp_path, monkeypatch):
    for name in JUDGE_VARS:
        monkeypatch.delenv(name, raising=False)
    run_dir = _public_run(tmp_path, _main_dataset(tmp_path / "data65", 65), "lb", "1.14.18")
    verdicts, md, page = sections(run_dir)
    v = verdicts["opencode@openai/gpt-5.4"]
    assert v["deviations"] == [] and v["comparable"] is True and v["verdict"] == "comparable"
    assert (v["protocol"], v["judge_mode"], v["judge_model"], v["splits"], v["tasks"]) == (
        "public",
        "official",
        "x-ai/grok-4.3",
        ["main"],
        65,
    )
    assert "**opencode@openai/gpt-5.4**: comparable." in md
    # the same run on fewer tasks, with another OpenCode version: exactly those deviations
    run_dir = _public_run(tmp_path, _main_dataset(tmp_path / "data3", 3), "small", "1.18.33")
    verdicts, _, _ = sections(run_dir)
    assert verdicts["opencode@openai/gpt-5.4"]["deviations"] == [
        "CLI version: 1.18.33 (published: 1.14.18)",
        "tasks: 3 (the leaderboard: the 65 tasks of the main split)",
    ]
