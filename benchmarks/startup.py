"""Start-up costs, as ratios measured in one run (the machine may be shared and loaded).

Prints, each as a median over ``--repeat`` interleaved runs:

* ``sandbox``: one sandboxed ``true`` (:meth:`jobbench.sandbox.Sandbox.run`, bubblewrap
  backend, the lifeline watchdog included) against bubblewrap's own start of ``true`` with a
  comparable set of mounts; the ratio should stay <= 2. ``Sandbox.run`` hands the command to
  a warm watchdog and starts its replacement (a Python interpreter, 7-15 ms of CPU) while the
  command runs; before each bubblewrap timing the benchmark waits until that replacement is
  ready, so its start-up is not billed to bubblewrap's side (it still competes with the
  sandboxed command inside ``Sandbox.run``'s own timing);
* ``resume``: a no-op resume of the sample run (``python -m jobbench run`` a second time:
  every trial finished, every grade and the report up to date) against
  ``python -m jobbench --help``; the ratio should stay <= 3;
* which of ``openai``, ``matplotlib``, ``numpy`` a ``--help`` and the no-op resume import
  (``python -X importtime``).

Usage: ``python benchmarks/startup.py [--repeat 7] [--skip-resume] [--skip-sandbox]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("openai", "matplotlib", "numpy")


def _time(argv: list[str], cwd: Path | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def _imported(argv: list[str]) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=True
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()}
    return [m for m in HEAVY if m in names]


def _ratio(label: str, a: list[float], b: list[float], a_name: str, b_name: str) -> None:
    ratios = sorted(x / y for x, y in zip(a, b))
    print(
        f"{label}: {a_name} {1000 * statistics.median(a):.1f} ms, {b_name} "
        f"{1000 * statistics.median(b):.1f} ms; ratio median {statistics.median(ratios):.2f} "
        f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f}, {len(ratios)} pairs)"
    )


def bench_sandbox(repeat: int) -> None:
    from jobbench.sandbox import Sandbox, resolve_backend

    if resolve_backend("auto") != "bwrap":
        print("sandbox: bubblewrap is not usable here; skipped")
        return
    from jobbench.sandbox._sandbox import Limits
    from jobbench.sandbox._warm import POOL as WARM_POOL

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        etc = Path(tmp) / "etc"
        etc.mkdir()
        for name in ("passwd", "group"):
            (etc / name).write_text("")
        box = Sandbox(ws, backend="bwrap")
        # bubblewrap's own start of the same sandbox: the argv Sandbox.run builds (mounts,
        # user switch and rlimits included), run directly, without the harness around it
        read, write = os.pipe()
        uid = None if os.geteuid() != 0 else 65000
        plain = box._bwrap_argv(["true"], Limits(), "/workspace", uid, etc, write)

        def direct() -> float:
            t0 = time.perf_counter()
            subprocess.run(plain, pass_fds=(write,), check=True)
            return time.perf_counter() - t0

        box.run(["true"])
        direct()
        ours, theirs = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            res = box.run(["true"])
            ours.append(time.perf_counter() - t0)
            assert res.exit_code == 0, res
            WARM_POOL.wait_ready()  # the replacement watchdog's start stays out of bwrap's time
            theirs.append(direct())
        os.close(read)
        os.close(write)
    _ratio("sandbox", ours, theirs, "Sandbox.run(['true'])", "bwrap true")


def bench_resume(repeat: int) -> None:
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        run = [sys.executable, "-m", "jobbench", "run", "--runs-dir", str(Path(tmp) / "runs")]
        help_ = [sys.executable, "-m", "jobbench", "--help"]
        t0 = time.perf_counter()
        _time(run, cwd=repo)  # the first run does the work
        print(f"resume: first run of the sample took {time.perf_counter() - t0:.1f} s")
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(_time(run, cwd=repo))
            theirs.append(_time(help_, cwd=repo))
        _ratio("resume", ours, theirs, "no-op resume", "jobbench --help")
        print(f"imports of jobbench --help: {_imported(['-m', 'jobbench', '--help']) or 'none'}")
        print(f"imports of the no-op resume: {_imported(run[1:]) or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--skip-resume", action="store_true")
    ap.add_argument("--skip-sandbox", action="store_true")
    args = ap.parse_args()
    if not args.skip_sandbox:
        bench_sandbox(args.repeat * 3)
    if not args.skip_resume:
        bench_resume(args.repeat)


if __name__ == "__main__":
    main()
