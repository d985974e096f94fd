"""`jobbench selection fetch`: fails fast offline; downloads, converts and verifies files
from (local stand-ins for) the public sources. No test touches the internet."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import shutil
import socket
import threading
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.selection import FetchItem, FetchOfflineError, Source, _fetch, fetch, load_oews

runner = CliRunner()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch):
    """Make every DNS lookup and connection fail, as on a machine without network."""

    def refuse(*args, **kwargs):
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_offline_fails_fast_and_writes_nothing(no_network, tmp_path: Path) -> None:
    out = tmp_path / "data"
    res = runner.invoke(app, ["selection", "fetch", "--out", str(out), "--probe-timeout", "2"])
    assert res.exit_code == 2, res.output
    err = res.stderr
    assert "offline: no data source can be reached" in err
    for host in (
        "https://huggingface.co",
        "https://raw.githubusercontent.com",
        "https://www.bls.gov",
        "https://www.onetcenter.org",
    ):
        assert host in err
    assert "network disabled in tests" in err and f"Nothing was written to {out}" in err
    assert not out.exists()


def test_hf_hub_offline_is_respected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    probed = []
    with pytest.raises(FetchOfflineError, match="HF_HUB_OFFLINE is set"):
        fetch(
            tmp_path / "d", only=["desires", "capability"], prober=lambda url, t: probed.append(url)
        )
    assert probed == []  # the Hub is not even probed
    assert not (tmp_path / "d").exists()


def test_unknown_only_key(tmp_path: Path) -> None:
    res = runner.invoke(app, ["selection", "fetch", "--out", str(tmp_path), "--only", "wages"])
    assert res.exit_code == 2 and "unknown file key(s) ['wages']" in res.stderr


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _bls_zip() -> bytes:
    wb = Workbook()
    ws = wb.active
    ws.append(["AREA", "NAICS", "OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", "A_MEAN"])
    ws.append([99, "000000", "13-1111", "Management Analysts", "detailed", 1000, 100000])
    ws.append([99, "000000", "27-2011", "Actors", "detailed", 50, "*"])
    x = io.BytesIO()
    wb.save(x)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("oesm24nat/field_descriptions.xlsx", b"not this one")
        z.writestr("oesm24nat/national_M2024_dl.xlsx", x.getvalue())
    return buf.getvalue()


def test_downloads_convert_verify_and_fall_back(
    server, mini_data: Path, tmp_path: Path, monkeypatch
) -> None:
    www, base = server
    monkeypatch.setenv("HF_ENDPOINT", base)  # the Hub host probed is the local stand-in
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    shutil.copy(
        mini_data / "workbank/external/company_to_workflow_aggregation.csv", www / "companies.csv"
    )
    (www / "papers.csv").write_text("task,occupation,count\nx,y,1\n")  # wrong columns
    (www / "oesm24nat.zip").write_bytes(_bls_zip())
    (www / "tasks.txt").write_bytes(
        (mini_data / "onet/Task Statements.txt")
        .read_bytes()
        .replace(b"Analyse", "Analys\xe9".encode("cp1252"))
    )  # a Windows-1252 byte, normalised to UTF-8
    dead = f"http://127.0.0.1:{_closed_port()}"
    hub_calls = []

    def hub(name: str, revision):
        hub_calls.append((name, revision))
        return (mini_data / "workbank" / name).read_bytes()

    items = [
        FetchItem(
            key="desires",
            dest="workbank/domain_worker_desires.csv",
            sources=[Source(kind="hf", location="domain_worker_desires.csv")],
            licence="CC BY 4.0",
        ),
        FetchItem(
            key="companies",
            dest="workbank/external/company_to_workflow_aggregation.csv",
            sources=[
                Source(kind="url", location=f"{base}/missing.csv"),  # 404, then the fallback
                Source(kind="url", location=f"{base}/companies.csv"),
            ],
            licence="CC BY 4.0",
        ),
        FetchItem(
            key="papers",
            dest="workbank/external/paper_to_workflow_mapping_aggregated.csv",
            sources=[Source(kind="url", location=f"{base}/papers.csv")],
            licence="CC BY 4.0",
        ),
        FetchItem(
            key="oews",
            dest="oews/M2024_bls_wage_data.csv",
            sources=[Source(kind="bls_zip", location=f"{base}/oesm24nat.zip")],
            licence="public domain",
        ),
        FetchItem(
            key="onet_tasks",
            dest="onet/Task Statements.txt",
            sources=[Source(kind="url", location=f"{base}/tasks.txt")],
            licence="CC BY 4.0",
        ),
        FetchItem(
            key="leaderboard",
            dest="jobbench/leaderboard.json",
            sources=[Source(kind="url", location=f"{dead}/leaderboard.json")],
            licence="Apache-2.0",
        ),
    ]
    out = tmp_path / "fetched"
    report = fetch(out, items=items, hub=hub, hf_revision="abc", probe_timeout=2, timeout=5)
    status = {f.key: f.status for f in report.files}
    assert status == {
        "desires": "fetched",
        "companies": "fetched",
        "papers": "failed",
        "oews": "fetched",
        "onet_tasks": "fetched",
        "leaderboard": "failed",
    }
    assert not report.ok and hub_calls == [("domain_worker_desires.csv", "abc")]
    errors = {f.key: f.error for f in report.files if f.error}
    assert "does not load" in errors["papers"] and "column 'paper_count'" in errors["papers"]
    assert "unreachable" in errors["leaderboard"]
    assert not (out / "workbank/external/paper_to_workflow_mapping_aggregated.csv").exists()
    assert not list(out.rglob(".*.fetch"))  # no temporary file left behind
    companies = next(f for f in report.files if f.key == "companies")
    assert companies.source == f"{base}/companies.csv"
    data = (out / "workbank/external/company_to_workflow_aggregation.csv").read_bytes()
    assert companies.sha256 == hashlib.sha256(data).hexdigest() and companies.bytes == len(data)
    oews = load_oews(out / "oews/M2024_bls_wage_data.csv")
    assert (oews.get("13-1111").exposure, oews.get("27-2011").mean_wage) == (1e8, None)
    assert "Analysé" in (out / "onet/Task Statements.txt").read_text(encoding="utf-8")
    manifest = json.loads((out / "fetch_manifest.json").read_text())
    assert set(manifest["files"]) == {"desires", "companies", "oews", "onet_tasks"}
    assert manifest["files"]["desires"]["source"] == "SALT-NLP/WORKBank:domain_worker_desires.csv"
    assert "CC BY 4.0" in (out / "README.md").read_text()

    # a second run keeps what exists and only retries the rest
    again = fetch(out, items=items[:2], hub=hub, probe_timeout=2)
    assert [f.status for f in again.files] == ["kept", "kept"] and len(hub_calls) == 1
    forced = fetch(out, items=items[:1], hub=hub, force=True, probe_timeout=2)
    assert [f.status for f in forced.files] == ["fetched"] and len(hub_calls) == 2


def test_cli_reports_failures_with_exit_1(
    server, mini_data: Path, tmp_path: Path, monkeypatch
) -> None:
    www, base = server
    shutil.copy(mini_data / "jobbench/leaderboard.json", www / "lb.json")
    monkeypatch.setattr(
        _fetch,
        "DEFAULT_ITEMS",
        [
            FetchItem(
                key="leaderboard",
                dest="jobbench/leaderboard.json",
                sources=[Source(kind="url", location=f"{base}/lb.json")],
                licence="Apache-2.0",
            ),
            FetchItem(
                key="oews",
                dest="oews/M2024_bls_wage_data.csv",
                sources=[Source(kind="bls_zip", location=f"{base}/lb.json")],
                licence="public domain",
            ),
        ],
    )
    out = tmp_path / "d"
    res = runner.invoke(app, ["selection", "fetch", "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert f"fetched {out}/jobbench/leaderboard.json" in res.stdout
    assert "FAILED" in res.stdout and "not a zip file" in res.stdout
    assert json.loads((out / "jobbench/leaderboard.json").read_text()) == json.loads(
        (www / "lb.json").read_text()
    )


def test_hf_download_finds_files_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub

    calls = []
    (tmp_path / "blob").write_bytes(b"Task ID\n")

    def list_files(self, repo_id, *, revision=None, repo_type=None, token=None):
        calls.append(("list", repo_id, repo_type, revision))
        return ["README.md", "worker_data/domain_worker_desires.csv", "expert_ratings/x.csv"]

    def download(repo_id, filename, *, repo_type=None, revision=None, **kw):
        calls.append(("get", repo_id, filename, repo_type, revision))
        return str(tmp_path / "blob")

    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files", list_files)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    assert _fetch.hf_download("domain_worker_desires.csv", "v1") == b"Task ID\n"
    assert calls == [
        ("list", "SALT-NLP/WORKBank", "dataset", "v1"),
        ("get", "SALT-NLP/WORKBank", "worker_data/domain_worker_desires.csv", "dataset", "v1"),
    ]
    with pytest.raises(
        OSError, match="task_statement_with_metadata.csv is not in dataset SALT-NLP/WORKBank"
    ):
        _fetch.hf_download("task_statement_with_metadata.csv")
