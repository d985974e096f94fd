"""Download the public JobBench dataset from the Hugging Face Hub, verified and pinned.

``pull_dataset`` resolves a branch or tag to an exact commit, downloads every selected file
of that commit (never of a moving branch) into a staging directory beside the destination,
verifies each file against the Hub's own metadata, writes a provenance manifest, and only
then swaps the staging directory into place. A failed, rejected or interrupted pull leaves
the previous copy exactly as it was.

Facts used (sources):

* The dataset is the Hub dataset repository ``JobBench/job-bench``
  (https://huggingface.co/datasets/JobBench/job-bench): ``dataset/`` holds the ``main``
  split and ``dataset_easy/`` the ``easy`` split, each ``<occupation>/taskN/``; the parquet
  files beside them are flat mirrors we do not need. The public tools download it the same
  way (``scripts/sync_dataset.py`` of ``Job-Bench/job-bench-eval``).
* ``GET /api/datasets/{repo}/revision/{rev}?blobs=true`` (``HfApi.dataset_info(...,
  files_metadata=True)``) returns the commit ``sha`` and, per file, ``size``, ``blobId``
  (the git blob sha1: sha1 of ``b"blob <size>\\0" + content``) and, for LFS/Xet files,
  ``lfs.sha256`` (sha256 of the content).
* The public dataset sync (``scripts/sync_dataset.py``, DESIGN §8) manages only a task's
  sources (``task_card.md``, ``RUBRICS.json``, ``task_folder/**``,
  ``files_required_to_search/**``); everything else inside a task folder (``model_output/``,
  ``model_traj/``, ``eval_result/``, notes) survives a refresh, and replaced sources and
  retired tasks are kept under ``.setup/backups/``.

Re-pulling into a previous pull keeps what the previous pull did not write: every file the
old manifest does not list, outside a task's source folders, is carried into the new copy
(hard-linked, so nothing is copied or doubled on disk), except inside retired tasks. Source
files the new revision replaces or deletes (or that were edited locally), files found in a
task's source folders that no manifest lists, and whole retired tasks with their results go
to ``DEST/.setup/backups/<UTC time>-<random>/`` (``sources/…``, ``retired/…`` and a
``refresh.json`` listing them) in the new copy. All of this is done in the staging directory
before the swap, so the previous copy is never modified.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fnmatch
import hashlib
import os
import queue
import re
import secrets
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._proc import left_by_dead_process, owned_prefix
from ._load import sha256_file

DEFAULT_REPO_ID = "JobBench/job-bench"
"""The public JobBench dataset on the Hugging Face Hub (a dataset repository)."""
DEFAULT_REVISION = "main"
DEFAULT_PATTERNS: tuple[str, ...] = ("dataset/**", "dataset_easy/**", "README.md")
"""What a pull selects: both task trees and the dataset card (not the parquet mirrors)."""
MANIFEST = "jobbench-dataset.json"
"""Provenance manifest written at the top of a pulled dataset."""
DEFAULT_TIMEOUT = 5.0
"""Seconds to wait for the Hub to connect or answer one request before giving up (file
bodies stream under ``HF_HUB_DOWNLOAD_TIMEOUT``, default 10 s between chunks)."""

_COMMIT_RE = re.compile(r"[0-9a-f]{40}")
_TRUE = {"1", "true", "yes", "on"}


class DatasetPullError(RuntimeError):
    """A pull failed; the destination (if any) was left untouched. The message says why
    and what to do."""


class DatasetOfflineError(DatasetPullError):
    """The Hub cannot be reached (no network, time-out, DNS/TLS failure) or
    ``HF_HUB_OFFLINE`` is set; nothing was written. ``jobbench dataset pull`` exits with
    :data:`jobbench._exitcodes.EXIT_OFFLINE` (3) for it, as ``jobbench selection fetch`` does."""


class PulledFile(BaseModel):
    """One verified file of a pulled dataset.

    Attributes:
        path: POSIX path relative to the dataset root (as in the repository).
        size: bytes.
        sha256: hex sha256 of the bytes on disk (verified).
        hub_hash: the hash the Hub published for it, ``sha256:<hex>`` for LFS/Xet files or
            ``git-sha1:<hex>`` (git blob id) for the others; it matched.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    size: int
    sha256: str
    hub_hash: str


class PullRefresh(BaseModel):
    """What a pull into a previous pull kept, replaced and moved aside (not stored in the
    manifest; the backup folder's ``refresh.json`` holds the lists).

    Attributes:
        from_commit: the commit of the previous copy.
        added, updated, deleted: source files new in, changed by, or gone from this revision
            (repository paths), retired tasks excluded.
        kept: local files carried over (outputs, results, notes; paths inside ``DEST``).
        backed_up: files of the previous copy saved under ``backup`` (``sources/<path>``):
            replaced or deleted sources, local edits of sources, unlisted files in source
            folders, and files that collide with a new source.
        retired_tasks: task folders gone from this revision, moved to ``backup/retired/``
            with everything they held.
        backup: the backup folder (absolute), or None when nothing needed one.
    """

    model_config = ConfigDict(frozen=True)

    from_commit: str
    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    backed_up: list[str] = Field(default_factory=list)
    retired_tasks: list[str] = Field(default_factory=list)
    backup: str | None = None


class PullManifest(BaseModel):
    """Provenance of a pulled dataset, stored as ``jobbench-dataset.json`` at its root.

    Attributes:
        repo_id: Hub repository (``JobBench/job-bench``); ``repo_type`` is ``dataset``.
        revision: what was asked for (branch, tag or commit).
        commit: the exact 40-hex commit every file was downloaded from.
        endpoint: the Hub URL used.
        pulled_at: UTC time the pull finished (ISO 8601).
        allow_patterns: the file patterns selected.
        files: every file, sorted by path.
        tasks: number of loadable tasks per split (``{"main": 65, "easy": 63}``).
        jobbench_version, huggingface_hub_version: the software that pulled it.
        changed: False when the destination already held this commit intact (nothing was
            downloaded). Not stored in the file.
        refresh: for a pull into a previous pull, what was kept, replaced and moved aside
            (:class:`PullRefresh`); None for a first pull. Not stored in the file.
    """

    model_config = ConfigDict(frozen=True)

    repo_id: str
    repo_type: str = "dataset"
    revision: str
    commit: str
    endpoint: str
    pulled_at: str
    allow_patterns: list[str]
    files: list[PulledFile]
    tasks: dict[str, int] = Field(default_factory=dict)
    jobbench_version: str = ""
    huggingface_hub_version: str = ""
    changed: bool = Field(default=True, exclude=True)
    refresh: PullRefresh | None = Field(default=None, exclude=True)


def read_manifest(dest: Path | str) -> PullManifest | None:
    """The manifest of a pulled dataset at ``dest``, or None when there is none (or it is
    unreadable)."""
    path = Path(dest) / MANIFEST
    try:
        return PullManifest.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


def _offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) as set now or when
    ``huggingface_hub`` was imported."""
    env = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    if env.strip().lower() in _TRUE:
        return True
    from huggingface_hub import constants

    return bool(getattr(constants, "HF_HUB_OFFLINE", False))


def _safe_repo_path(name: str) -> bool:
    parts = name.split("/")
    return (
        bool(name)
        and "\\" not in name
        and "\0" not in name
        and all(p not in ("", ".", "..") for p in parts)
    )


def _git_blob_sha1(path: Path, size: int) -> str:
    h = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _cleanup_stale(parent: Path, name: str, dest: Path) -> None:
    """Remove staging directories left by pulls that were killed, and restore a previous
    copy stranded by a swap interrupted between its two renames."""
    for p in parent.glob(f".{name}.pull-*"):
        if left_by_dead_process(p.name, f".{name}.pull-"):
            shutil.rmtree(p, ignore_errors=True)
    olds = sorted(parent.glob(f".{name}.old-*"))
    if olds and not dest.exists() and len(olds) == 1:
        os.rename(olds[0], dest)
        olds = []
    for p in olds:
        if left_by_dead_process(p.name, f".{name}.old-"):
            shutil.rmtree(p, ignore_errors=True)


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux ``renameat2(RENAME_EXCHANGE)``); False when
    the platform or file system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD = -100
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    rc = renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _install(staging: Path, dest: Path) -> None:
    """Put ``staging`` at ``dest``; the previous ``dest`` (if any) ends up deleted.

    Atomic where ``renameat2`` exists: readers see the old tree or the new one. Elsewhere
    two renames, with the old copy restored if the second fails (and by the next pull if
    the process dies between them)."""
    if not dest.exists():
        os.rename(staging, dest)
        return
    if _exchange(staging, dest):
        shutil.rmtree(staging, ignore_errors=True)  # now holds the previous copy
        return
    old = dest.parent / f"{owned_prefix(f'.{dest.name}.old-')}{secrets.token_hex(4)}"
    os.rename(dest, old)
    try:
        os.rename(staging, dest)
    except BaseException:
        os.rename(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _describe_http(exc: BaseException) -> str:
    """A one-line reason: the HTTP status (searched along the exception chain, since
    ``huggingface_hub`` wraps the real error) and the innermost message."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in chain and len(chain) < 10:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    status = next(
        (
            getattr(getattr(e, "response", None), "status_code", None)
            for e in chain
            if isinstance(getattr(getattr(e, "response", None), "status_code", None), int)
        ),
        None,
    )
    inner = chain[-1]
    text = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
    return f"HTTP {status}: {text}" if status else f"{type(inner).__name__}: {text}"


def _resolve(api: Any, repo_id: str, revision: str, endpoint: str, timeout: float) -> Any:
    from huggingface_hub.utils import (
        HfHubHTTPError,
        HFValidationError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return api.dataset_info(repo_id, revision=revision, files_metadata=True, timeout=timeout)
    except HFValidationError as exc:
        raise DatasetPullError(f"invalid repository id or revision: {exc}") from exc
    except RevisionNotFoundError as exc:
        raise DatasetPullError(
            f"revision {revision!r} not found in dataset {repo_id} on {endpoint} (give a branch, "
            "tag or 40-hex commit that exists)"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise DatasetPullError(
            f"dataset repository {repo_id} not found on {endpoint} (check --repo-id; private or "
            "gated repositories need a token: `hf auth login` or HF_TOKEN)"
        ) from exc
    except HfHubHTTPError as exc:
        raise DatasetPullError(
            f"the Hub at {endpoint} refused the request for {repo_id}: {_describe_http(exc)}"
        ) from exc
    except Exception as exc:  # connection refused, DNS, TLS, timeouts (types vary by version)
        raise DatasetOfflineError(
            f"cannot reach the Hugging Face Hub at {endpoint} ({type(exc).__name__}: {exc}); "
            "check the network, proxy and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to fail at once "
            "when offline"
        ) from exc


def _download_all(
    names: list[str],
    fetch: Callable[[str], None],
    workers: int,
    progress: Callable[[str], None] | None,
) -> None:
    """Run ``fetch(name)`` for every name on daemon threads; the calling thread only waits
    (in short slices, so Ctrl-C is handled at once) and re-raises the first failure."""
    todo: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[str, BaseException | None]] = queue.SimpleQueue()
    stop = threading.Event()
    for n in names:
        todo.put(n)

    def worker() -> None:
        while not stop.is_set():
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            if name is None:
                return
            try:
                fetch(name)
                done.put((name, None))
            except BaseException as exc:  # reported to the waiting thread
                done.put((name, exc))

    threads = [
        threading.Thread(target=worker, daemon=True, name=f"jobbench-pull-{i}")
        for i in range(max(1, workers))
    ]
    for t in threads:
        t.start()
    try:
        for count in range(1, len(names) + 1):
            while True:
                try:
                    name, failure = done.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            if failure is not None:
                raise failure
            if progress is not None:
                progress(f"[{count}/{len(names)}] {name}")
    except BaseException as exc:
        stop.set()
        if not isinstance(exc, KeyboardInterrupt):
            # let in-flight downloads end (bounded) so that clean-up is not raced
            for t in threads:
                t.join(timeout=5)
        raise


def pull_dataset(
    dest: Path | str,
    *,
    repo_id: str = DEFAULT_REPO_ID,
    revision: str = DEFAULT_REVISION,
    endpoint: str | None = None,
    token: str | bool | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    allow_patterns: tuple[str, ...] | list[str] = DEFAULT_PATTERNS,
    workers: int = 8,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PullManifest:
    """Download a JobBench dataset from the Hub into ``dest``, pinned, verified, atomically.

    Steps: resolve ``revision`` to a commit (one API call); if ``dest`` already holds that
    commit with every file intact, stop (``changed=False``) unless ``force``; download every
    file matching ``allow_patterns`` *at that commit* into ``.<dest>.pull-<pid>-<random>``
    beside ``dest``; check that the set of files, every size and every hash (sha256 for
    LFS/Xet files, git blob sha1 otherwise) match the Hub's metadata; check that it holds
    tasks; write :data:`MANIFEST`; then swap it into place.

    Args:
        dest: destination directory (created; its parent too). If it exists it must be a
            previous pull (holds :data:`MANIFEST`) or empty; anything else is refused.
        repo_id: Hub dataset repository.
        revision: branch, tag or commit.
        endpoint: Hub URL; default ``$HF_ENDPOINT`` or ``https://huggingface.co``.
        token: Hub token; None = the usual ``huggingface_hub`` lookup (HF_TOKEN, login),
            False = send none.
        timeout: seconds per request before giving up (connect and read).
        allow_patterns: fnmatch patterns of repository paths to fetch.
        workers: parallel downloads.
        force: download even when ``dest`` already holds the commit.
        progress: called with one line per finished file.

    Returns:
        The manifest written (``changed`` says whether anything was downloaded).

    Raises:
        DatasetPullError: offline (``HF_HUB_OFFLINE``), Hub unreachable or refusing, unknown
            repo/revision, unsafe paths in the listing, missing hashes, any size/hash/file-set
            mismatch, no tasks, or an unsuitable ``dest``. ``dest`` is then untouched and the
            staging directory removed.
        KeyboardInterrupt: passed on after the same clean-up.
    """
    dest = Path(os.path.abspath(dest))
    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    if _offline():
        raise DatasetOfflineError(
            f"offline mode is on (HF_HUB_OFFLINE is set): cannot download {repo_id}. Unset "
            "HF_HUB_OFFLINE, or copy a dataset by other means and check it with `jobbench "
            "validate`."
        )
    if dest.exists() and not dest.is_dir():
        raise DatasetPullError(f"{dest}: exists and is not a directory")
    if dest.is_dir() and not (dest / MANIFEST).is_file() and any(dest.iterdir()):
        raise DatasetPullError(
            f"{dest}: exists, is not empty and was not made by `jobbench dataset pull`; "
            "choose another --dest or remove it"
        )
    parent = dest.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetPullError(f"{parent}: cannot create ({exc.strerror})") from exc

    import fcntl

    lock_path = parent / f".{dest.name}.pull.lock"
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise DatasetPullError(
                f"another `jobbench dataset pull` into {dest} is running"
            ) from exc
        _cleanup_stale(parent, dest.name, dest)
        return _pull_locked(
            dest,
            repo_id,
            revision,
            endpoint,
            token,
            timeout,
            list(allow_patterns),
            workers,
            force,
            progress,
        )


def _pull_locked(
    dest: Path,
    repo_id: str,
    revision: str,
    endpoint: str,
    token: str | bool | None,
    timeout: float,
    patterns: list[str],
    workers: int,
    force: bool,
    progress: Callable[[str], None] | None,
) -> PullManifest:
    import huggingface_hub
    from huggingface_hub import HfApi, hf_hub_download

    api = HfApi(endpoint=endpoint, token=token)
    info = _resolve(api, repo_id, revision, endpoint, timeout)
    commit = getattr(info, "sha", None)
    if not isinstance(commit, str) or not _COMMIT_RE.fullmatch(commit):
        raise DatasetPullError(
            f"the Hub at {endpoint} did not return an exact commit for {repo_id}@{revision}"
        )

    expected: dict[str, Any] = {}
    for sib in getattr(info, "siblings", None) or []:
        name = sib.rfilename
        if not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        if not _safe_repo_path(name):
            raise DatasetPullError(
                f"{repo_id}@{commit[:12]} lists an unsafe path {name!r}; refusing to download"
            )
        lfs = getattr(sib, "lfs", None)
        lfs_sha = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
        if not isinstance(sib.size, int) or not (lfs_sha or getattr(sib, "blob_id", None)):
            raise DatasetPullError(f"the Hub gave no size or hash for {name}; cannot verify it")
        expected[name] = (sib.size, f"sha256:{lfs_sha}" if lfs_sha else f"git-sha1:{sib.blob_id}")
    if not expected:
        raise DatasetPullError(
            f"{repo_id}@{commit[:12]} has no files matching {', '.join(patterns)}"
        )

    previous = read_manifest(dest)
    if (
        previous is not None
        and previous.commit == commit
        and previous.repo_id == repo_id
        and not force
    ):
        if _intact(dest, previous, expected):
            return previous.model_copy(update={"changed": False})

    staging = Path(_mkdtemp(dest.parent, prefix=owned_prefix(f".{dest.name}.pull-")))
    try:
        from huggingface_hub.utils import (
            are_progress_bars_disabled,
            disable_progress_bars,
            enable_progress_bars,
        )

        bars_were_off = are_progress_bars_disabled()
        disable_progress_bars()
        try:

            def fetch(name: str) -> None:
                try:
                    hf_hub_download(
                        repo_id,
                        name,
                        repo_type="dataset",
                        revision=commit,  # pinned: never the moving branch
                        local_dir=staging,
                        endpoint=endpoint,
                        token=token,
                        etag_timeout=timeout,
                    )
                except Exception as exc:
                    raise DatasetPullError(
                        f"download of {repo_id}@{commit[:12]} failed: {name}: {_describe_http(exc)}"
                    ) from exc

            _download_all(sorted(expected), fetch, workers, progress)
        finally:
            if not bars_were_off:
                enable_progress_bars()
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub bookkeeping
        files = _verify(staging, expected, repo_id, commit)
        tasks = _count_tasks(staging)
        from jobbench import __version__ as jobbench_version
        from jobbench._io import atomic_write_json

        manifest = PullManifest(
            repo_id=repo_id,
            revision=revision,
            commit=commit,
            endpoint=endpoint,
            pulled_at=datetime.now(UTC).isoformat(timespec="seconds"),
            allow_patterns=patterns,
            files=files,
            tasks=tasks,
            jobbench_version=jobbench_version,
            huggingface_hub_version=huggingface_hub.__version__,
        )
        atomic_write_json(staging / MANIFEST, manifest)
        if dest.is_dir() and any(dest.iterdir()):
            refresh = _carry_over(dest, staging, previous, manifest)
            manifest = manifest.model_copy(update={"refresh": refresh})
        _install(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


_SOURCE_FILES = ("task_card.md", "RUBRICS.json")
_SOURCE_DIRS = ("task_folder", "files_required_to_search")
BACKUPS = Path(".setup") / "backups"
"""Where replaced sources and retired tasks go, relative to the dataset root (as in the
public dataset sync)."""


def _task_of(rel: str) -> tuple[str | None, str]:
    """``(task folder, path inside it)`` of a dataset path: the task folder is the first
    ``taskN`` component with at least two components before it (``dataset/<occupation>/taskN``
    or ``dataset/<split>/<occupation>/taskN``); ``(None, rel)`` outside any task."""
    from ._load import TASK_DIR_RE

    parts = rel.split("/")
    for k in range(2, len(parts) - 1):
        if TASK_DIR_RE.fullmatch(parts[k]):
            return "/".join(parts[: k + 1]), "/".join(parts[k + 1 :])
    return None, rel


def _in_sources(inner: str) -> bool:
    """Whether a path inside a task folder is one of its managed sources (DESIGN §8)."""
    head, _, rest = inner.partition("/")
    return (head in _SOURCE_DIRS and bool(rest)) or (not rest and head in _SOURCE_FILES)


def _link(src: Path, dst: Path) -> None:
    """Hard-link ``src`` (never following a symlink) to ``dst``, creating parents; copy when
    the file system cannot link.

    Raises:
        DatasetPullError: neither works (the pull then installs nothing).
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst, follow_symlinks=False)
        return
    except OSError:
        pass
    try:
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
        else:
            raise OSError(errno.EINVAL, "not a regular file")
    except OSError as exc:
        raise DatasetPullError(
            f"{src}: cannot be carried into the new copy "
            f"({exc.strerror or exc}); nothing was installed"
        ) from exc


def _carry_over(
    dest: Path, staging: Path, previous: PullManifest | None, new: PullManifest
) -> PullRefresh:
    """Bring into ``staging`` (the verified new copy) what must survive from ``dest`` (the
    previous copy, only read): local files are linked in place, replaced sources and retired
    tasks are linked under a new backup folder (see the module docstring).

    Returns:
        What was done.

    Raises:
        DatasetPullError: a file cannot be linked or copied.
    """
    old = {f.path: f.sha256 for f in previous.files} if previous is not None else {}
    fresh = {f.path: f.sha256 for f in new.files}
    old_tasks = {t for t in (_task_of(p)[0] for p in old) if t}
    new_tasks = {t for t in (_task_of(p)[0] for p in fresh) if t}
    retired = sorted(
        t for t in old_tasks - new_tasks if (dest / t).is_dir() and not (dest / t).is_symlink()
    )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = BACKUPS / f"{stamp}-{secrets.token_hex(4)}"
    kept: list[str] = []
    backed: list[str] = []
    setup = BACKUPS.parts[0] + "/"

    def save(rel: str) -> None:
        _link(dest / rel, staging / backup / "sources" / rel)
        backed.append(rel)

    for dirpath, dirnames, filenames in os.walk(dest):
        here = Path(dirpath)
        rel_dir = here.relative_to(dest).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        if rel_dir.rstrip("/") in retired:
            dirnames[:] = []  # moved aside whole, below
            continue
        links = [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in links)
        for name in sorted(filenames + links):
            rel = rel_dir + name
            if rel == MANIFEST:
                continue
            if rel.startswith(setup):  # earlier backups travel unchanged
                _link(dest / rel, staging / rel)
                continue
            task, inner = _task_of(rel)
            if rel in old or (task is not None and _in_sources(inner)) or rel in fresh:
                # a source (or a file where a source now is): keep only what the new copy lacks
                if (
                    rel in fresh
                    and not (dest / rel).is_symlink()
                    and (dest / rel).is_file()
                    and sha256_file(dest / rel) == fresh[rel]
                ):
                    continue
                save(rel)
            else:
                _link(dest / rel, staging / rel)
                kept.append(rel)
        for d in dirnames:  # empty local folders (e.g. model_output/<label>/) survive too
            rel = rel_dir + d
            task, inner = _task_of(rel + "/x")
            if not (task is not None and _in_sources(inner)) and not any((here / d).iterdir()):
                (staging / rel).mkdir(parents=True, exist_ok=True)
    for t in retired:
        for dirpath, dirnames, filenames in os.walk(dest / t):
            here = Path(dirpath)
            links = [d for d in dirnames if (here / d).is_symlink()]
            dirnames[:] = [d for d in dirnames if d not in links]
            for name in filenames + links:
                rel = (here / name).relative_to(dest).as_posix()
                _link(dest / rel, staging / backup / "retired" / rel)
    added = sorted(p for p in fresh if p not in old and _task_of(p)[0] not in retired)
    updated = sorted(p for p in fresh if p in old and old[p] != fresh[p])
    deleted = sorted(p for p in old if p not in fresh and _task_of(p)[0] not in retired)
    used = bool(backed or retired)
    refresh = PullRefresh(
        from_commit=previous.commit if previous is not None else "unknown",
        added=added,
        updated=updated,
        deleted=deleted,
        kept=sorted(kept),
        backed_up=sorted(backed),
        retired_tasks=retired,
        backup=str(dest / backup) if used else None,
    )
    if used:
        from jobbench._io import atomic_write_json

        atomic_write_json(
            staging / backup / "refresh.json",
            {
                "repo_id": new.repo_id,
                "from_commit": refresh.from_commit,
                "to_commit": new.commit,
                "backed_up": refresh.backed_up,
                "retired_tasks": retired,
                "updated": updated,
                "deleted": deleted,
            },
        )
    return refresh


def _mkdtemp(parent: Path, prefix: str) -> str:
    import tempfile

    return tempfile.mkdtemp(prefix=prefix, dir=parent)


def _intact(dest: Path, manifest: PullManifest, expected: dict[str, Any]) -> bool:
    """True when ``dest`` holds exactly the manifest's files with their sha256 and the
    manifest agrees with the Hub's listing."""
    if {f.path: (f.size, f.hub_hash) for f in manifest.files} != expected:
        return False
    for f in manifest.files:
        p = dest / f.path
        if (
            p.is_symlink()
            or not p.is_file()
            or p.stat().st_size != f.size
            or sha256_file(p) != f.sha256
        ):
            return False
    return True


def _verify(staging: Path, expected: dict[str, Any], repo_id: str, commit: str) -> list[PulledFile]:
    found: set[str] = set()
    bad: list[str] = []
    for dirpath, dirnames, filenames in os.walk(staging):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                bad.append(f"{p.relative_to(staging).as_posix()}: is a symlink")
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(staging).as_posix()
            if not p.is_symlink():
                found.add(rel)
    missing = sorted(set(expected) - found)
    extra = sorted(found - set(expected))
    bad += [f"{n}: missing after download" for n in missing]
    bad += [f"{n}: not in the Hub listing" for n in extra]
    files: list[PulledFile] = []
    for name in sorted(set(expected) & found):
        size, hub_hash = expected[name]
        p = staging / name
        actual_size = p.stat().st_size
        if actual_size != size:
            bad.append(f"{name}: size {actual_size} bytes, the Hub says {size}")
            continue
        sha = sha256_file(p)
        algo, want = hub_hash.split(":", 1)
        got = sha if algo == "sha256" else _git_blob_sha1(p, size)
        if got != want:
            bad.append(f"{name}: {algo} {got} does not match the Hub's {want}")
            continue
        files.append(PulledFile(path=name, size=size, sha256=sha, hub_hash=hub_hash))
    if bad:
        shown = "\n  ".join(bad[:10]) + (f"\n  … and {len(bad) - 10} more" if len(bad) > 10 else "")
        raise DatasetPullError(
            f"verification of {repo_id}@{commit[:12]} failed; nothing was installed:\n  {shown}"
        )
    return files


def _count_tasks(root: Path) -> dict[str, int]:
    from ._load import load_dataset

    try:
        ds = load_dataset(root)
    except FileNotFoundError as exc:
        raise DatasetPullError(
            "the downloaded files hold no JobBench tasks; nothing was installed"
        ) from exc
    counts: dict[str, int] = {}
    for t in ds.tasks:
        counts[t.split] = counts.get(t.split, 0) + 1
    return dict(sorted(counts.items()))
