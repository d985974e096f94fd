"""Dask distributed executor: trials and grading jobs as Dask tasks.

``jobbench run --executor dask --scheduler ADDRESS`` connects to a running cluster (any
Dask deployment: ``dask scheduler`` + ``dask worker``, dask-jobqueue on an HPC batch system,
a Kubernetes Dask cluster); ``--executor dask-local --dask-workers N`` starts a
``LocalCluster`` of N worker *processes* (each supervised by a nanny that restarts it when
it dies).

The run directory is the single source of truth and must be on storage shared by the
client and every worker, at the same path. Each job writes its result there atomically
(``trial.json``, grade records) and returns it; the client reads the record back from the
run directory. At start, every worker writes a probe file into the run directory that the
client must read (and checks that it sees the dataset, that its sandbox works and that its
JobBench version matches), so a run directory that is not shared fails at once with a clear
message instead of losing trials.

Worker failure: when a worker dies mid-trial (killed, out of memory, node lost), Dask
reschedules the trial on another worker (up to ``distributed.scheduler.allowed-failures``
times); a trial that raised is retried ``retries`` times. Trial writing is idempotent: a
trial whose valid ``trial.json`` already exists is not run again, a partial trial directory
is replaced, and scratch directories left by dead worker processes (with any sandbox
process still running in them, see :mod:`jobbench.runner._orphans`) are removed before the
next trial on that host and at the end of the run. A trial that still fails is recorded as
``infra_error`` (never scored; redone by the next invocation).

This module imports Dask; it is imported only when a Dask executor is requested.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import distributed

from .. import __version__
from ..agents import Trajectory, make_agent
from ..records import GradeRecord, TrialRecord, TrialStatus
from ..rundir import RunDir, read_record_file, safe_name
from ..sandbox import ResolvedBackend, SandboxError, default_scratch_root, resolve_backend
from ..tasks import task_digest
from ._executor import Executor, ExecutorError, Preparation, TrialBatch, execute_trial
from ._lock import now_iso
from ._orphans import sweep_scratch
from ._trial import TrialEnv

if TYPE_CHECKING:  # pragma: no cover
    from ..judge import JudgeConfig, TrialInput
    from ._executor import EventHook, ResultHook
    from ._plan import PlannedTrial

_ENV_FIELDS = (
    "run_dir",
    "dataset_root",
    "limits",
    "backend",
    "keep_workspaces",
    "deliverable_limits",
    "endpoint",
    "pricing",
    "protocol",
    "disk_quota_mb",
)


class RunDirNotVisible(OSError):
    """A worker cannot see the run directory (it is not on shared storage)."""


class DatasetMismatch(RuntimeError):
    """A worker's copy of a task differs from the client's (different digest)."""


@dataclass
class _TrialPayload:
    """What a trial job needs besides its :class:`PlannedTrial` (pickled to workers)."""

    env: dict[str, Any]
    scratch_root: Path | None
    infra_retries: int
    retry_backoff: float
    topic: str
    cancel_name: str


# ----------------------------------------------------------------------------- worker side

_CANCEL_POLL = 1.0  # seconds between checks of the run's cancel event, per worker process
_watch_lock = threading.Lock()
_watchers: dict[str, list[Any]] = {}  # cancel name -> [threading.Event, running trials]


def _acquire_cancel(name: str, client: Any) -> threading.Event:
    """A local event mirroring the Dask ``Event`` called ``name``; one watcher thread per
    worker process and run asks the scheduler once a second while trials of that run are
    running here."""
    with _watch_lock:
        entry = _watchers.get(name)
        if entry is None:
            local = threading.Event()
            dask_event = distributed.Event(name, client=client)
            try:
                if dask_event.is_set():
                    local.set()
            except Exception:  # the watcher retries
                pass
            entry = _watchers[name] = [local, 0]
            threading.Thread(
                target=_watch_cancel,
                args=(name, dask_event, entry),
                daemon=True,
                name="jobbench-cancel-watch",
            ).start()
        entry[1] += 1
        return entry[0]


def _release_cancel(name: str) -> None:
    with _watch_lock:
        entry = _watchers.get(name)
        if entry is not None:
            entry[1] -= 1


def _watch_cancel(name: str, dask_event: Any, entry: list[Any]) -> None:
    # Polls with short is_set() calls rather than a long wait() on the scheduler, so that no
    # request is pending there when the cluster shuts down.
    local: threading.Event = entry[0]
    while True:
        time.sleep(_CANCEL_POLL)
        with _watch_lock:
            if entry[1] <= 0:
                _watchers.pop(name, None)
                return
        if local.is_set():
            continue
        try:
            if dask_event.is_set():
                local.set()
        except Exception:  # scheduler briefly unreachable: try again
            pass


def _run_trial_task(pt: PlannedTrial, payload: _TrialPayload) -> TrialRecord | None:
    """One trial on a Dask worker (see the module docstring). Returns the record written to
    ``trial.json`` or None when the run was cancelled.

    Raises:
        RunDirNotVisible: this worker does not see the run directory.
        DatasetMismatch: this worker's copy of the task differs from the client's.
    """
    from ._plan import load_finished

    run_dir: Path = payload.env["run_dir"]
    where = f"worker on {socket.gethostname()} (pid {os.getpid()})"
    lock_file = RunDir(run_dir).lock_file
    if not lock_file.is_file():
        raise RunDirNotVisible(
            f"{where} cannot see {lock_file}: the run directory must be on "
            "storage shared by the client and every worker, at the same path"
        )
    done = load_finished(run_dir, pt.trial_id, pt.digest)
    if done is not None:  # an earlier attempt (e.g. on a worker that then died) finished it
        return done
    local_digest = task_digest(pt.task)
    if local_digest != pt.digest:
        raise DatasetMismatch(
            f"{where}: task {pt.task.id} at {pt.task.root} has digest {local_digest[:12]}, the "
            f"client planned {pt.digest[:12]}; every worker must see the same dataset at the "
            "same path"
        )
    scratch = payload.scratch_root or Path(os.path.abspath(default_scratch_root()))
    sweep_scratch(
        scratch
    )  # leftover sandboxes and workspaces of dead worker processes on this host
    agent = make_agent(pt.spec.agent, **pt.spec.options)
    worker = distributed.get_worker()
    cancel = _acquire_cancel(payload.cancel_name, distributed.get_client())

    def emit(kind: str) -> None:
        worker.log_event(payload.topic, {"kind": kind, "trial_id": pt.trial_id})

    try:
        env = TrialEnv(**payload.env, scratch_root=scratch, cancel=cancel)
        return execute_trial(
            pt,
            agent,
            env,
            infra_retries=payload.infra_retries,
            retry_backoff=payload.retry_backoff,
            emit=emit,
        )
    finally:
        _release_cancel(payload.cancel_name)


def _grade_task(config: JudgeConfig, inp: TrialInput) -> GradeRecord:
    """Grade one trial on a Dask worker (the record is written to ``inp.out_path``)."""
    from ..judge import Grader

    trial = Path(inp.deliverables_dir).parent
    if not trial.is_dir():
        raise RunDirNotVisible(
            f"worker on {socket.gethostname()} (pid {os.getpid()}) cannot see "
            f"{trial}: the run directory must be on storage shared by the "
            "client and every worker, at the same path"
        )
    grader = Grader(config, progress=False)
    try:
        return grader.grade([inp])[0]
    finally:
        grader.close()


def _probe_worker(
    run_dir: str,
    dataset_root: str,
    nonce: str,
    sandbox: str,
    scratch_root: str | None,
    dask_worker: Any = None,
) -> dict[str, Any]:
    """Run on every worker at start: what it sees, and a probe file in the run directory."""
    info: dict[str, Any] = {
        "address": getattr(dask_worker, "address", None),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "version": __version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "problems": [],
        "backend": None,
        "probe_file": None,
    }
    problems: list[str] = info["problems"]
    if not os.path.isdir(dataset_root):
        problems.append(
            f"cannot see the dataset at {dataset_root} (every worker needs it at the same path)"
        )
    if not os.path.isdir(run_dir):
        problems.append(
            f"cannot see the run directory {run_dir} (it must be on storage shared by the client "
            "and every worker, at the same path)"
        )
    else:
        name = safe_name(f"{nonce}-{info['host']}-{info['pid']}") + ".json"
        try:
            RunDir(run_dir).write_probe(
                name,
                {
                    "nonce": nonce,
                    "host": info["host"],
                    "pid": info["pid"],
                    "address": info["address"],
                },
            )
            info["probe_file"] = name
        except (OSError, ValueError) as exc:
            problems.append(f"cannot write into the run directory {run_dir}: {exc}")
    try:
        info["backend"] = resolve_backend(sandbox)  # type: ignore[arg-type]
    except SandboxError as exc:
        info["sandbox_error"] = str(exc)
    scratch = Path(os.path.abspath(scratch_root or default_scratch_root()))
    info["scratch_root"] = str(scratch)
    for label, forbidden in (("the run directory", run_dir), ("the dataset", dataset_root)):
        try:
            scratch.relative_to(os.path.abspath(forbidden))
            problems.append(
                f"its scratch directory {scratch} is inside {label} {forbidden}; set "
                "JOBBENCH_SCRATCH "
                "on the workers to a node-local directory"
            )
        except ValueError:
            pass
    try:
        swept = sweep_scratch(scratch)
        info["stale_scratch_removed"] = swept.removed
        info["leftover_sandboxes_killed"] = len(swept.killed)
    except OSError as exc:
        problems.append(f"cannot use its scratch directory {scratch}: {exc}")
    return info


def _whoami() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid()}


def _sweep_scratch(scratch_root: str | None) -> int:
    """Remove scratch directories of dead processes on this worker's host."""
    return sweep_scratch(Path(scratch_root) if scratch_root else None).removed


# ----------------------------------------------------------------------------- client side


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown failure"
    if type(exc).__name__ == "KilledWorker":
        return (
            f"the worker running this job died every time it was tried ({exc}); a worker dies when "
            "it is "
            "killed, runs out of memory or loses its node"
        )
    return f"{type(exc).__name__}: {exc}"


class DaskExecutor(Executor):
    """Trials and grading jobs as Dask distributed tasks.

    Args:
        address: scheduler address (``tcp://host:8786``, ``tls://…``) or the path of a
            scheduler file; None starts a ``LocalCluster`` of ``n_workers`` processes.
        client: an existing ``distributed.Client`` to use instead (not closed here).
        n_workers, threads_per_worker: size of the local cluster (trials at once per
            worker = threads).
        retries: Dask ``retries`` of a job that raised.
        connect_timeout: seconds to reach the scheduler.
        worker_timeout: seconds to wait for the first worker to join.
        visibility_timeout: seconds to wait for a record written by a worker to become
            visible to the client (network file systems may lag).

    Raises:
        ExecutorError: the scheduler cannot be reached or the cluster cannot start.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        client: Any = None,
        n_workers: int = 2,
        threads_per_worker: int = 1,
        retries: int = 2,
        connect_timeout: float = 30.0,
        worker_timeout: float = 120.0,
        visibility_timeout: float = 30.0,
    ) -> None:
        self.retries = max(0, int(retries))
        self.worker_timeout = worker_timeout
        self.visibility_timeout = visibility_timeout
        self._cluster = None
        self._own_client = False
        self._warnings: list[str] = []
        self._active: dict[Any, Any] = {}  # key -> Future of the jobs in flight
        self._cancel_event: Any = None
        self.scratch_root: str | None = None
        self.address = address
        if client is not None:
            self.client = client
            self.name = "dask"
        elif address:
            self.name = "dask"
            kwargs = (
                {"scheduler_file": address} if os.path.isfile(address) else {"address": address}
            )
            try:
                self.client = distributed.Client(**kwargs, timeout=connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise ExecutorError(
                    f"cannot connect to the Dask scheduler at {address}: {exc}"
                ) from None
            self._own_client = True
        else:
            self.name = "dask-local"
            if n_workers < 1 or threads_per_worker < 1:
                raise ExecutorError("--dask-workers and --dask-threads must be at least 1")
            import warnings

            with warnings.catch_warnings():  # the scheduler's HTTP port moves when 8787 is taken
                warnings.filterwarnings("ignore", message=r"(?s)Port \d+ is already in use")
                self._cluster = distributed.LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=threads_per_worker,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
            self.client = distributed.Client(self._cluster)
            self._own_client = True

    # -------------------------------------------------------------- start

    def workers(self) -> dict[str, dict[str, Any]]:
        """``{address: {"host", "pid"}}`` of the workers connected now (asked of each worker)."""
        got = self.client.run(_whoami, on_error="return")
        return {a: i for a, i in got.items() if isinstance(i, dict)}

    def prepare(
        self,
        *,
        run_dir: Path,
        dataset_root: Path,
        sandbox: Literal["auto", "bwrap", "none"],
        scratch_root: Path | None,
    ) -> Preparation:
        """Wait for a worker, then check every worker: it sees the dataset and the run
        directory (it writes a probe file there that this client must read), its sandbox
        works, its JobBench version is this one, its scratch directory is usable (stale
        scratch of dead processes is removed).

        Raises:
            ExecutorError: naming each worker and what is wrong.
        """
        try:
            self.client.wait_for_workers(1, timeout=self.worker_timeout)
        except TimeoutError as exc:
            raise ExecutorError(
                "no Dask worker joined the "
                f"scheduler{' at ' + self.address if self.address else ''} "
                f"within {self.worker_timeout:.0f} s; start workers or check the cluster"
            ) from exc
        self.scratch_root = str(scratch_root) if scratch_root else None
        created = not run_dir.exists()
        probe_dir = RunDir(run_dir).probe_dir
        probe_dir.mkdir(parents=True, exist_ok=True)
        nonce = uuid.uuid4().hex
        problems: list[str] = []
        try:
            infos = self.client.run(
                _probe_worker,
                str(run_dir),
                str(dataset_root),
                nonce,
                sandbox,
                self.scratch_root,
                on_error="return",
            )
            for addr, info in sorted(infos.items()):
                if isinstance(info, BaseException):
                    problems.append(
                        f"worker {addr}: the check failed: {type(info).__name__}: {info}"
                    )
                    continue
                who = f"worker {addr} (host {info['host']}, pid {info['pid']})"
                problems += [f"{who}: {p}" for p in info["problems"]]
                if info["probe_file"]:
                    seen = self._read_probe(probe_dir / info["probe_file"])
                    if seen is None or seen.get("nonce") != nonce:
                        problems.append(
                            f"{who} wrote {probe_dir / info['probe_file']} but this client cannot "
                            "read it: the run "
                            f"directory {run_dir} is not on storage shared by the client and the "
                            "workers (mount "
                            "the same shared directory at the same path everywhere, e.g. "
                            "--runs-dir on NFS/Lustre)"
                        )
                if info["version"] != __version__:
                    problems.append(
                        f"{who} runs JobBench {info['version']}, this client {__version__}; "
                        "install the "
                        "same version everywhere"
                    )
            good = {a: i for a, i in infos.items() if not isinstance(i, BaseException)}
            backend = self._backend(good, sandbox, problems)
        finally:
            shutil.rmtree(probe_dir, ignore_errors=True)
            if created and problems:
                try:
                    run_dir.rmdir()
                except OSError:
                    pass
        if problems:
            raise ExecutorError(
                "the Dask workers cannot run this run:\n  - " + "\n  - ".join(problems)
            )
        notes = []
        if backend == "none" and sandbox == "auto":
            notes.append(
                "NO SANDBOX on the Dask workers (bubblewrap missing or not working there): agents "
                "run as "
                "plain subprocesses; install bubblewrap on every worker for real runs"
            )
        return Preparation(backend=backend, workers=list(good.values()), notes=notes)

    def _read_probe(self, path: Path) -> dict[str, Any] | None:
        deadline = time.monotonic() + min(self.visibility_timeout, 10.0)
        while True:
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.2)

    @staticmethod
    def _backend(
        infos: dict[str, dict[str, Any]], sandbox: str, problems: list[str]
    ) -> ResolvedBackend:
        if sandbox == "none" or not infos:
            return "none"
        without = sorted(a for a, i in infos.items() if i.get("backend") != "bwrap")
        if sandbox == "bwrap":
            for a in without:
                i = infos[a]
                problems.append(
                    f"worker {a} (host {i['host']}): bubblewrap does not work there "
                    f"({i.get('sandbox_error') or i.get('backend')}); the sandbox must exist on "
                    "every "
                    "worker (install bubblewrap, e.g. scripts/setup.sh)"
                )
            return "bwrap"
        if not without:
            return "bwrap"
        if len(without) == len(infos):
            return "none"
        problems.append(
            f"bubblewrap works on some workers but not on {', '.join(without)}; one run must use "
            "one "
            "sandbox everywhere: install bubblewrap on every worker, or pass --sandbox none"
        )
        return "none"

    # -------------------------------------------------------------- trials

    def run_trials(
        self,
        trials: list[PlannedTrial],
        batch: TrialBatch,
        *,
        on_event: EventHook | None,
        on_result: ResultHook,
    ) -> None:
        if not trials:
            return
        client = self.client
        env = batch.env
        token = uuid.uuid4().hex[:12]
        topic = f"jobbench-trial-events-{token}"
        self._cancel_event = distributed.Event(f"jobbench-cancel-{token}", client=client)
        payload = _TrialPayload(
            env={k: getattr(env, k) for k in _ENV_FIELDS},
            scratch_root=env.scratch_root if batch.scratch_explicit else None,
            infra_retries=batch.infra_retries,
            retry_backoff=batch.retry_backoff,
            topic=topic,
            cancel_name=self._cancel_event.name,
        )
        by_id = {pt.trial_id: pt for pt in trials}
        lock = threading.Lock()
        started: set[str] = set()
        ended: set[str] = set()

        def handler(event: tuple[float, Any]) -> None:
            msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
            if not isinstance(msg, dict):
                return
            pt = by_id.get(msg.get("trial_id", ""))
            kind = msg.get("kind")
            if pt is None or kind not in ("start", "retry"):
                return
            with lock:
                if pt.trial_id in ended:
                    return
                if kind == "start" and pt.trial_id in started:
                    kind = "retry"  # rescheduled after its worker died
                started.add(pt.trial_id)
            if on_event:
                try:
                    on_event(kind, pt, None)
                except Exception:  # a progress display must never break the run
                    pass

        client.subscribe_topic(topic, handler)
        done_q: queue.Queue[Any] = queue.Queue()
        futures: dict[Any, PlannedTrial] = {}
        cancelled = False
        try:
            for i, pt in enumerate(trials):
                fut = client.submit(
                    _run_trial_task,
                    pt,
                    payload,
                    key=f"jobbench-trial-{token}-{i}",
                    pure=False,
                    retries=self.retries,
                )
                futures[fut.key] = pt
                self._active[fut.key] = fut
                fut.add_done_callback(done_q.put)
            remaining = len(futures)
            while remaining:
                try:
                    fut = done_q.get(timeout=0.5)
                except queue.Empty:
                    if env.cancel.is_set() and not cancelled:
                        cancelled = True
                        self._cancel_queued()
                    continue
                remaining -= 1
                pt = futures[fut.key]
                rec = self._collect(fut, pt, env)
                self._active.pop(fut.key, None)  # lets Dask forget the result
                with lock:
                    first = pt.trial_id not in started
                    started.add(pt.trial_id)
                    ended.add(pt.trial_id)
                if first and on_event and fut.status == "finished":
                    on_event("start", pt, None)  # its start event had not arrived yet
                on_result(pt, rec)
                if env.cancel.is_set() and not cancelled:
                    cancelled = True
                    self._cancel_queued()
        except BaseException:
            env.cancel.set()
            self._stop_active()
            raise
        finally:
            try:
                client.unsubscribe_topic(topic)
            except Exception:
                pass
            self._active = {}
        self._sweep()
        if not cancelled:  # a cancelled run's event stays set for any straggler
            try:
                self._cancel_event.clear()
            except Exception:
                pass
        self._cancel_event = None

    def _collect(self, fut: Any, pt: PlannedTrial, env: TrialEnv) -> TrialRecord | None:
        """The record of a finished trial job, read back from the run directory."""
        if fut.status == "finished":
            try:
                returned = fut.result()
            except Exception as exc:  # e.g. the result was lost with its worker
                return self._record_failure(pt, env, _describe(exc))
            if returned is None:
                return None
            rd = RunDir(env.run_dir)
            path = rd.trial_file(pt.trial_id)
            deadline = time.monotonic() + self.visibility_timeout
            while True:
                rec = rd.read_trial(pt.trial_id).record
                if rec is not None:
                    return rec
                if time.monotonic() > deadline:
                    self._warnings.append(
                        f"{pt.trial_id}: a worker wrote {path} but this client could not read it "
                        f"within {self.visibility_timeout:.0f} s (shared storage lagging?); the "
                        "record returned by the worker was used"
                    )
                    return returned
                time.sleep(0.2)
        if fut.status == "cancelled" or env.cancel.is_set():
            return None
        try:
            failure = fut.exception()
        except Exception as e:  # the exception itself could not be fetched
            failure = e
        return self._record_failure(pt, env, _describe(failure))

    def _record_failure(self, pt: PlannedTrial, env: TrialEnv, error: str) -> TrialRecord:
        """Write ``infra_error`` for a trial whose job failed on the cluster (not the agent's
        failure; the next invocation redoes it), unless a valid record exists."""
        from ._plan import load_finished

        done = load_finished(env.run_dir, pt.trial_id, pt.digest)
        if done is not None:
            return done
        rd = RunDir(env.run_dir)
        rd.reset_trial_dir(pt.trial_id)
        rd.remove_trial_grades(pt.trial_id)
        traj = Trajectory(rd.trajectory_file(pt.trial_id))
        traj.emit("executor_error", executor=self.name, error=error)
        traj.emit(
            "trial_end",
            status=TrialStatus.infra_error.value,
            error=error,
            deliverables=[],
            refused=[],
            seconds=0.0,
        )
        traj.close()
        now = now_iso()
        rec = TrialRecord(
            trial_id=pt.trial_id,
            task_id=pt.task.id,
            task_digest=pt.digest,
            agent=pt.spec.agent,
            model=pt.spec.model or "-",
            epoch=pt.epoch,
            status=TrialStatus.infra_error,
            started_at=now,
            finished_at=now,
            wall_seconds=0.0,
            settings=pt.spec.settings.as_record(),
            error=f"{self.name} executor: {error}",
            sandbox=env.backend,
        )
        rd.write_trial(rec)
        return rec

    def _cancel_queued(self) -> None:
        """Cancel (the run's ``cancel`` was set): running trials are told to stop and are
        waited for (they return without a record within about a second); jobs that no worker
        has taken yet are dropped."""
        if self._cancel_event is not None:
            try:
                self._cancel_event.set()
            except Exception:
                pass
        try:
            busy = {k for keys in self.client.processing().values() for k in keys}
        except Exception:
            busy = set(self._active)
        queued = [f for k, f in self._active.items() if k not in busy]
        if queued:
            try:
                self.client.cancel(queued)
            except Exception:
                pass

    def _stop_active(self) -> None:
        """Stop now (Ctrl-C, errors): tell running trials to stop (they write nothing) and
        drop every job without waiting."""
        if self._cancel_event is not None:
            try:
                self._cancel_event.set()
            except Exception:
                pass
        if self._active:
            try:
                self.client.cancel(list(self._active.values()), force=True)
            except Exception:
                pass

    def _sweep(self) -> None:
        try:
            self.client.run(_sweep_scratch, self.scratch_root, on_error="ignore")
        except Exception:
            pass

    # -------------------------------------------------------------- grading

    def grade(
        self, inputs: list[TrialInput], config: JudgeConfig, *, progress: bool = False
    ) -> list[GradeRecord]:
        """One Dask task per trial (extraction, checks and its LLM calls run on the worker;
        the grade is written to the run directory there and read back here).

        Raises:
            ExecutorError: some grading jobs failed on the cluster (the others are saved;
                grading again redoes only the missing ones).
        """

        if not inputs:
            return []
        token = uuid.uuid4().hex[:12]
        done_q: queue.Queue[Any] = queue.Queue()
        index: dict[Any, int] = {}
        out: dict[int, GradeRecord] = {}
        failures: list[str] = []
        bar = _Bar(progress, len(inputs))
        try:
            for i, inp in enumerate(inputs):
                fut = self.client.submit(
                    _grade_task,
                    config,
                    replace(inp, on_written=None),
                    key=f"jobbench-grade-{token}-{i}",
                    pure=False,
                    retries=self.retries,
                )
                index[fut.key] = i
                self._active[fut.key] = fut
                fut.add_done_callback(done_q.put)
            remaining = len(index)
            while remaining:
                try:
                    fut = done_q.get(timeout=0.5)
                except queue.Empty:
                    continue
                remaining -= 1
                i = index[fut.key]
                inp = inputs[i]
                if fut.status == "finished":
                    rec = fut.result()
                    if inp.out_path is not None:
                        rec = self._read_grade(Path(inp.out_path)) or rec
                    out[i] = rec
                    if inp.on_written is not None:
                        inp.on_written(rec)
                else:
                    try:
                        exc = fut.exception()
                    except Exception as e:
                        exc = e
                    failures.append(f"{inp.trial_id}: {_describe(exc)}")
                self._active.pop(fut.key, None)
                bar.advance()
        except BaseException:
            self._stop_active()
            raise
        finally:
            bar.close()
            self._active = {}
        if failures:
            raise ExecutorError(
                f"grading failed on the cluster for {len(failures)} trial(s) (the other grades are "
                "saved; grading again redoes only these):\n  - " + "\n  - ".join(failures)
            )
        return [out[i] for i in range(len(inputs))]

    def _read_grade(self, path: Path) -> GradeRecord | None:
        deadline = time.monotonic() + self.visibility_timeout
        while True:
            rec = read_record_file(path, GradeRecord).record
            if rec is not None or time.monotonic() > deadline:
                if rec is None:
                    self._warnings.append(
                        f"a worker wrote {path} but this client could not read it"
                    )
                return rec
            time.sleep(0.2)

    # -------------------------------------------------------------- end

    def drain_warnings(self) -> list[str]:
        out, self._warnings = self._warnings, []
        return out

    def abort(self) -> None:
        self._stop_active()

    def close(self) -> None:
        if self._own_client:
            try:
                self.client.close(timeout=10)
            except Exception:
                pass
            self._own_client = False
        if self._cluster is not None:
            try:
                self._cluster.close(timeout=20)
            except Exception:
                pass
            self._cluster = None


class _Bar:
    """A rich progress bar of graded trials on stderr (no-op when disabled)."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.progress = None
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("grading on Dask"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self.progress.start()
            self.task = self.progress.add_task("grading", total=total)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


__all__ = ["DaskExecutor", "DatasetMismatch", "RunDirNotVisible"]
