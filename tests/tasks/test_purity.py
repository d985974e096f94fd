"""Loading is pure and read-only: nothing is written, renamed, created or touched inside
the dataset, and a read-only copy loads identically."""

import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.tasks import load_dataset, task_digest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_MUTATING = {
    "os.mkdir",
    "os.rename",
    "os.replace",
    "os.remove",
    "os.rmdir",
    "os.chmod",
    "os.chown",
    "os.utime",
    "os.symlink",
    "os.link",
    "os.truncate",
    "shutil.rmtree",
    "shutil.copyfile",
    "shutil.move",
    "os.mkfifo",
    "os.mknod",
    "os.setxattr",
    "os.removexattr",
}


class _Recorder:
    """Process-wide audit hook (hooks cannot be removed), active only inside ``watch``."""

    def __init__(self) -> None:
        self.root: str | None = None
        self.events: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)

    def _under(self, path: object) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)) or self.root is None:
            return False
        return os.path.abspath(path).startswith(self.root)

    def _hook(self, event: str, args: tuple) -> None:
        if self.root is None:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and self._under(path):
                self.events.append((event, str(path)))
        elif event in _MUTATING and args and self._under(args[0]):
            self.events.append((event, str(args[0])))


_RECORDER = _Recorder()


def _snapshot(root: Path) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = (
                hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            )
            out[p.relative_to(root).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
        st = Path(dirpath).lstat()
        out[Path(dirpath).relative_to(root).as_posix() + "/"] = (st.st_mode, st.st_mtime_ns)
    return out


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "datasets"
    shutil.copytree(FIXTURES, dest)
    return dest


def test_recorder_sees_writes(copy: Path) -> None:
    # the detector itself must be able to fail
    _RECORDER.root, _RECORDER.events = str(copy), []
    try:
        (copy / "public" / "probe.txt").write_text("x")
        os.mkdir(copy / "public" / "probe-dir")
    finally:
        _RECORDER.root = None
    assert [e for e, _ in _RECORDER.events] == ["open", "os.mkdir"]


def test_loading_and_cli_write_nothing(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(copy)
    before = _snapshot(copy)
    runner = CliRunner()
    _RECORDER.root, _RECORDER.events = str(copy), []
    try:
        digests = {}
        for name in ("public", "hf", "invalid", "duplicate"):
            ds = load_dataset(name)
            digests.update({f"{name}:{t.id}": task_digest(t) for t in ds.tasks})
        results = [
            runner.invoke(app, ["validate", "public"]),
            runner.invoke(app, ["validate", "invalid", "--json"]),
            runner.invoke(app, ["tasks", "hf"]),
            runner.invoke(app, ["tasks", "public", "--json"]),
        ]
    finally:
        _RECORDER.root = None
    assert [r.exit_code for r in results] == [0, 1, 0, 0]
    assert _RECORDER.events == []
    assert _snapshot(copy) == before
    assert len(digests) == 17  # 8 invalid variants load tolerantly (extension rules only)


def test_read_only_copy_loads_identically(copy: Path) -> None:
    expected = {
        name: (
            [(t.id, task_digest(t)) for t in ds.tasks],
            [(p.where, p.message) for p in ds.problems],
        )
        for name in ("public", "hf", "invalid")
        for ds in [load_dataset(copy / name)]
    }
    for dirpath, _dirnames, filenames in os.walk(copy):
        for name in filenames:
            os.chmod(Path(dirpath) / name, 0o444)
        os.chmod(dirpath, 0o555)
    try:
        for name, want in expected.items():
            ds = load_dataset(copy / name)
            got = (
                [(t.id, task_digest(t)) for t in ds.tasks],
                [(p.where, p.message) for p in ds.problems],
            )
            assert got == want
        assert len(expected["public"][0]) == 5 and len(expected["invalid"][1]) == 31
    finally:
        for dirpath, _dirnames, _filenames in os.walk(copy):
            os.chmod(dirpath, 0o755)
