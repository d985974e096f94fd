"""The runner collects what the judge grades (jobbench.deliverable_policy): dotfiles and OS or
editor junk are not collected, blank files are collected but are not a deliverable, and a
trial whose output holds nothing gradeable ends ``no_deliverable``."""

from __future__ import annotations

from pathlib import Path

from jobbench.agents import AGENTS, Agent, AgentResult
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import collect_deliverables


def test_collection_skips_dotfiles_and_junk(tmp_path: Path) -> None:
    out = tmp_path / "output"
    (out / "sub" / ".cache").mkdir(parents=True)
    (out / "__MACOSX").mkdir()
    files = {
        "report.md": "# Total 42\n",
        ".notes.md": "draft",
        ".DS_Store": "\0",
        "~$report.docx": "owner",
        ".~lock.report.docx#": "lock",
        "Thumbs.db": "db",
        "sub/data.csv": "a\n1\n",
        "sub/.cache/x": "x",
        "__MACOSX/._report.md": "fork",
        "blank.txt": "  \n",
    }
    for rel, text in files.items():
        (out / rel).write_text(text)
    got = collect_deliverables(out, tmp_path / "deliverables")
    assert [f.path for f in got.files] == ["blank.txt", "report.md", "sub/data.csv"]
    assert got.ignored == [
        ".DS_Store: dotfile",
        ".notes.md: dotfile",
        ".~lock.report.docx#: dotfile",
        "Thumbs.db: OS or editor junk",
        "__MACOSX/: OS or editor junk",
        "sub/.cache/: dotfile",
        "~$report.docx: OS or editor junk",
    ]
    assert got.refused == []
    assert sorted(
        p.relative_to(tmp_path / "deliverables").as_posix()
        for p in (tmp_path / "deliverables").rglob("*")
        if p.is_file()
    ) == ["blank.txt", "report.md", "sub/data.csv"]


class _Writes(Agent):
    """Writes the files of ``FILES`` into the output folder."""

    name = "writes"
    FILES: dict[str, str] = {}

    def run(self, ctx):  # noqa: ANN001
        for rel, text in self.FILES.items():
            (ctx.workspace.output / rel).write_text(text)
        return AgentResult(status="ok", turns=1)


def test_trial_with_nothing_gradeable_is_no_deliverable(
    tmp_path: Path, dataset: Path, monkeypatch
) -> None:
    monkeypatch.setitem(AGENTS, "writes", _Writes)
    monkeypatch.setattr(
        _Writes, "FILES", {".notes.md": "net.csv would say 1250", "empty.md": "", "pad.csv": " \n"}
    )
    s = run_trials(
        RunConfig(dataset=dataset, agents=[AgentSpec("writes")], run_dir=tmp_path / "runs" / "r")
    )
    assert {r.status for r in s.records} == {TrialStatus.no_deliverable}
    rec = s.records[0]
    assert [d.path for d in rec.deliverables] == ["empty.md", "pad.csv"]
    assert rec.ignored == [".notes.md: dotfile"]
    assert rec.error == (
        "the agent finished without writing any gradeable file to the output directory (only "
        "empty or whitespace-only files: empty.md, pad.csv; not deliverables (dotfiles, OS or "
        "editor junk): .notes.md)"
    )
    monkeypatch.setattr(_Writes, "FILES", {"memo.md": "Total 1250"})
    s = run_trials(
        RunConfig(dataset=dataset, agents=[AgentSpec("writes")], run_dir=tmp_path / "runs" / "ok")
    )
    assert {r.status for r in s.records} == {TrialStatus.ok}
