"""``jobbench selection fetch``: download the selection data from its public sources.

Sources (pinned where the host allows):

* WORKBank ratings and task metadata: Hugging Face dataset ``SALT-NLP/WORKBank`` (CC BY 4.0)
  via ``huggingface_hub``; files are found by name in the dataset's file list.
* WORKBank external mappings (YC companies, arXiv papers): GitHub ``SALT-NLP/workbank`` at
  commit ``6845ff5``, folder ``external_data/``.
* OEWS May 2024 national: BLS ``oesm24nat.zip`` (``national_M2024_dl.xlsx``, converted to
  CSV); fallback: the CSV copy WORKBank used (same GitHub commit).
* O*NET 29.2 Task Statements and O*NET 24.3 Occupation Data (the last O*NET-SOC 2010
  release; JobBench's occupation names are 2010 titles): O*NET Resource Center, CC BY 4.0.
* JobBench public leaderboard: GitHub ``Job-Bench/Job-Bench.github.io`` at commit
  ``3b41b4d``, ``src/data/leaderboard.json``.

Before writing anything, every host is probed; when none answers the command stops at
once with :class:`FetchOfflineError`. Each file is written atomically and checked with its
loader before it replaces anything; ``fetch_manifest.json`` records source, size and sha256.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel

from .. import __version__
from .._io import atomic_write_bytes, atomic_write_json, atomic_write_text
from ._errors import DataFileError

HF_REPO = "SALT-NLP/WORKBank"
WORKBANK_GIT = "https://raw.githubusercontent.com/SALT-NLP/workbank/6845ff511612c930419d25f300d9580290659003/external_data/"
LEADERBOARD_URL = (
    "https://raw.githubusercontent.com/Job-Bench/Job-Bench.github.io/"
    "3b41b4db9451dffd2892c6ccbe8c895742fe17e7/src/data/leaderboard.json"
)
BLS_OEWS_ZIP = "https://www.bls.gov/oes/special-requests/oesm24nat.zip"
ONET_TASKS_URL = "https://www.onetcenter.org/dl_files/database/db_29_2_text/Task%20Statements.txt"
ONET_OCC2010_URL = "https://www.onetcenter.org/dl_files/database/db_24_3_text/Occupation%20Data.txt"
HF_HOST = "https://huggingface.co"
USER_AGENT = f"jobbench/{__version__} (research; selection data fetch)"
MAX_BYTES = 256 * 1024 * 1024


class FetchOfflineError(RuntimeError):
    """No source host can be reached (or ``HF_HUB_OFFLINE`` forbids the Hub); nothing was
    written."""


class Source(BaseModel):
    """Where one file can be downloaded from.

    Attributes:
        kind: ``hf`` (file of the ``SALT-NLP/WORKBank`` dataset found by base name),
            ``url`` (plain HTTPS download) or ``bls_zip`` (BLS zip holding the national
            xlsx, converted to CSV).
        location: the file base name (``hf``) or URL.
    """

    kind: Literal["hf", "url", "bls_zip"]
    location: str

    @property
    def host(self) -> str:
        """The base URL probed for reachability."""
        if self.kind == "hf":
            return os.environ.get("HF_ENDPOINT", HF_HOST)
        parts = urlsplit(self.location)
        return f"{parts.scheme}://{parts.netloc}"


class FetchItem(BaseModel):
    """One file to fetch: its key (a :data:`jobbench.selection.LAYOUT` key or
    ``worker_metadata``), destination relative to the output directory, sources in order
    of preference, and a licence/attribution line."""

    key: str
    dest: str
    sources: list[Source]
    licence: str


_WB = "CC BY 4.0 (WORKBank codebook); cite Shao et al. 2025, arXiv:2506.06576"
_ONET = (
    "CC BY 4.0: This data includes information from the O*NET Database by the U.S. Department of Labor, "
    "Employment and Training Administration (USDOL/ETA). Used under the CC BY 4.0 license."
)

DEFAULT_ITEMS: list[FetchItem] = [
    FetchItem(
        key="desires",
        dest="workbank/domain_worker_desires.csv",
        sources=[Source(kind="hf", location="domain_worker_desires.csv")],
        licence=_WB,
    ),
    FetchItem(
        key="capability",
        dest="workbank/expert_rated_technological_capability.csv",
        sources=[Source(kind="hf", location="expert_rated_technological_capability.csv")],
        licence=_WB,
    ),
    FetchItem(
        key="task_metadata",
        dest="workbank/task_statement_with_metadata.csv",
        sources=[Source(kind="hf", location="task_statement_with_metadata.csv")],
        licence=_WB,
    ),
    FetchItem(
        key="worker_metadata",
        dest="workbank/domain_worker_metadata.csv",
        sources=[Source(kind="hf", location="domain_worker_metadata.csv")],
        licence=_WB,
    ),
    FetchItem(
        key="companies",
        dest="workbank/external/company_to_workflow_aggregation.csv",
        sources=[Source(kind="url", location=WORKBANK_GIT + "company_to_workflow_aggregation.csv")],
        licence=_WB,
    ),
    FetchItem(
        key="papers",
        dest="workbank/external/paper_to_workflow_mapping_aggregated.csv",
        sources=[
            Source(kind="url", location=WORKBANK_GIT + "paper_to_workflow_mapping_aggregated.csv")
        ],
        licence=_WB,
    ),
    FetchItem(
        key="oews",
        dest="oews/M2024_bls_wage_data.csv",
        sources=[
            Source(kind="bls_zip", location=BLS_OEWS_ZIP),
            Source(kind="url", location=WORKBANK_GIT + "M2024_bls_wage_data.csv"),
        ],
        licence="public domain (U.S. Bureau of Labor Statistics, OEWS May 2024)",
    ),
    FetchItem(
        key="onet_tasks",
        dest="onet/Task Statements.txt",
        sources=[Source(kind="url", location=ONET_TASKS_URL)],
        licence=_ONET,
    ),
    FetchItem(
        key="onet_occupations",
        dest="onet/onet_soc2010_occupation_data.txt",
        sources=[Source(kind="url", location=ONET_OCC2010_URL)],
        licence=_ONET,
    ),
    FetchItem(
        key="leaderboard",
        dest="jobbench/leaderboard.json",
        sources=[Source(kind="url", location=LEADERBOARD_URL)],
        licence="Apache-2.0 (Job-Bench/Job-Bench.github.io)",
    ),
]
"""Every file ``jobbench selection fetch`` downloads, in order."""


class FetchedFile(BaseModel):
    """Outcome for one item: ``status`` is ``fetched``, ``kept`` (already present, not
    forced) or ``failed`` (``error`` says why, per source tried)."""

    key: str
    path: str
    status: Literal["fetched", "kept", "failed"]
    source: str | None = None
    bytes: int | None = None
    sha256: str | None = None
    error: str | None = None


class FetchReport(BaseModel):
    """Outcome of :func:`fetch`: output directory and one :class:`FetchedFile` per item."""

    out_dir: str
    files: list[FetchedFile]

    @property
    def ok(self) -> bool:
        """True when no item failed."""
        return all(f.status != "failed" for f in self.files)


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def probe(base_url: str, timeout: float) -> str | None:
    """Try one HEAD request to ``base_url``. Returns None when the host answered (any HTTP
    status), else a short reason (DNS failure, refused, timeout, …)."""
    req = urllib.request.Request(
        base_url.rstrip("/") + "/", method="HEAD", headers={"User-Agent": USER_AGENT}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None
    except urllib.error.URLError as exc:
        return str(exc.reason)
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def http_get(url: str, timeout: float) -> bytes:
    """Download ``url`` (User-Agent :data:`USER_AGENT`, size cap :data:`MAX_BYTES`).

    Raises:
        OSError: network failure or HTTP error status (message includes the status).
    """
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise OSError(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise OSError(str(exc.reason)) from None
    if len(data) > MAX_BYTES:
        raise OSError(f"more than {MAX_BYTES} bytes")
    return data


def hf_download(filename: str, revision: str | None = None) -> bytes:
    """Download the file of dataset :data:`HF_REPO` whose base name is ``filename``.

    Raises:
        OSError: the file is not in the dataset, or the Hub call failed.
    """
    from huggingface_hub import HfApi, hf_hub_download

    try:
        files = HfApi().list_repo_files(HF_REPO, repo_type="dataset", revision=revision)
        matches = sorted(f for f in files if f.rsplit("/", 1)[-1] == filename)
        if not matches:
            raise OSError(f"{filename} is not in dataset {HF_REPO}")
        local = hf_hub_download(HF_REPO, matches[0], repo_type="dataset", revision=revision)
    except OSError:
        raise
    except Exception as exc:  # huggingface_hub raises its own HTTP/offline errors
        raise OSError(f"{type(exc).__name__}: {exc}") from None
    return Path(local).read_bytes()


def xlsx_to_csv(data: bytes) -> bytes:
    """Convert the first sheet of an xlsx (bytes) to UTF-8 CSV bytes (header as found;
    integers written without decimals; empty cells empty)."""
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    ws = wb.worksheets[0]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in ws.iter_rows(values_only=True):
        if row is None or all(v is None for v in row):
            continue
        cells = []
        for v in row:
            if v is None:
                cells.append("")
            elif isinstance(v, float) and v.is_integer():
                cells.append(str(int(v)))
            else:
                cells.append(str(v))
        w.writerow(cells)
    wb.close()
    return buf.getvalue().encode("utf-8")


def bls_zip_to_csv(data: bytes) -> bytes:
    """Extract ``national_M*_dl.xlsx`` from the BLS OEWS zip and convert it to CSV.

    Raises:
        OSError: not a zip, or no national workbook inside.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise OSError("BLS download is not a zip file (blocked or moved?)") from None
    names = [
        n
        for n in zf.namelist()
        if n.rsplit("/", 1)[-1].lower().startswith("national_m") and n.lower().endswith(".xlsx")
    ]
    if not names:
        raise OSError(f"no national_M*_dl.xlsx in the BLS zip (members: {zf.namelist()[:5]})")
    info = zf.getinfo(names[0])
    if info.file_size > MAX_BYTES:
        raise OSError("workbook in the BLS zip is too large")
    return xlsx_to_csv(zf.read(info))


def _as_utf8(data: bytes) -> bytes:
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace").encode("utf-8")


def verify(key: str, path: Path) -> None:
    """Check a fetched file with its loader.

    Raises:
        DataFileError: the file does not load (names the file and column).
    """
    from ._attention import load_leaderboard
    from ._oews import load_oews
    from ._onet import load_onet_occupations, load_onet_tasks
    from ._table import read_table
    from ._workbank import (
        load_attention_mapping,
        load_expert_capability,
        load_task_metadata,
        load_worker_desires,
    )

    checks: dict[str, Callable[[Path], object]] = {
        "desires": load_worker_desires,
        "capability": load_expert_capability,
        "task_metadata": load_task_metadata,
        "worker_metadata": lambda p: read_table(
            p, ["User ID"], what="WORKBank worker metadata file"
        ),
        "companies": lambda p: load_attention_mapping(p, "companies"),
        "papers": lambda p: load_attention_mapping(p, "papers"),
        "oews": load_oews,
        "onet_tasks": load_onet_tasks,
        "onet_occupations": load_onet_occupations,
        "leaderboard": load_leaderboard,
    }
    check = checks.get(key)
    if check is not None:
        check(path)


def fetch(
    out_dir: Path | str,
    *,
    force: bool = False,
    timeout: float = 30.0,
    probe_timeout: float = 8.0,
    only: list[str] | None = None,
    items: list[FetchItem] | None = None,
    hf_revision: str | None = None,
    getter: Callable[[str, float], bytes] = http_get,
    hub: Callable[[str, str | None], bytes] = hf_download,
    prober: Callable[[str, float], str | None] = probe,
) -> FetchReport:
    """Download the selection data into ``out_dir`` (layout of
    :data:`jobbench.selection.LAYOUT`).

    Args:
        out_dir: destination directory (created).
        force: re-download files that already exist (otherwise they are kept).
        timeout: seconds per download request; ``probe_timeout`` per reachability probe.
        only: restrict to these item keys.
        items: override the list of files (default :data:`DEFAULT_ITEMS`).
        hf_revision: Hugging Face revision (branch, tag or commit) of ``SALT-NLP/WORKBank``.
        getter, hub, prober: injectable network functions (tests use local stand-ins).

    Returns:
        a :class:`FetchReport`; a failed file leaves any previous copy untouched.

    Raises:
        FetchOfflineError: before writing anything, when no needed host answers, or when
            only Hugging Face files are needed and ``HF_HUB_OFFLINE`` is set.
        ValueError: unknown key in ``only``.
    """
    out = Path(out_dir)
    items = list(items if items is not None else DEFAULT_ITEMS)
    if only:
        unknown = set(only) - {i.key for i in items}
        if unknown:
            raise ValueError(
                f"unknown file key(s) {sorted(unknown)}; choose from {[i.key for i in items]}"
            )
        items = [i for i in items if i.key in only]
    todo = [i for i in items if force or not (out / i.dest).exists()]
    report = [
        FetchedFile(key=i.key, path=str(out / i.dest), status="kept")
        for i in items
        if i not in todo
    ]
    if todo:
        hf_off = _truthy("HF_HUB_OFFLINE")
        hosts: dict[str, str | None] = {}
        for item in todo:
            for s in item.sources:
                if s.kind == "hf" and hf_off:
                    hosts.setdefault(s.host, "HF_HUB_OFFLINE is set")
                elif s.host not in hosts:
                    hosts[s.host] = prober(s.host, probe_timeout)
        if all(reason is not None for reason in hosts.values()):
            detail = "; ".join(f"{h}: {r}" for h, r in hosts.items())
            raise FetchOfflineError(
                f"offline: no data source can be reached ({detail}). Nothing was written to {out}. "
                "Connect to the internet, or download the files listed in docs/selection.md by hand "
                "and pass their paths (--data-dir or per-file options)."
            )
    for item in todo:
        dest = out / item.dest
        errors = []
        for s in item.sources:
            reason = hosts.get(s.host)
            if reason is not None:
                errors.append(f"{s.location}: unreachable ({reason})")
                continue
            try:
                if s.kind == "hf":
                    data = hub(s.location, hf_revision)
                else:
                    data = getter(s.location, timeout)
                    if s.kind == "bls_zip":
                        data = bls_zip_to_csv(data)
                    elif dest.suffix in {".txt", ".csv"}:
                        data = _as_utf8(data)
            except OSError as exc:
                errors.append(f"{s.location}: {exc}")
                continue
            tmp = dest.with_name(f".{dest.name}.fetch")
            atomic_write_bytes(tmp, data)
            try:
                verify(item.key, tmp)
            except DataFileError as exc:
                tmp.unlink(missing_ok=True)
                errors.append(
                    f"{s.location}: downloaded file does not load: {exc.detail}"
                    + (f" (column {exc.column!r})" if exc.column else "")
                )
                continue
            os.replace(tmp, dest)
            report.append(
                FetchedFile(
                    key=item.key,
                    path=str(dest),
                    status="fetched",
                    source=f"{HF_REPO}:{s.location}" if s.kind == "hf" else s.location,
                    bytes=len(data),
                    sha256=hashlib.sha256(data).hexdigest(),
                )
            )
            break
        else:
            report.append(
                FetchedFile(key=item.key, path=str(dest), status="failed", error="; ".join(errors))
            )
    order = {i.key: n for n, i in enumerate(items)}
    report.sort(key=lambda f: order[f.key])
    result = FetchReport(out_dir=str(out), files=report)
    if any(f.status == "fetched" for f in report):
        _write_manifest(out, result, items)
    return result


def _write_manifest(out: Path, report: FetchReport, items: list[FetchItem]) -> None:
    manifest_path = out / "fetch_manifest.json"
    previous: dict = {}
    if manifest_path.exists():
        import json

        try:
            previous = json.loads(manifest_path.read_text(encoding="utf-8")).get("files", {})
        except (ValueError, OSError):
            previous = {}
    now = datetime.now(UTC).isoformat(timespec="seconds")
    licences = {i.key: i.licence for i in items}
    for f in report.files:
        if f.status == "fetched":
            previous[f.key] = {
                "path": str(Path(f.path).relative_to(out)),
                "source": f.source,
                "bytes": f.bytes,
                "sha256": f.sha256,
                "fetched_at": now,
                "licence": licences[f.key],
            }
    atomic_write_json(manifest_path, {"jobbench_version": __version__, "files": previous})
    lines = [
        "# Selection data fetched by `jobbench selection fetch`\n",
        "\nSee `fetch_manifest.json` for sources, sizes and sha256. Licences and attribution:\n\n",
    ]
    lines += [f"- `{v['path']}`: {v['licence']}\n" for _, v in sorted(previous.items())]
    atomic_write_text(out / "README.md", "".join(lines))
