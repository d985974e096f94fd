"""`jobbench attention`: attention counts, capability sources, correlations vs an independent computation."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.records import GradeRecord, RubricGrade

runner = CliRunner()


def ranks(values: list[float]) -> list[float]:
    return [sum(v < x for v in values) + (sum(v == x for v in values) + 1) / 2 for x in values]


def independent(x: list[float], y: list[float]) -> tuple[float, float]:
    return statistics.correlation(x, y), statistics.correlation(ranks(x), ranks(y))


def test_mini_counts_and_correlations(mini_data: Path) -> None:
    base = [
        "attention",
        "--data-dir",
        str(mini_data),
        "--crosswalk",
        str(mini_data / "crosswalk.csv"),
        "--config",
        "m1",
        "--config",
        "mean",
        "--boot",
        "50",
        "--json",
    ]
    res = runner.invoke(app, base)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    counts = {
        a["slug"]: (a["papers"], a["companies"], a["n_tasks_papers"]) for a in out["attention"]
    }
    assert counts == {"alpha": (4, 1, 3), "beta": (1, 3, 1), "delta": (2, 2, 1)}
    assert out["capability"]["mean"] == {"alpha": 30.0, "beta": 35.0, "delta": 20.0}
    m1, mean = out["results"]
    assert m1["slugs"] == ["alpha", "beta", "delta"] and m1["label"] == "Model One (Codex CLI)"
    p, s = independent([10, 30, 20], [4, 1, 2])
    assert m1["papers"]["pearson"]["r"] == pytest.approx(p) and m1["papers"]["spearman"][
        "r"
    ] == pytest.approx(s)
    p, s = independent([30, 35, 20], [1, 3, 2])
    assert mean["companies"]["pearson"]["r"] == pytest.approx(p)
    assert mean["companies"]["spearman"]["r"] == pytest.approx(s)

    rated = json.loads(runner.invoke(app, base + ["--tasks", "rated"]).stdout)
    assert {a["slug"]: a["papers"] for a in rated["attention"]} == {
        "alpha": 3,
        "beta": 1,
        "delta": 2,
    }

    # m2 has no delta score: only two occupations, too few to correlate
    res = runner.invoke(app, base[:5] + ["--config", "Model Two"])
    assert res.exit_code == 2 and "has scores for only 2 of the 3 occupations" in res.stderr
    res = runner.invoke(app, base[:5] + ["--config", "nope"])
    assert (
        res.exit_code == 2
        and "no configuration 'nope'; choose from: all, mean, m1, m2" in res.stderr
    )


def _grade(
    trial_id: str, weights_passed: list[tuple[float, bool]], status: str = "complete"
) -> GradeRecord:
    rubrics = [
        RubricGrade(index=i, id=str(i), weight=w, criteria=[], passed=p)
        for i, (w, p) in enumerate(weights_passed)
    ]
    total = sum(w for w, _ in weights_passed)
    got = sum(w for w, p in weights_passed if p)
    return GradeRecord(
        trial_id=trial_id,
        task_id="/".join(trial_id.split("/")[:3]),
        judge={"key": "checks"},
        rubrics=rubrics,
        score=got / total if status == "complete" else None,
        max_score=total,
        passed_weight=got,
        status=status,
    )


def test_capability_from_a_graded_run(mini_data: Path, tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r1"
    grades = [
        _grade("main/alpha/task1/agentx@m/epoch-1", [(3, True), (1, False)]),
        _grade("main/alpha/task2/agentx@m/epoch-1", [(1, True), (3, False)]),  # alpha: 4/8 = 50 %
        _grade("main/beta/task1/agentx@m/epoch-1", [(2, True)]),  # beta: 100 %
        _grade("main/delta/task1/agentx@m/epoch-1", [(5, False)]),  # delta: 0 %
        _grade("main/delta/task2/agentx@m/epoch-1", [(5, True)], status="judge_error"),  # left out
    ]
    for g in grades:
        path = run / "grades" / "checks" / (g.trial_id + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(g.model_dump_json())
    res = runner.invoke(
        app,
        [
            "attention",
            "--run",
            str(run),
            "--data-dir",
            str(mini_data),
            "--crosswalk",
            str(mini_data / "crosswalk.csv"),
            "--boot",
            "20",
            "--config",
            "all",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["capability"] == {"r1:agentx@m": {"alpha": 50.0, "beta": 100.0, "delta": 0.0}}
    p, s = independent([50, 100, 0], [1, 3, 2])
    assert out["results"][0]["companies"]["pearson"]["r"] == pytest.approx(p)
    assert out["results"][0]["companies"]["spearman"]["r"] == pytest.approx(s)
    (run / "grades" / "other").mkdir()
    res = runner.invoke(app, ["attention", "--run", str(run), "--data-dir", str(mini_data)])
    assert (
        res.exit_code == 2
        and "choose a judge key with --judge-key; found ['checks', 'other']" in res.stderr
    )


def _real_counts(shared: Path) -> dict[str, tuple[int, int]]:
    """Distinct papers / companies per JobBench slug, from the raw CSVs with plain csv."""
    with (shared / "jobbench" / "jobbench_35_occupations.csv").open(encoding="utf-8") as f:
        occ = {r["jobbench_slug"]: r["workbank_occupation"] for r in csv.DictReader(f)}
    sets = {}
    for name, col, sep in (
        ("paper_to_workflow_mapping_aggregated.csv", "paper_ids", ","),
        ("company_to_workflow_aggregation.csv", "company", "; "),
    ):
        acc: dict[str, set] = {}
        with (shared / "workbank" / "external" / name).open(encoding="utf-8") as f:
            for r in csv.DictReader(f):
                acc.setdefault(r["occupation"], set()).update(v for v in r[col].split(sep) if v)
        sets[col] = acc
    return {
        s: (len(sets["paper_ids"].get(o, ())), len(sets["company"].get(o, ())))
        for s, o in occ.items()
    }


def test_leaderboard_correlations_match_independent_computation(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lb_path = shared_data / "jobbench" / "leaderboard.json"
    board = {e["model"]: e for e in json.loads(lb_path.read_text())["leaderboard"]}
    counts = _real_counts(shared_data)
    monkeypatch.chdir(
        tmp_path
    )  # no ./data/selection: the data dir is found next to the leaderboard
    monkeypatch.delenv("JOBBENCH_DATA_DIR", raising=False)
    res = runner.invoke(
        app,
        [
            "attention",
            "--leaderboard",
            str(lb_path),
            "--config",
            "gpt-5-4-codexcli-updated_v2",
            "--config",
            "GPT-5.2 (Codex CLI)",
            "--boot",
            "300",
            "--seed",
            "7",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {a["slug"]: (a["papers"], a["companies"]) for a in out["attention"]} == counts
    for result in out["results"]:
        breakdown = board[result["config"]]["categoryBreakdown"]
        slugs = sorted(s for s in counts if s in breakdown)
        assert result["slugs"] == slugs
        x = [breakdown[s]["score_pct"] for s in slugs]
        for target, k in (("papers", 0), ("companies", 1)):
            y = [counts[s][k] for s in slugs]
            p, s = independent(x, y)
            assert result[target]["pearson"]["r"] == pytest.approx(p, abs=1e-12)
            assert result[target]["spearman"]["r"] == pytest.approx(s, abs=1e-12)
            # the bootstrap interval, recomputed with the documented resampling plan
            idx = np.random.default_rng(7).integers(0, len(slugs), size=(300, len(slugs))).tolist()
            boot = []
            for row in idx:
                xs, ys = [x[i] for i in row], [y[i] for i in row]
                try:
                    boot.append(statistics.correlation(ranks(xs), ranks(ys)))
                except statistics.StatisticsError:
                    pass
            cuts = statistics.quantiles(boot, n=40, method="inclusive")
            assert result[target]["spearman"]["low"] == pytest.approx(cuts[0], abs=1e-9)
            assert result[target]["spearman"]["high"] == pytest.approx(cuts[-1], abs=1e-9)
    gpt52 = out["results"][1]
    assert len(gpt52["slugs"]) == 34 and gpt52["missing"] == ["petroleum_engineers"]
    # published values of this computation (GPT-5.4, Codex CLI): YC Pearson -0.173, papers Pearson +0.013
    r = out["results"][0]
    assert (round(r["companies"]["pearson"]["r"], 3), round(r["papers"]["pearson"]["r"], 3)) == (
        -0.173,
        0.013,
    )


def test_done_when_command_prints_correlations(
    shared_data: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JOBBENCH_DATA_DIR", raising=False)
    plot = tmp_path / "attention.png"
    res = runner.invoke(
        app,
        [
            "attention",
            "--leaderboard",
            str(shared_data / "jobbench" / "leaderboard.json"),
            "--boot",
            "200",
            "--plot",
            str(plot),
            "--out",
            str(tmp_path / "att"),
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    row = next(line for line in lines if line.startswith("GPT-5.4 (Codex CLI)"))
    assert row.split()[3:5] == ["35", "+0.013"] and "-0.173" in row
    assert any(line.startswith("mean of 18 configurations") for line in lines)
    assert "2,932 papers and 2,089 companies" in res.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"
    with (tmp_path / "att" / "attention.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 35 and "capability:mean" in rows[0]
    corr = json.loads((tmp_path / "att" / "correlations.json").read_text())
    assert len(corr) == 19 and all(not math.isnan(c["papers"]["pearson"]["r"]) for c in corr)


def test_undefined_correlation_is_null_in_json(mini_data: Path, tmp_path: Path) -> None:
    """A configuration with the same score everywhere has no correlation: JSON null, never NaN."""
    lb = json.loads((mini_data / "jobbench" / "leaderboard.json").read_text())
    lb["leaderboard"][0]["categoryBreakdown"] = {
        s: {"score_pct": 25.0} for s in ("alpha", "beta", "delta")
    }
    (mini_data / "jobbench" / "leaderboard.json").write_text(json.dumps(lb))
    res = runner.invoke(
        app,
        [
            "attention",
            "--data-dir",
            str(mini_data),
            "--crosswalk",
            str(mini_data / "crosswalk.csv"),
            "--config",
            "m1",
            "--boot",
            "20",
            "--json",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        "NaN" not in res.stdout and "NaN" not in (tmp_path / "o" / "correlations.json").read_text()
    )
    corr = json.loads(res.stdout)["results"][0]["papers"]["pearson"]
    assert (corr["r"], corr["low"], corr["n_valid"]) == (None, None, 0)
    text = runner.invoke(
        app,
        [
            "attention",
            "--data-dir",
            str(mini_data),
            "--crosswalk",
            str(mini_data / "crosswalk.csv"),
            "--config",
            "m1",
            "--boot",
            "20",
        ],
    ).stdout
    assert (
        next(line for line in text.splitlines() if line.startswith("Model One")).split()[-1]
        == "n/a"
    )
