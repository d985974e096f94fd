"""Drill-downs as one page per task under ``report/drilldowns/``: links, content, safe file
names, CSP, stale pages, and the inline / pages / auto choice."""

from __future__ import annotations

import importlib.util
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.report import ReportInputError, _html, build_report, write_report
from jobbench.report._html import page_name

_spec = importlib.util.spec_from_file_location(
    "report_fixtures_pages", Path(__file__).with_name("conftest.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
T1, T2, T3, T4 = fx.T1, fx.T2, fx.T3, fx.T4
P, F = fx.P, fx.F

CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action "
    "'none'"
)
PAGES = {  # written by hand: task id -> page file name
    T1: "main.biostatisticians.task1.html",
    T2: "main.civil_engineers.task1.html",
    T3: "main.lawyers.task1.html",
    T4: "main.management_analysts.task1.html",
}


class Page(HTMLParser):
    """ids, hrefs (a, area, link), CSP metas, tags, and table rows as lists of cell texts,
    each row tagged with the id of the enclosing <section>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.drills: list[str] = []  # ids of <section class="drill">, in page order
        self.hrefs: list[str] = []
        self.csp: list[str] = []
        self.tags: list[str] = []
        self.rows: list[tuple[str | None, list[str]]] = []
        self._section: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag in ("a", "area", "link") and "href" in a:
            self.hrefs.append(a["href"])
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp.append(a.get("content") or "")
        if tag == "section":
            self._section = a.get("id")
            if "drill" in (a.get("class") or "").split() and a.get("id"):
                self.drills.append(a["id"])
        if tag == "tr":
            self._row = []
        if tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = None
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.rows.append((self._section, self._row))
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


def html_files(out: Path) -> list[Path]:
    """The report's pages: report.html and drilldowns/*.html."""
    return [out / "report.html", *sorted((out / "drilldowns").glob("*.html"))]


def check_links(out: Path) -> int:
    """Assert every link of every page of ``out`` resolves to a file inside ``out`` and to an
    id of that file (ids collected per file, independently), or to a trial's grade file (a
    JSON file under a run's ``grades/``, which holds every verdict's texts whole). Returns the
    number of links."""
    pages = {p.resolve(): parse(p) for p in html_files(out)}
    n = 0
    for path, page in pages.items():
        raw = path.read_text(encoding="utf-8")
        assert "<script" not in raw.lower(), path
        assert page.csp == [CSP], path  # the same policy, once, on every page
        assert "script" not in page.tags and "iframe" not in page.tags
        for href in page.hrefs:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, (path, href)  # nothing leaves the report
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.suffix == ".json" and "grades" in target.parts:
                assert target.is_file() and not parts.fragment, (path, href)
                n += 1
                continue
            assert target.is_relative_to(out.resolve()), (path, href)
            assert target in pages, (path, href)
            if parts.fragment:
                assert unquote(parts.fragment) in pages[target].ids, (path, href)
            n += 1
    return n


def check_reachable(out: Path) -> int:
    """Assert every drill-down of the report (each ``<section class="drill">`` of
    report.html and of every drill-down page) is reachable from report.html: some chain of
    links, starting at report.html, ends at that file with that section's id as fragment.
    Links are followed only to the report's own HTML files. Returns the number of
    drill-downs."""
    files = {p.resolve(): parse(p) for p in html_files(out)}
    start = (out / "report.html").resolve()
    reached: set[tuple[Path, str]] = set()
    visited = {start}
    todo = [start]
    while todo:
        path = todo.pop()
        for href in files[path].hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target not in files:
                continue  # a grade file (JSON): holds texts, links nowhere
            if parts.fragment:
                reached.add((target, unquote(parts.fragment)))
            if target not in visited:
                visited.add(target)
                todo.append(target)
    drills = [(path, d) for path, page in files.items() for d in page.drills]
    for path, page in files.items():
        assert len(set(page.drills)) == len(page.drills), path  # one section per id and file
    unreached = [(p.name, d) for p, d in drills if (p, d) not in reached]
    assert not unreached, unreached[:10]
    assert visited == set(files), sorted(p.name for p in set(files) - visited)
    return len(drills)


def test_pages_layout_links_resolve_and_pages_are_safe(run_a: Path, run_b: Path, tmp_path: Path):
    out = write_report([run_a, run_b], tmp_path / "out", n_resamples=200, drilldowns="pages")
    drill = out / "drilldowns"
    assert sorted(p.name for p in drill.iterdir()) == sorted(PAGES.values())
    assert check_links(out) > 100
    assert check_reachable(out) == 12  # 3 configurations x 4 tasks, each on its task's page
    main = parse(out / "report.html")
    # No drill-down left in the page itself; every task link goes to its page.
    assert not any(i.startswith(("c1-", "c2-", "c3-")) for i in main.ids)
    to_pages = [h for h in main.hrefs if h.startswith("drilldowns/")]
    # the heat-map cell and the matrix cell (the per-task figures head each drill-down page,
    # whose index table links every epoch)
    assert (
        sum(1 for h in to_pages if h == f"drilldowns/{PAGES[T4]}#c1-main.management_analysts.task1")
        == 2
    )
    assert "#c2-main.lawyers.task1-e2" in parse(drill / PAGES[T3]).hrefs  # alpha, epoch 2
    for _task, name in PAGES.items():
        page = parse(drill / name)
        slug = name[:-5]
        # the page holds every configuration that ran the task (all three here), each epoch
        assert {f"c1-{slug}", f"c2-{slug}", f"c3-{slug}"} <= page.ids
        assert f"../report.html#task-{slug}" in page.hrefs and "../report.html#c2" in page.hrefs
    bio = (drill / PAGES[T1]).read_text()
    # hostile evidence and reasoning stay text on the page
    assert "&lt;script&gt;alert(" in bio and "&lt;/div&gt;&lt;/td&gt;&lt;/table&gt;&lt;h1" in bio
    assert "pwned" not in parse(drill / PAGES[T1]).ids


def test_inline_layout_links_resolve_and_no_pages(run_a: Path, run_b: Path, tmp_path: Path):
    out = write_report([run_a, run_b], tmp_path / "out", n_resamples=200, drilldowns="inline")
    assert not (out / "drilldowns").exists()
    main = parse(out / "report.html")
    assert check_links(out) > 100
    assert check_reachable(out) == 12  # 3 configurations x 4 tasks, all in report.html
    # every link stays in the page, but each trial's link to its grade file (texts whole)
    assert all(h.startswith("#") or "/grades/checks/" in h for h in main.hrefs)
    assert {"c1-main.lawyers.task1", "c3-main.management_analysts.task1-e1"} <= main.ids


def test_drilldown_page_shows_a_criterion_verdict(tmp_path: Path, dataset: Path):
    run = tmp_path / "runs" / "v"
    fx.write_lock(run, dataset, [("alpha", "m1"), ("beta", "m2")], epochs=1)
    tid = fx.write_trial(run, T2, "alpha", "m1", 1)
    fx.write_grade(run, "checks", tid, [[P, P], [F, P]])
    gpath = run / "grades" / "checks" / f"{tid}.json"
    g = json.loads(gpath.read_text())
    cv = g["rubrics"][1]["criteria"][0]
    cv["reasoning"] = "The live load of 2.5 kN/m² is missing from table 4 <b>."
    cv["evidence"] = "Table 4: dead load 3.1 kN/m²"
    gpath.write_text(json.dumps(g))
    fx.write_grade(run, "checks", fx.write_trial(run, T2, "beta", "m2", 1), [[P, P], [P, P]])
    out = write_report([run], tmp_path / "out", n_resamples=100, drilldowns="pages")
    page = parse(out / "drilldowns" / PAGES[T2])
    rows = [(sec, cells) for sec, cells in page.rows if cells and cells[0] == "R2.1"]
    # one R2.1 row per configuration, each inside its own section
    assert sorted(sec for sec, _ in rows) == [
        "c1-main.civil_engineers.task1",
        "c2-main.civil_engineers.task1",
    ]
    alpha = next(cells for _, cells in rows if cells[3].startswith("fail"))
    assert alpha[1] == "criterion 2.1 of main/civil_engineers/task1"
    assert alpha[3] == "fail (first failed link)"
    assert alpha[5] == "The live load of 2.5 kN/m² is missing from table 4 <b>."
    assert alpha[6].startswith("Table 4: dead load 3.1 kN/m²")
    beta = next(cells for _, cells in rows if not cells[3].startswith("fail"))
    assert beta[3] == "pass" and beta[5] == "because"
    assert "<b>." not in (out / "drilldowns" / PAGES[T2]).read_text()  # escaped: &lt;b&gt;.
    # the other tasks of the lock have pages too (missing: no trial)
    assert sorted(p.name for p in (out / "drilldowns").iterdir()) == sorted(PAGES.values())
    assert check_links(out) > 0


ODD = {  # task id -> page name, encoded by hand (UTF-8 bytes as ~xx)
    "main/../task1": "main.~2e~2e.task1.html",
    "main/odd occupation/task 1..": "main.odd~20occupation.task~201~2e~2e.html",
    "main/Ünïcode/tâsk": "main.~c3~9cn~c3~afcode.t~c3~a2sk.html",
    "main/odd_occupation/task_1": "main.odd_occupation.task_1.html",
}


def test_page_names_are_safe_and_distinct(tmp_path: Path):
    for task, name in ODD.items():
        assert page_name(task) == name
    drill = tmp_path / "drilldowns"
    ids = list(ODD) + [
        "../../etc/passwd",
        "/abs/olute/x",
        "a//b/",
        "a\\b/c/d",
        "main/x/Task1",
        "main/x/task1",
        "main/x.y/t",
        "main/x/y/t",
        "~2e/a/b",
        "./a/b",
        "..",
        ".",
        "a b/c/d",
        "a_b/c/d",
        "x" * 300,
        "x" * 299 + "y",
        "é" * 200,
        "con/nul/aux",
        "a\x00b/c/d",
        "a\nb/c/d",
    ]
    names = [page_name(t) for t in ids]
    assert len(set(names)) == len(ids)
    assert len({n.lower() for n in names}) == len(
        ids
    )  # also distinct on case-insensitive file systems
    for t, n in zip(ids, names):
        assert n.endswith(".html") and "/" not in n and "\\" not in n and ".." not in n[:-5], (t, n)
        assert not n.startswith(".") and len(n.encode()) <= 200, (t, n)
        assert all(ch.isascii() and (ch.isalnum() or ch in "._-~") for ch in n), (t, n)
        assert (drill / n).resolve().parent == drill.resolve()
        assert n[:-5] == _html.task_slug(t)  # the anchor part of drill-down ids is the same slug


def test_odd_task_ids_get_pages_inside_drilldowns(tmp_path: Path, dataset: Path, monkeypatch):
    run = tmp_path / "runs" / "odd"
    fx.write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    lock = json.loads((run / "lock.json").read_text())
    for task in ODD:
        lock["tasks"][task] = "0" * 64
    (run / "lock.json").write_text(json.dumps(lock))
    # a task id that is not three safe path components is refused, naming the field
    refused = r"lock.json: field tasks\.main/\.\./task1: task id is not"
    with pytest.raises(ReportInputError, match=refused):
        write_report([run], tmp_path / "report", n_resamples=100, drilldowns="pages")
    del lock["tasks"]["main/../task1"]
    (run / "lock.json").write_text(json.dumps(lock))
    odd = {t: n for t, n in ODD.items() if t != "main/../task1"}
    graded = "main/odd occupation/task 1.."
    monkeypatch.setitem(fx.WEIGHTS, graded, [10])
    fx.write_grade(
        run,
        "checks",
        fx.write_trial(run, graded, "alpha", "m1", 1),
        [[P, F]],
        reasoning="odd-task reasoning",
    )
    out = write_report([run], tmp_path / "report", n_resamples=100, drilldowns="pages")
    drill = out / "drilldowns"
    pages = [*PAGES.values(), *odd.values()]
    assert sorted(p.name for p in drill.iterdir()) == sorted(pages)
    # nothing written outside report/drilldowns/
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert written == {"report/report.html"} | {f"report/drilldowns/{n}" for n in pages}
    assert check_links(out) > 0
    page = (drill / ODD[graded]).read_text()
    assert (
        "odd-task reasoning" in page
        and "<title>JobBench drill-down: main/odd occupation/task 1..</title>" in page
    )
    main = (out / "report.html").read_text()
    assert f'href="drilldowns/{ODD[graded]}#c1-main.odd~20occupation.task~201~2e~2e"' in main


def _fewer_tasks(run: Path, dest: Path, drop: str) -> Path:
    """A copy of ``run`` under the same name whose lock, trials and grades lack ``drop``."""
    shutil.copytree(run, dest)
    lock = json.loads((dest / "lock.json").read_text())
    del lock["tasks"][drop]
    (dest / "lock.json").write_text(json.dumps(lock))
    for d in (dest / "trials" / drop, dest / "grades" / "checks" / drop):
        shutil.rmtree(d)
    return dest


def test_rereport_with_fewer_tasks_leaves_no_stale_page(run_a: Path, tmp_path: Path):
    out = tmp_path / "out"
    write_report([run_a], out, n_resamples=100, drilldowns="pages")
    assert sorted(p.name for p in (out / "drilldowns").iterdir()) == sorted(PAGES.values())
    (out / "notes.txt").write_text("mine")
    (out / "extra").mkdir()
    (out / "extra" / "keep.html").write_text("mine")
    smaller = _fewer_tasks(run_a, tmp_path / "other" / "run-a", T4)
    write_report([smaller], out, n_resamples=100, drilldowns="pages")
    assert sorted(p.name for p in (out / "drilldowns").iterdir()) == sorted(
        [PAGES[T1], PAGES[T2], PAGES[T3]]
    )
    assert T4 not in (out / "report.html").read_text()
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            ".inputs.json",
            "drilldowns",
            "extra",
            "leaderboard.csv",
            "leaderboard.md",
            "notes.txt",
            "report.html",
            "results.jsonl",
            "summary.json",
        ]
    )  # no temporary or old directory left behind, nothing else removed
    assert (out / "notes.txt").read_text() == "mine" and (
        out / "extra" / "keep.html"
    ).read_text() == "mine"
    check_links(out)
    # back to one page: the drill-down pages go, the user's files stay
    write_report([smaller], out, n_resamples=100, drilldowns="inline")
    assert (
        not (out / "drilldowns").exists()
        and (out / "notes.txt").exists()
        and (out / "extra" / "keep.html").exists()
    )
    check_links(out)


def test_a_symlinked_drilldowns_dir_is_replaced_not_followed(run_a: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.html").write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "drilldowns").symlink_to(elsewhere, target_is_directory=True)
    write_report([run_a], out, n_resamples=100, drilldowns="pages")
    assert not (out / "drilldowns").is_symlink() and (out / "drilldowns" / PAGES[T1]).is_file()
    assert (elsewhere / "precious.html").read_text() == "keep" and len(
        list(elsewhere.iterdir())
    ) == 1
    (out / "drilldowns").rename(tmp_path / "moved")
    (out / "drilldowns").symlink_to(elsewhere, target_is_directory=True)
    write_report([run_a], out, n_resamples=100, drilldowns="inline")
    assert not (out / "drilldowns").exists() and (elsewhere / "precious.html").read_text() == "keep"


def test_auto_switches_on_estimated_size(run_a: Path, run_b: Path, tmp_path: Path, monkeypatch):
    data = build_report([run_a, run_b], n_resamples=100)
    est = _html.estimate_drilldown_bytes(data)
    # the estimate tracks the rendered drill-downs (within 25 %)
    inline = _html.render_html(data, "inline")
    start = inline.index('<section class="drill"')
    rendered = len(inline[start:].encode())
    assert 0.75 * rendered <= est <= 1.25 * rendered, (est, rendered)
    assert est < _html.AUTO_INLINE_MAX_BYTES  # the fixture (like the bundled sample) stays one page
    assert _html.resolve_drilldowns(data, "auto") == "inline"
    monkeypatch.setattr(_html, "AUTO_INLINE_MAX_BYTES", est)
    assert _html.resolve_drilldowns(data, "auto") == "inline"
    monkeypatch.setattr(_html, "AUTO_INLINE_MAX_BYTES", est - 1)
    assert _html.resolve_drilldowns(data, "auto") == "pages"
    res = write_report([run_a, run_b], tmp_path / "auto", n_resamples=100)
    assert sorted(p.name for p in (res / "drilldowns").iterdir()) == sorted(PAGES.values())
    with pytest.raises(
        ValueError, match="drilldowns: expected one of inline, pages, auto, got 'paged'"
    ):
        write_report([run_a], tmp_path / "bad", drilldowns="paged")
    assert not (tmp_path / "bad").exists()


def test_cli_drilldowns_option(run_a: Path, tmp_path: Path):
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "report",
            str(run_a),
            "--out",
            str(tmp_path / "o"),
            "--resamples",
            "100",
            "--drilldowns",
            "pages",
        ],
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "o" / "drilldowns").iterdir()) == sorted(
        PAGES.values()
    )
    assert "drill-downs:" in res.output
    res = runner.invoke(
        app, ["report", str(run_a), "--out", str(tmp_path / "o"), "--drilldowns", "single"]
    )
    assert res.exit_code == 2 and "expected one of inline, pages, auto, got 'single'" in res.output
    assert (tmp_path / "o" / "drilldowns").is_dir()  # a refused command changes nothing


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_pages_rendered_in_a_forked_child_equal_those_rendered_here(
    run_a: Path, run_b: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobbench.report import _write

    data = build_report([run_a, run_b])
    forks: list[int] = []
    real_fork = _write.os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(_write.os, "fork", fork)
    monkeypatch.setattr(_write, "can_fork", lambda: True)
    _write.write_data(data, tmp_path / "forked", drilldowns="pages")
    assert len(forks) == 1  # the pages were rendered by a child
    monkeypatch.setattr(_write, "can_fork", lambda: False)
    _write.write_data(data, tmp_path / "here", drilldowns="pages")  # the same built report
    assert len(forks) == 1
    forked, here = _files(tmp_path / "forked"), _files(tmp_path / "here")
    assert sorted(forked) == sorted(here) and any(k.startswith("drilldowns/") for k in here)
    assert forked == here


def test_a_failing_child_leaves_the_pages_to_the_parent(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child claims pages (this process is held up writing the data files), then dies
    while rendering its second one: every page it may have claimed is rendered again here,
    the same as without a fork."""
    import os
    import time

    from jobbench.report import _write

    data = build_report([run_a])
    monkeypatch.setattr(_write, "can_fork", lambda: False)
    _write.write_data(data, tmp_path / "here", drilldowns="pages")
    parent = os.getpid()
    real = _write.render_drilldown_pages
    real_md = _write.leaderboard_markdown
    log = tmp_path / "child.log"

    def render(data, out_dir=None, tasks=None):  # noqa: ANN001, ANN202
        for i, page in enumerate(real(data, out_dir, tasks)):
            if os.getpid() != parent:
                with open(log, "a") as f:
                    f.write(f"{i}\n")
                if i == 1:
                    raise RuntimeError("child dies in its second page")
            yield page

    def slow_md(d):  # noqa: ANN001, ANN202
        time.sleep(3)  # the child has drawn the figures and claimed its pages meanwhile
        return real_md(d)

    monkeypatch.setattr(_write, "render_drilldown_pages", render)
    monkeypatch.setattr(_write, "leaderboard_markdown", slow_md)
    monkeypatch.setattr(_write, "can_fork", lambda: True)
    out = _write.write_data(data, tmp_path / "r", drilldowns="pages")
    assert log.read_text().split() == ["0", "1"]  # the child did claim pages, then died
    pages = sorted(p.name for p in (out / "drilldowns").iterdir())
    assert pages == sorted(PAGES.values())
    assert _files(out / "drilldowns") == _files(tmp_path / "here" / "drilldowns")
    assert not list(out.glob(".drilldowns-new-*"))


def test_no_fork_with_other_threads_or_when_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from jobbench.report import _fork

    monkeypatch.setattr(_fork.sys, "platform", "linux")
    monkeypatch.setattr(_fork.threading, "active_count", lambda: 1)
    assert _fork.can_fork()
    monkeypatch.setenv("JOBBENCH_REPORT_FORK", "0")
    assert not _fork.can_fork()
    assert _fork.parts_available() == 1
    monkeypatch.delenv("JOBBENCH_REPORT_FORK")
    monkeypatch.setattr(_fork.threading, "active_count", lambda: 2)
    assert not _fork.can_fork()
    assert _fork.parts_available() == 1
    assert threading.active_count() >= 1
