from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture datasets directory, made the current directory so that problem paths
    read ``invalid/dataset/main/lawyers/task3/RUBRICS.json``."""
    monkeypatch.chdir(FIXTURES)
    return FIXTURES


# --------------------------------------------------------------------------- fake Hub
import hashlib  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402
from urllib.parse import unquote, urlsplit  # noqa: E402


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    """A Hugging Face Hub stand-in on 127.0.0.1 implementing the two endpoints a pull
    uses, for the real ``huggingface_hub`` client:

    * ``GET /api/datasets/<repo>/revision/<rev>?blobs=true`` → ``{"id", "sha", "siblings":
      [{"rfilename", "size", "blobId", "lfs"?}]}``; 404 with ``X-Error-Code:
      RepoNotFound`` / ``RevisionNotFound``;
    * ``HEAD``/``GET /datasets/<repo>/resolve/<rev>/<path>`` → bytes with ``X-Repo-Commit``,
      ``ETag`` (and ``X-Linked-Etag``/``X-Linked-Size`` for LFS files).

    ``commits`` maps a 40-hex sha to ``{path: bytes}``; ``refs`` maps branch/tag names to
    shas. ``lfs`` paths are announced as LFS (sha256). ``serve_instead`` replaces the bytes
    served for a path (metadata unchanged) to simulate corruption; ``stall`` makes GETs of
    a path wait until ``release`` is set (or 60 s); ``status_for`` answers a path with an
    HTTP error. Every request is logged in ``requests`` as ``(method, path)``.
    """

    def __init__(
        self,
        repo_id: str,
        commits: dict[str, dict[str, bytes]],
        refs: dict[str, str],
        lfs: set[str] = frozenset(),
    ):
        self.repo_id = repo_id
        self.commits = commits
        self.refs = refs
        self.lfs = set(lfs)
        self.serve_instead: dict[str, bytes] = {}
        self.stall: set[str] = set()
        self.status_for: dict[str, int] = {}
        self.api_delay: float = 0.0
        self.release = threading.Event()
        self.stalled = threading.Event()
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                hub._handle(self, head=False)

            def do_HEAD(self) -> None:
                hub._handle(self, head=True)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # clients that hang up
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def _resolve(self, rev: str) -> str | None:
        if rev in self.commits:
            return rev
        return self.refs.get(rev)

    def _send(
        self, h, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False
    ) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def _handle(self, h, head: bool) -> None:
        path = unquote(urlsplit(h.path).path)
        self.requests.append(("HEAD" if head else "GET", path))
        api = f"/api/datasets/{self.repo_id}/revision/"
        resolve = f"/datasets/{self.repo_id}/resolve/"
        if path.startswith(api):
            if self.api_delay:
                self.release.wait(self.api_delay)
            sha = self._resolve(path[len(api) :])
            if sha is None:
                return self._send(
                    h,
                    404,
                    b'{"error": "Invalid rev id"}',
                    {"X-Error-Code": "RevisionNotFound", "Content-Type": "application/json"},
                )
            siblings = []
            for name, data in sorted(self.commits[sha].items()):
                sib = {"rfilename": name, "size": len(data), "blobId": git_blob_sha1(data)}
                if name in self.lfs:
                    sib["lfs"] = {
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "size": len(data),
                        "pointerSize": 134,
                    }
                siblings.append(sib)
            body = json.dumps(
                {"id": self.repo_id, "sha": sha, "private": False, "siblings": siblings}
            ).encode()
            return self._send(h, 200, body, {"Content-Type": "application/json"})
        if path.startswith(resolve):
            rev, _, name = path[len(resolve) :].partition("/")
            sha = self._resolve(rev)
            if sha is None or name not in self.commits[sha]:
                return self._send(
                    h,
                    404,
                    b"not found",
                    {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha or ""},
                )
            if name in self.status_for:
                return self._send(h, self.status_for[name], b"boom", {"X-Repo-Commit": sha})
            data = self.commits[sha][name]
            etag = hashlib.sha256(data).hexdigest() if name in self.lfs else git_blob_sha1(data)
            headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"'}
            if name in self.lfs:
                headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))})
            if not head and name in self.stall:
                self.stalled.set()
                self.release.wait(60)
            return self._send(h, 200, self.serve_instead.get(name, data), headers, head=head)
        if path.startswith("/api/datasets/"):
            return self._send(
                h,
                404,
                b'{"error": "Repository not found"}',
                {"X-Error-Code": "RepoNotFound", "Content-Type": "application/json"},
            )
        self._send(h, 404, b"no route")


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` as ``{posix relative path: bytes}``."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No token, no user cache, no offline flag, no real endpoint leaks into a test."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    for var in (
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HF_ENDPOINT",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def make_hub(hub_env: Path):
    """Factory ``make_hub(repo_id, commits, refs, lfs=...) -> FakeHub``; servers are closed
    after the test."""
    hubs: list[FakeHub] = []

    def make(*args, **kwargs) -> FakeHub:
        h = FakeHub(*args, **kwargs)
        hubs.append(h)
        return h

    yield make
    for h in hubs:
        h.close()


@pytest.fixture
def helpers():
    """Plain helper functions for test modules (importlib mode forbids importing conftest)."""

    class H:
        tree_bytes = staticmethod(tree_bytes)
        git_blob_sha1 = staticmethod(git_blob_sha1)

    return H
