"""The verdict cache is keyed by the endpoint's identity (base URL and the model id the
server reports), not by the model name alone; ``cache_share`` shares it on purpose."""

from __future__ import annotations

from pathlib import Path

from judge_helpers import TableJudge, make_run, make_task
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.judge import JudgeConfig, grade_run
from jobbench.judge._endpoint import endpoint_identity, served_model_id
from jobbench.testing import FakeOpenAIServer

RUBRICS = [{"rubric": "Totals", "weight": 1, "criterion": ["States the total of 42"]}]
TABLE = {"States the total of 42": ("pass", "total is 42")}


def _run(tmp: Path, name: str) -> Path:
    task = make_task(tmp / name, RUBRICS)
    return make_run(
        tmp / name / "run",
        tmp / name / "dataset",
        [
            {
                "task": task,
                "agent": "a",
                "model": "m",
                "epoch": 1,
                "files": {"r.md": "The total is 42."},
            }
        ],
    )


def _cfg(srv: FakeOpenAIServer, cache: Path, **extra) -> JudgeConfig:
    return JudgeConfig(
        model="llama-3", api_base=srv.base_url, api_key="k", cache_path=cache, **extra
    )


def test_two_endpoints_with_the_same_model_name_do_not_share_verdicts(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    models = [{"id": "llama-3"}]
    with (
        FakeOpenAIServer(TableJudge(TABLE), models=models) as a,
        FakeOpenAIServer(TableJudge(TABLE), models=models) as b,
    ):
        grade_run(_run(tmp_path, "one"), _cfg(a, cache), progress=False)
        assert a.calls == 1
        # the same inputs graded by another server that also calls its model llama-3
        grade_run(_run(tmp_path, "two"), _cfg(b, cache), progress=False)
        assert b.calls == 1
        # the same server again: served from the cache
        grade_run(_run(tmp_path, "three"), _cfg(a, cache), progress=False)
        assert a.calls == 1
        # an explicit share name: both endpoints read and write one scope
        grade_run(
            _run(tmp_path, "four"), _cfg(a, cache, cache_share="llama-3-weights"), progress=False
        )
        assert a.calls == 2
        grade_run(
            _run(tmp_path, "five"), _cfg(b, cache, cache_share="llama-3-weights"), progress=False
        )
        assert b.calls == 1


def test_endpoint_identity_uses_the_served_model_id(tmp_path: Path) -> None:
    # vLLM lists the weights it loaded as the entry's root
    with FakeOpenAIServer(
        [], models=[{"id": "llama-3", "root": "/weights/llama-3-8b"}, {"id": "other"}]
    ) as srv:
        cfg = JudgeConfig(model="llama-3", api_base=srv.base_url + "/", api_key="k")
        assert endpoint_identity(cfg) == {
            "api_base": srv.base_url,
            "served_model": "/weights/llama-3-8b",
        }
    with FakeOpenAIServer([], models=[{"id": "served-name"}]) as srv:  # one model: that one
        assert served_model_id(JudgeConfig(model="llama-3", api_base=srv.base_url)) == "served-name"
    with FakeOpenAIServer([], models=None) as srv:  # no listing: the base URL alone
        cfg = JudgeConfig(model="llama-3", api_base=srv.base_url)
        assert endpoint_identity(cfg) == {"api_base": srv.base_url, "served_model": None}
    assert endpoint_identity(JudgeConfig(model="x", cache_share="w")) == {"shared": "w"}


def test_cache_share_option_and_variable(tmp_path: Path) -> None:
    from jobbench.judge import load_judge_config

    assert load_judge_config(env={"JOBBENCH_JUDGE_CACHE_SHARE": "w"}).cache_share == "w"
    toml = tmp_path / "judge.toml"
    toml.write_text('[judge]\ncache_share = "w2"\n')
    assert load_judge_config(toml, env={}).cache_share == "w2"
    cache = tmp_path / "cache.sqlite"
    runner = CliRunner()
    with FakeOpenAIServer(TableJudge(TABLE)) as a, FakeOpenAIServer(TableJudge(TABLE)) as b:
        for srv, name in ((a, "one"), (b, "two")):
            res = runner.invoke(
                app,
                [
                    "grade",
                    str(_run(tmp_path, name)),
                    "--no-progress",
                    "--judge-model",
                    "llama-3",
                    "--api-base",
                    srv.base_url,
                    "--cache-path",
                    str(cache),
                    "--judge-cache-share",
                    "w",
                ],
                env={"JUDGE_API_KEY": "k"},
            )
            assert res.exit_code == 0, res.output
        assert (a.calls, b.calls) == (1, 0)
