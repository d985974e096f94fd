"""report.html in headless Chromium: no console messages, leaderboard, figures, live links,
and a page that fits the window (no sideways scrolling, no clipped figure) at 1,400 and 900 px.

Chromium comes from apt (`scripts/setup.sh --dev`, which CI runs); without it these tests fail
and say how to install it.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from jobbench.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
_spec = importlib.util.spec_from_file_location(
    "report_fixtures_chromium", Path(__file__).with_name("conftest.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)


@pytest.fixture(autouse=True)
def _chromium_present() -> None:
    """These tests need Chromium; its absence is a broken test machine, not a reason to skip."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is absent: the report rendering tests need Chromium; install it with "
            "`bash scripts/setup.sh --dev` (as root: apt-get install -y "
            "--no-install-recommends chromium)",
            pytrace=False,
        )


FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--enable-logging=stderr",
    "--v=0",
]
CONSOLE = re.compile(r":CONSOLE[:(]")


def chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


class Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tables: list[str] = []
        self.figures = 0
        self.data_imgs = 0
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag in ("a", "area") and (a.get("href") or "").startswith("#"):
            self.links.append(a["href"][1:])
        if tag == "table":
            self.tables.append(a.get("class") or "")
        if tag == "figure":
            self.figures += 1
        if tag == "img" and (a.get("src") or "").startswith("data:image/png;base64,"):
            self.data_imgs += 1
        if tag == "script":
            self.scripts += 1


def test_console_detection_catches_errors(tmp_path: Path):
    """The console check below can fail: a page breaking our CSP produces console lines."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; img-src data:\"></head><body>"
        '<img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body></html>'
    )
    res = chromium(bad, tmp_path / "profile", "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(console_lines(res.stderr)) >= 1


def test_report_renders_without_console_errors(run_a: Path, run_b: Path, tmp_path: Path):
    out = write_report([run_a, run_b], tmp_path / "report", n_resamples=500)
    page = out / "report.html"

    dom_run = chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert dom_run.returncode == 0, dom_run.stderr[-2000:]
    assert console_lines(dom_run.stderr) == []
    dom = Dom()
    dom.feed(dom_run.stdout)
    assert any("leaderboard" in c.split() for c in dom.tables)
    assert dom.figures >= 3 and dom.data_imgs >= 3
    assert dom.scripts == 0 and "pwned" not in dom.ids  # hostile evidence stayed text
    assert dom.links and all(link in dom.ids for link in dom.links), [
        x for x in dom.links if x not in dom.ids
    ][:5]
    for anchor in (
        "c2-main.biostatisticians.task1",
        "c2-main.management_analysts.task1",
        "c3-main.lawyers.task1",
    ):
        assert anchor in dom.links and anchor in dom.ids

    shot = tmp_path / "shot.png"
    shot_run = chromium(
        page, tmp_path / "profile-shot", "--window-size=1400,2600", f"--screenshot={shot}"
    )
    assert shot_run.returncode == 0, shot_run.stderr[-2000:]
    assert console_lines(shot_run.stderr) == []
    assert shot.is_file() and shot.stat().st_size > 10_000
    from matplotlib.image import imread

    img = imread(shot)[:, :, :3]
    assert img.shape[:2] == (2600, 1400)
    # The category bars are drawn in the first palette colour (#4C72B0 = 76, 114, 176): the
    # figure must be visible in the rendered page, not just present in the markup.
    target = np.array([76, 114, 176]) / 255
    close = np.all(np.abs(img - target) < 6 / 255, axis=2).sum()
    assert close > 2000, close


def test_drilldown_pages_render_without_console_errors(run_a: Path, run_b: Path, tmp_path: Path):
    """The per-task pages layout: report.html and a drill-down page (with the hostile evidence)
    load in Chromium under the CSP without a console message, and their links reach ids."""
    out = write_report([run_a, run_b], tmp_path / "report", n_resamples=200, drilldowns="pages")
    page = out / "drilldowns" / "main.biostatisticians.task1.html"
    res = chromium(page, tmp_path / "profile-drill", "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert console_lines(res.stderr) == []
    dom = Dom()
    dom.feed(res.stdout)
    assert dom.scripts == 0 and "pwned" not in dom.ids
    assert {
        "c1-main.biostatisticians.task1",
        "c2-main.biostatisticians.task1-e1",
        "c3-main.biostatisticians.task1",
    } <= dom.ids
    assert dom.links and all(link in dom.ids for link in dom.links)
    assert "&lt;script&gt;alert(" in res.stdout  # shown as text
    main = chromium(out / "report.html", tmp_path / "profile-main", "--dump-dom")
    assert main.returncode == 0 and console_lines(main.stderr) == []
    assert (
        'href="drilldowns/main.biostatisticians.task1.html#c2-main.biostatisticians.task1"'
        in main.stdout
    )


LONG_TASK = (
    "main/sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products/task1"
)
"""The bundled sample's longest task id (88 characters), a worst case for labels."""

LAYOUT_JS = r"""
window.addEventListener("load", function () {
  var de = document.documentElement, drill = document.getElementById("drilldowns");
  function box(e) {
    var b = e.getBoundingClientRect();
    return {left: b.left, right: b.right, top: b.top, bottom: b.bottom, width: b.width,
            height: b.height};
  }
  function name(e) { return e.tagName.toLowerCase() + (e.className ? "." + e.className : "")
                            + (e.id ? "#" + e.id : ""); }
  var out = {width: de.clientWidth, scroll_width: de.scrollWidth, tables: [], figures: []};
  document.querySelectorAll("table").forEach(function (t) {
    var p = t.parentElement, h = t.closest("div, section, body").previousElementSibling;
    var before = !!(drill && (drill.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING));
    out.tables.push({cls: t.className, before_drilldowns: before, heading: h ? h.textContent : "",
                     scroll_width: t.scrollWidth, box: box(t), parent: name(p),
                     parent_client_width: p.clientWidth, parent_scroll_width: p.scrollWidth});
  });
  document.querySelectorAll("figure").forEach(function (f) {
    var fig = {id: f.id, box: box(f), items: [], overflowing: [], texts: []};
    f.querySelectorAll("img, svg, table").forEach(function (e) {
      if (e.tagName.toLowerCase() === "svg" && e.parentElement.closest("svg")) return;
      var it = {tag: e.tagName.toLowerCase(), box: box(e)};
      if (it.tag === "img") { it.natural = [e.naturalWidth, e.naturalHeight]; }
      fig.items.push(it);
    });
    f.querySelectorAll("*").forEach(function (e) {
      var s = getComputedStyle(e);
      if ((s.overflowX !== "visible" || s.overflowY !== "visible" || e.tagName === "TD"
           || e.tagName === "TH") && (e.scrollWidth > e.clientWidth + 1
           || e.scrollHeight > e.clientHeight + 1) && e.clientWidth > 0) {
        fig.overflowing.push([name(e), e.scrollWidth, e.clientWidth, e.scrollHeight,
                              e.clientHeight]);
      }
    });
    f.querySelectorAll("svg text, th span, th, td").forEach(function (e) {
      var holder = e.closest("svg") || e.closest("table");
      var b = e.getBoundingClientRect(), h = holder.getBoundingClientRect();
      if (b.left < h.left - 0.5 || b.right > h.right + 0.5 || b.top < h.top - 0.5
          || b.bottom > h.bottom + 0.5) {
        fig.texts.push([name(e), e.textContent.slice(0, 60)]);
      }
    });
    out.figures.push(fig);
  });
  var pre = document.createElement("pre");
  pre.id = "layout-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
"""


def wide_report(tmp_path: Path, monkeypatch) -> Path:
    """The fixture runs plus a run of two configurations with long labels, large token and
    cost figures, two epochs and the sample's longest task id (missing for the others)."""
    monkeypatch.setitem(fx.WEIGHTS, LONG_TASK, [10, 20])
    dataset = fx.make_dataset(tmp_path / "dataset-wide")
    runs = tmp_path / "runs-wide"
    run_a, run_b = fx.build_run_a(runs, dataset), fx.build_run_b(runs, dataset)
    run_c = runs / "run-c-with-a-long-name"
    agents = [
        ("claude-code", "claude-sonnet-4-5-20250929-thinking"),
        ("openclaw", "moonshotai-kimi-k2-thinking-turbo"),
    ]
    fx.write_lock(run_c, dataset, agents, epochs=2)
    for agent, model in agents:
        for task, weights in fx.WEIGHTS.items():
            for epoch in (1, 2):
                tid = fx.write_trial(
                    run_c,
                    task,
                    agent,
                    model,
                    epoch,
                    wall=12345.6,
                    turns=321,
                    cost=12.3456,
                    tokens=(12_345_678, 987_654),
                )
                fx.write_grade(
                    run_c, "checks", tid, [[fx.P, fx.F if epoch == 1 else fx.P]] * len(weights)
                )
    return write_report(
        [run_a, run_b, run_c], tmp_path / "report-wide", n_resamples=200, drilldowns="inline"
    )


def measure_layout(page: Path, width: int, profile: Path) -> dict:
    """Load a copy of ``page`` in Chromium at ``width`` px with a script that measures it (the
    copy drops the page's no-script policy) and return the measurements."""
    text = page.read_text(encoding="utf-8")
    text, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text, count=1)
    assert n == 1
    text = text.replace("</body>", f"<script>{LAYOUT_JS}</script></body>", 1)
    copy = page.with_name(f"measure-{width}.html")
    copy.write_text(text, encoding="utf-8")
    res = chromium(
        copy, profile, f"--window-size={width},1200", "--virtual-time-budget=5000", "--dump-dom"
    )
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r'<pre id="layout-measure">(.*?)</pre>', res.stdout, re.S)
    assert m, "the measuring script did not run: " + res.stderr[-2000:]
    return json.loads(html.unescape(m.group(1)))


def fits(t: dict) -> bool:
    return (
        t["scroll_width"] <= t["parent_client_width"]
        and t["parent_scroll_width"] <= t["parent_client_width"]
    )


@pytest.mark.parametrize("width", [1400, 900])
def test_page_fits_the_window(tmp_path: Path, monkeypatch, width: int):
    """At 1,400 and 900 px: the page never scrolls sideways, the leaderboard fits its box (and
    at 1,400 px every other table above the drill-downs), and every figure is wholly inside
    its box: images unscaled in one direction only, nothing in a figure
    scrolled or cut off, every label inside its table or SVG."""
    out = wide_report(tmp_path, monkeypatch)
    m = measure_layout(out / "report.html", width, tmp_path / f"profile-{width}")
    assert m["width"] <= width and m["width"] > width - 40, m["width"]
    assert m["scroll_width"] <= m["width"], (m["scroll_width"], m["width"])

    (board,) = [t for t in m["tables"] if "leaderboard" in t["cls"].split()]
    assert board["scroll_width"] <= board["parent_client_width"], board
    assert board["parent_scroll_width"] <= board["parent_client_width"], board
    # At 1,400 px every table above the drill-downs fits; at 900 px the leaderboard and its
    # further columns do (tables with a column per configuration may scroll in their box).
    main = [t for t in m["tables"] if t["before_drilldowns"]]
    assert len(main) >= 10
    checked = (
        main
        if width >= 1400
        else [t for t in main if t["cls"] in ("leaderboard", "leaderboard-more")]
    )
    assert len(checked) >= 2
    wide = [
        (t["cls"], t["heading"][:60], t["scroll_width"], t["parent_client_width"])
        for t in checked
        if not fits(t)
    ]
    assert wide == []

    assert len(m["figures"]) >= 4
    for fig in m["figures"]:
        assert fig["items"], fig["id"]
        fb = fig["box"]
        for it in fig["items"]:
            b = it["box"]
            assert b["width"] > 50 and b["height"] > 50, (fig["id"], it)
            inside = (
                b["left"] >= fb["left"] - 0.5
                and b["right"] <= fb["right"] + 0.5
                and b["right"] <= m["width"]
            )
            assert inside, (fig["id"], it, fb)
            if it["tag"] == "img":
                nw, nh = it["natural"]
                assert nw and nh, (fig["id"], it)
                assert abs(b["height"] / b["width"] - nh / nw) < 0.02, (fig["id"], it)
        assert fig["overflowing"] == [], fig["id"]
        assert fig["texts"] == [], fig["id"]
