"""``jobbench export harbor``: one Harbor task per JobBench task.

Each exported task (Harbor's task format, ``harbor`` 0.26: ``harbor/models/task/config.py``
and ``paths.py``)::

    <split>--<occupation>--taskN/
      task.toml            [task] name, [metadata] (JobBench id, digest, search references),
                           [agent]/[verifier] timeouts, [environment], a SEPARATE verifier
                           environment, artifacts = ["/workspace/output"]
      instruction.md       :func:`jobbench.agents.standard_prompt` with the container paths
      environment/         Dockerfile + task_folder/ (nothing else; no hidden file)
      tests/               the verifier image's build context: Dockerfile, test.sh, the
                           jobbench wheel and grading/dataset/<split>/<occupation>/taskN/
                           (RUBRICS.json, task_card.md, task_folder/ for loading the task)
      solution/            solve.sh + the task's reference solution (decoys left out)

The agent environment holds only the workspace and the tools the public runners assume
(the public Harbor adapter's agent image: Job-Bench/job-bench-eval,
``harbor/templates/environment.Dockerfile`` and ``environment-requirements.txt``: Debian
packages for office formats, PDF, OCR and SQLite, LibreOffice, and the pinned Python
libraries below). Rubrics, the task card (it can disclose answers) and the grading code live
only in the verifier image. Search references (``files_required_to_search/``) are never
copied: as in the public adapter, their names are recorded as withheld metadata
(``[metadata].search_files``) and, under the ``public`` protocol, the agent may look for
material online.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import __version__
from ._layout import (
    HARBOR_ORG,
    HARBOR_RANGE,
    MANIFEST_FILE,
    OUTPUT,
    SOLUTION,
    TASK_FOLDER,
    TESTS,
    TESTS_DATA,
    VERIFIER_LOGS,
    WORKSPACE,
    task_dir_name,
)

BASE_IMAGE = "python:3.12-slim-bookworm"

AGENT_APT = (
    "bash ca-certificates curl file git jq tmux unzip zip sqlite3 poppler-utils "
    "tesseract-ocr libreoffice pandoc gdal-bin libgl1 libglib2.0-0 fonts-dejavu-core "
    "fonts-liberation"
)
"""Debian packages of the agent image (the public adapter's list, plus ca-certificates)."""

AGENT_PYTHON = (
    "beautifulsoup4==4.13.5",
    "duckdb==1.3.2",
    "lxml==6.0.1",
    "mammoth==1.10.0",
    "matplotlib==3.10.6",
    "nbclient==0.10.2",
    "nbformat==5.10.4",
    "numpy==2.3.3",
    "openpyxl==3.1.5",
    "pandas==2.3.2",
    "pdfplumber==0.11.7",
    "Pillow==11.3.0",
    "pyarrow==21.0.0",
    "PyMuPDF==1.26.4",
    "python-docx==1.2.0",
    "python-pptx==1.0.2",
    "requests==2.32.5",
    "scikit-learn==1.7.1",
    "scipy==1.16.1",
    "seaborn==0.13.2",
    "statsmodels==0.14.5",
    "xlrd==2.0.2",
)
"""Python libraries of the agent image (versions as pinned by the public adapter)."""

VERIFIER_APT = "libreoffice-calc-nogui fonts-dejavu-core fonts-liberation"
"""Debian packages of the verifier image: LibreOffice Calc recalculates workbooks headless
before the judge reads their values (docs/extract.md)."""

JUDGE_ENV = (
    "JUDGE_API_BASE",
    "JUDGE_API_KEY",
    "JUDGE_MODEL",
    "JOBBENCH_JUDGE_MODE",
    "JOBBENCH_JUDGE_DECIDE",
    "JOBBENCH_JUDGE_CONCURRENCY",
    "JOBBENCH_JUDGE_TIMEOUT",
    "JOBBENCH_JUDGE_MAX_ATTEMPTS",
)
"""Judge settings passed from the host to the verifier (``${VAR:-}``: empty when unset, and
an empty endpoint means the checks-only judge; :func:`jobbench.judge.load_judge_config`)."""

PROTOCOLS = ("public", "jobbench")


class ExportError(ValueError):
    """The export cannot be made as asked (the message names the file or option)."""


@dataclass
class ExportedTask:
    """One exported task: JobBench ``task_id``, Harbor ``name``, its folder ``dir`` and the
    task-folder files ``left_out`` of the agent image (hidden files)."""

    task_id: str
    name: str
    dir: Path
    left_out: list[str] = field(default_factory=list)


@dataclass
class ExportResult:
    """What :func:`export_harbor` wrote: ``out_dir``, the ``tasks`` and the ``manifest``."""

    out_dir: Path
    tasks: list[ExportedTask]
    manifest: Path


# ------------------------------------------------------------------ TOML (a small writer)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ExportError(f"cannot write {v!r} to task.toml")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ExportError(f"cannot write {type(v).__name__} to task.toml")


def toml_dumps(data: dict[str, Any]) -> str:
    """TOML for nested dicts of strings, numbers, booleans and lists of those (the shapes
    ``task.toml`` needs): scalars of a table first, then its sub-tables as ``[a.b]``."""
    out: list[str] = []

    def table(prefix: str, d: dict[str, Any]) -> None:
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in d.items() if isinstance(v, dict)]
        if prefix and (scalars or not tables):
            out.append(f"\n[{prefix}]")
        for k, v in scalars:
            out.append(f"{k} = {_toml_value(v)}")
        for k, v in tables:
            table(f"{prefix}.{k}" if prefix else k, v)

    table("", data)
    return "\n".join(out).lstrip("\n") + "\n"


# ------------------------------------------------------------------ files of one task


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _copy_file(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    dest.chmod(0o644)


def _copy_workspace(task: Any, dest: Path) -> list[str]:
    """Copy ``task_folder`` to ``dest``; hidden files are left out (returned)."""
    left_out = []
    dest.mkdir(parents=True, exist_ok=True)
    for rel in task.workspace_files:
        if _hidden(rel):
            left_out.append(rel)
            continue
        _copy_file(task.workspace_dir / rel, dest / rel)
    return left_out


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def agent_dockerfile(base_image: str = BASE_IMAGE) -> str:
    """The agent image: tools, an empty writable :data:`OUTPUT`, the task folder."""
    pip = " \\\n        ".join(AGENT_PYTHON)
    return (
        f"# JobBench agent environment (jobbench {__version__}): the workspace and the tools\n"
        "# the public runners assume; no rubric, task card or solution.\n"
        f"FROM {base_image}\n"
        "ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 "
        "MPLBACKEND=Agg\n"
        "RUN apt-get update \\\n"
        f"    && apt-get install -y --no-install-recommends {AGENT_APT} \\\n"
        "    && rm -rf /var/lib/apt/lists/*\n"
        "RUN python -m pip install --no-cache-dir \\\n"
        f"        {pip}\n"
        f"RUN mkdir -p {TASK_FOLDER} {OUTPUT} && chmod 0777 {OUTPUT}\n"
        f"COPY task_folder/ {TASK_FOLDER}/\n"
        f"WORKDIR {WORKSPACE}\n"
    )


def verifier_dockerfile(install: str, base_image: str = BASE_IMAGE) -> str:
    """The verifier image: LibreOffice Calc, this package, the tests at :data:`TESTS`."""
    return (
        f"# JobBench verifier environment (jobbench {__version__}): grades the deliverables\n"
        "# collected from /workspace/output with the chained-rubric judge.\n"
        f"FROM {base_image}\n"
        "ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 "
        "MPLBACKEND=Agg\n"
        "RUN apt-get update \\\n"
        f"    && apt-get install -y --no-install-recommends {VERIFIER_APT} \\\n"
        "    && rm -rf /var/lib/apt/lists/*\n"
        f"COPY . {TESTS}/\n"
        f"RUN python -m pip install --no-cache-dir {install} && chmod +x {TESTS}/test.sh\n"
        f"WORKDIR {TESTS}\n"
    )


def test_sh(task_id: str) -> str:
    """``tests/test.sh``: run :mod:`jobbench.interop.harbor.verify` on the collected
    deliverables. ``JOBBENCH_HARBOR_TESTS``, ``JOBBENCH_HARBOR_OUTPUT``,
    ``JOBBENCH_HARBOR_LOGS`` and ``JOBBENCH_HARBOR_PYTHON`` redirect the container paths (for
    running the verifier outside Harbor)."""
    return (
        "#!/usr/bin/env bash\n"
        "# JobBench verifier: grade the collected deliverables, write reward.json and the\n"
        "# full grade (every verdict) to the verifier logs. Exit 0 whenever a reward was\n"
        "# written; otherwise Harbor reports the verifier failure (never a 0 reward).\n"
        "set -euo pipefail\n"
        f'tests="${{JOBBENCH_HARBOR_TESTS:-{TESTS}}}"\n'
        f'exec "${{JOBBENCH_HARBOR_PYTHON:-python3}}" -m jobbench.interop.harbor.verify \\\n'
        f'  --dataset "$tests/{TESTS_DATA}/dataset" \\\n'
        f"  --task {task_id} \\\n"
        f'  --deliverables "${{JOBBENCH_HARBOR_OUTPUT:-{OUTPUT}}}" \\\n'
        f'  --logs "${{JOBBENCH_HARBOR_LOGS:-{VERIFIER_LOGS}}}"\n'
    )


def solve_sh() -> str:
    """``solution/solve.sh``: the oracle calling convention (``agents/_simple.py``) inside
    the container."""
    return (
        "#!/usr/bin/env bash\n"
        "# JobBench reference solution: writes correct deliverables to the output directory.\n"
        "set -euo pipefail\n"
        f"mkdir -p {OUTPUT}\n"
        f'exec python3 "{SOLUTION}/solve.py" --workspace {TASK_FOLDER} --output {OUTPUT}\n'
    )


def task_config(
    task: Any,
    digest: str,
    *,
    protocol: str,
    judge_hosts: list[str],
    agent_timeout: float,
    verifier_timeout: float,
) -> dict[str, Any]:
    """The ``task.toml`` of one task as a dict (every field is one of Harbor 0.26's
    ``TaskConfig``)."""
    occ = task.occupation_info
    agent_net = "public" if protocol == "public" else "no-network"
    verifier_net: dict[str, Any] = (
        {"network_mode": "allowlist", "allowed_hosts": list(judge_hosts)}
        if judge_hosts
        else {"network_mode": "no-network"}
    )
    return {
        "schema_version": "1.4",
        "artifacts": [OUTPUT],
        "task": {
            "name": f"{HARBOR_ORG}/{task_dir_name(task.id)}",
            "description": f"JobBench {task.split} task {task.number} of {task.occupation}",
            "keywords": ["jobbench", task.split, task.occupation, f"soc-{occ.soc_major_code}"],
        },
        "metadata": {
            "jobbench_task_id": task.id,
            "jobbench_task_digest": digest,
            "jobbench_version": __version__,
            "jobbench_protocol": protocol,
            "split": task.split,
            "occupation": task.occupation,
            "task_number": task.number,
            "soc_major_group": occ.soc_major_code,
            "rubrics": len(task.rubrics),
            "criteria": task.criterion_count,
            "total_weight": float(task.total_weight),
            "search_files": list(task.search_files),
        },
        "agent": {"timeout_sec": float(agent_timeout)},
        "verifier": {
            "timeout_sec": float(verifier_timeout),
            "environment_mode": "separate",
            "env": {name: f"${{{name}:-}}" for name in JUDGE_ENV},
            "environment": {
                "build_timeout_sec": 1800.0,
                "cpus": 2,
                "memory_mb": 4096,
                "workdir": TESTS,
                **verifier_net,
            },
        },
        "environment": {
            "build_timeout_sec": 1800.0,
            "cpus": 2,
            "memory_mb": 8192,
            "storage_mb": 20480,
            "workdir": WORKSPACE,
            "network_mode": agent_net,
        },
    }


def export_task(
    task: Any,
    dest: Path,
    wheel: Path | None,
    *,
    protocol: str = "public",
    judge_hosts: list[str] | None = None,
    agent_timeout: float = 3600.0,
    verifier_timeout: float = 1800.0,
    requirement: str | None = None,
    base_image: str = BASE_IMAGE,
) -> ExportedTask:
    """Write one Harbor task for ``task`` (a :class:`jobbench.tasks.Task`) into ``dest``
    (created; must not exist). The verifier installs ``wheel`` (copied into ``tests/``) or,
    when given, the pip ``requirement`` instead."""
    from ...agents import standard_prompt
    from ...tasks import task_digest

    if protocol not in PROTOCOLS:
        raise ExportError(f"--protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    digest = task_digest(task)
    dest.mkdir(parents=True)
    config = task_config(
        task,
        digest,
        protocol=protocol,
        judge_hosts=list(judge_hosts or []),
        agent_timeout=agent_timeout,
        verifier_timeout=verifier_timeout,
    )
    _write(dest / "task.toml", toml_dumps(config))
    _write(dest / "instruction.md", standard_prompt(TASK_FOLDER, OUTPUT, protocol=protocol))
    env = dest / "environment"
    left_out = _copy_workspace(task, env / "task_folder")
    _write(env / "Dockerfile", agent_dockerfile(base_image))
    tests = dest / "tests"
    data = tests / TESTS_DATA / "dataset" / task.split / task.occupation / f"task{task.number}"
    _copy_file(task.root / "RUBRICS.json", data / "RUBRICS.json")
    _copy_file(task.root / "task_card.md", data / "task_card.md")
    _copy_workspace(task, data / "task_folder")
    if requirement:
        install = json.dumps(requirement)
    else:
        if wheel is None:
            raise ExportError("no jobbench wheel and no --jobbench-requirement")
        _copy_file(wheel, tests / TESTS_DATA / wheel.name)
        install = f'"{TESTS}/{TESTS_DATA}/{wheel.name}"'
    _write(tests / "Dockerfile", verifier_dockerfile(install, base_image))
    _write(tests / "test.sh", test_sh(task.id), 0o755)
    if task.solution_dir is not None and (task.solution_dir / "solve.py").is_file():
        sol = dest / "solution"
        for dirpath, dirnames, filenames in os.walk(task.solution_dir):
            here = Path(dirpath)
            rel_dir = here.relative_to(task.solution_dir)
            dirnames[:] = [
                d
                for d in sorted(dirnames)
                if d not in ("decoys", "__pycache__")
                and not d.startswith(".")
                and not (here / d).is_symlink()
            ]
            for name in sorted(filenames):
                p = here / name
                if name.startswith(".") or p.is_symlink() or name.endswith(".pyc"):
                    continue
                _copy_file(p, sol / rel_dir / name)
        _write(sol / "solve.sh", solve_sh(), 0o755)
    return ExportedTask(task.id, config["task"]["name"], dest, left_out)


def export_harbor(
    dataset: Path | str,
    out_dir: Path | str,
    *,
    splits: list[str] | None = None,
    tasks: str | None = None,
    protocol: str = "public",
    judge_hosts: list[str] | None = None,
    agent_timeout: float = 3600.0,
    verifier_timeout: float = 1800.0,
    requirement: str | None = None,
    base_image: str = BASE_IMAGE,
    strict: bool = False,
) -> ExportResult:
    """Export the selected tasks of ``dataset`` as Harbor tasks under ``out_dir``.

    Args:
        dataset: a JobBench dataset (any layout :func:`jobbench.tasks.load_dataset` reads).
        out_dir: created if missing; must be empty or an earlier export (it has
            :data:`MANIFEST_FILE`), whose task folders are replaced.
        splits, tasks: only these splits / task ids matching this glob.
        protocol: ``public`` (agent network on; online search allowed, as the published
            runners do) or ``jobbench`` (agent network off; work only in the workspace).
        judge_hosts: hosts the verifier may reach (an LLM judge's API); none: no network,
            which suits the checks-only judge.
        agent_timeout, verifier_timeout: seconds (Harbor's ``timeout_sec``).
        requirement: install this pip requirement in the verifier instead of the wheel of
            the running jobbench.
        base_image: the images' base.
        strict: load the dataset strictly.

    Returns:
        :class:`ExportResult`; ``out_dir/jobbench-export.json`` records the dataset root,
        the jobbench version, the protocol and every task (id, Harbor name, digest).

    Raises:
        FileNotFoundError: the dataset does not exist.
        jobbench.tasks.InvalidDatasetError: a selected task is invalid.
        ExportError: nothing selected, a bad option, or ``out_dir`` holds something else.
    """
    from ...tasks import (
        InvalidDatasetError,
        display_path,
        find_invalid,
        invalid_message,
        load_dataset,
        task_digest,
    )

    if protocol not in PROTOCOLS:
        raise ExportError(f"--protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    root = Path(os.path.abspath(dataset))
    ds = load_dataset(root, splits=splits, task_glob=tasks, strict=strict)
    invalid = find_invalid(ds, splits=splits, task_glob=tasks)
    if invalid:
        raise InvalidDatasetError(
            invalid_message(
                invalid,
                display_path(root),
                verb="export",
                consequence="the invalid ones are not exported",
            ),
            invalid,
        )
    if not ds.tasks:
        raise ExportError(f"{display_path(root)}: no task matches the selection")
    out = Path(os.path.abspath(out_dir))
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ExportError(f"{display_path(out)}: not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST_FILE).is_file():
        raise ExportError(
            f"{display_path(out)}: not empty and not an earlier export (no {MANIFEST_FILE}); "
            "choose an empty or new directory"
        )
    out.mkdir(parents=True, exist_ok=True)
    wheel = None
    staging = out / ".jobbench-wheel"
    if not requirement:
        from ._wheel import build_wheel

        wheel = build_wheel(staging)
    exported = []
    try:
        for task in ds.tasks:
            dest = out / task_dir_name(task.id)
            if dest.is_symlink() or dest.is_file():
                dest.unlink()
            elif dest.is_dir():
                shutil.rmtree(dest)
            exported.append(
                export_task(
                    task,
                    dest,
                    wheel,
                    protocol=protocol,
                    judge_hosts=judge_hosts,
                    agent_timeout=agent_timeout,
                    verifier_timeout=verifier_timeout,
                    requirement=requirement,
                    base_image=base_image,
                )
            )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    manifest = out / MANIFEST_FILE
    previous: dict[str, Any] = {}
    if manifest.is_file():
        try:
            previous = json.loads(manifest.read_text(encoding="utf-8")).get("tasks", {})
        except (OSError, ValueError, AttributeError):
            previous = {}
    entries = dict(previous) if isinstance(previous, dict) else {}
    by_id = {t.id: t for t in ds.tasks}
    for e in exported:
        entries[e.dir.name] = {
            "task_id": e.task_id,
            "harbor_name": e.name,
            "task_digest": task_digest(by_id[e.task_id]),
            "left_out": e.left_out,
        }
    from ..._io import atomic_write_json

    atomic_write_json(
        manifest,
        {
            "jobbench_version": __version__,
            "harbor": HARBOR_RANGE,
            "dataset_root": str(root),
            "protocol": protocol,
            "judge_hosts": list(judge_hosts or []),
            "tasks": dict(sorted(entries.items())),
        },
    )
    return ExportResult(out, exported, manifest)
