"""Workspaces, isolation and limits for agent trials.

Public API:
    :class:`Sandbox` (bubblewrap, or a plain subprocess with a loud warning),
    :class:`Limits`, :class:`Mount`, :class:`SandboxResult`, :class:`SandboxError`,
    :func:`bwrap_available`, :func:`resolve_backend`, :func:`kill_all_sandboxes`,
    :func:`prepare_workspace`, :class:`TrialWorkspace`, :func:`cleanup_stale_scratch`,
    :func:`scratch_owner`, :data:`SCRATCH_PREFIX`, :data:`OWNER_FILE`,
    :func:`collect_deliverables`, :func:`reset_workspace`, :func:`merge_rescued`,
    :class:`DeliverableLimits`, :class:`Collected`, :class:`DiskQuota` and
    :class:`QuotaMonitor` (the per-trial disk quota), :func:`remove_scratch_dir`,
    :class:`Lifeline` (a command dies with the harness), :class:`UnsafePath` (a symbolic
    link refused on the host; the helpers that never follow one live in
    :mod:`jobbench.sandbox.safefs`).
"""

from ._lifeline import Lifeline
from ._quota import DEFAULT_DISK_QUOTA_MB, DiskQuota, QuotaMonitor
from ._sandbox import (
    HOME_MOUNT,
    UID_POOL,
    WORKSPACE_MOUNT,
    Limits,
    Mount,
    ResolvedBackend,
    Sandbox,
    SandboxError,
    SandboxResult,
    bwrap_available,
    chown_back,
    kill_all_sandboxes,
    python_prefixes,
    resolve_backend,
)
from ._workspace import (
    OUTPUT,
    OWNER_FILE,
    SCRATCH_PREFIX,
    TASK_FOLDER,
    CapTally,
    Collected,
    DeliverableLimits,
    TrialWorkspace,
    cap_order,
    cleanup_stale_scratch,
    collect_deliverables,
    default_scratch_root,
    merge_rescued,
    prepare_workspace,
    remove_scratch_dir,
    reset_workspace,
    scratch_owner,
)
from .safefs import UnsafePath

__all__ = [
    "Lifeline",
    "UnsafePath",
    "HOME_MOUNT",
    "UID_POOL",
    "WORKSPACE_MOUNT",
    "Limits",
    "Mount",
    "ResolvedBackend",
    "Sandbox",
    "SandboxError",
    "SandboxResult",
    "bwrap_available",
    "chown_back",
    "kill_all_sandboxes",
    "python_prefixes",
    "resolve_backend",
    "OUTPUT",
    "OWNER_FILE",
    "SCRATCH_PREFIX",
    "TASK_FOLDER",
    "Collected",
    "CapTally",
    "DeliverableLimits",
    "cap_order",
    "TrialWorkspace",
    "cleanup_stale_scratch",
    "collect_deliverables",
    "default_scratch_root",
    "merge_rescued",
    "prepare_workspace",
    "scratch_owner",
    "reset_workspace",
    "remove_scratch_dir",
    "DEFAULT_DISK_QUOTA_MB",
    "DiskQuota",
    "QuotaMonitor",
]
