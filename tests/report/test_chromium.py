"""report.html in headless Chromium: no console messages, leaderboard, figures, live links.

Chromium comes from apt (`scripts/setup.sh --dev`); without it these tests are skipped.
"""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from jobbench.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="/usr/bin/chromium is absent (install: apt-get install -y --no-install-recommends chromium)",
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
