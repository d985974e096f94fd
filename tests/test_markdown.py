"""The Markdown helpers of ``jobbench._markdown``: text made inert, code spans shown as written."""

from __future__ import annotations

from markdown_it import MarkdownIt

from jobbench._markdown import md_code, md_text
from jobbench.gates import render_markdown
from jobbench.gates._findings import Finding, GateResult
from jobbench.gates._report import GateReport, TaskGates


def _rendered_code(md: str) -> list[str]:
    """The text of every inline code span CommonMark finds in ``md``."""
    tokens = MarkdownIt("commonmark").parseInline(md)
    return [c.content for t in tokens for c in (t.children or []) if c.type == "code_inline"]


def test_code_span_shows_the_text_exactly() -> None:
    for text in ["rubrics[2].criterion[0]", "a\\b", "x`y", "``", "`lead", "<b>&</b>"]:
        assert _rendered_code(md_code(text)) == [text], text


def test_code_span_escapes_the_table_pipe_and_joins_lines() -> None:
    assert md_code("a|b") == "`a\\|b`"
    assert md_code("a\nb") == "`a b`"


def test_text_escape_keeps_brackets_and_backticks_inert() -> None:
    assert md_text("[x](y) `z` <i>") == "\\[x\\](y) \\`z\\` &lt;i&gt;"


def test_gate_report_shows_a_json_path_as_written() -> None:
    finding = Finding(
        gate="lint",
        rule="UN1",
        severity="warning",
        task_id="main/a/task1",
        file="RUBRICS.json",
        where="rubrics[2].criterion[1]",
        message="the number has no unit",
    )
    report = GateReport(
        created_at="2026-12-02T00:00:00Z",
        harness_version="0",
        dataset="data`set",
        gates=["lint"],
        strict=False,
        tasks=[
            TaskGates(
                task_id="main/a/task1",
                path="p",
                gates={"lint": GateResult(gate="lint", status="warn", findings=[finding])},
            )
        ],
    )
    md = render_markdown(report)
    assert "RUBRICS.json: rubrics[2].criterion[1]" in _rendered_code(md.split("## Findings")[1])
    assert "data`set" in _rendered_code(md)
