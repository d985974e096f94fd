#!/bin/sh
# Build a wheel from this checkout (not an editable install), install it into a fresh venv
# and run `jobbench run` (the default oracle and null agents on the packaged sample, graded
# by checks) from an empty temporary directory: the packaged sample must be found.
# Usage: scripts/check_wheel_install.sh [VENV]   (default: a temporary venv, removed after)
# VENV may reuse the system site-packages (SYSTEM_SITE=1) when no package index is reachable.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=${1:-$work/venv}
PY=${PYTHON:-python3}
if [ "${SYSTEM_SITE:-0}" = 1 ]; then
  "$PY" -m venv --system-site-packages "$venv"
else
  "$PY" -m venv "$venv"
fi
"$venv/bin/pip" wheel --no-deps -q -w "$work/wheel" "$here"
"$venv/bin/pip" install -q --force-reinstall --no-deps "$work"/wheel/jobbench-*.whl
[ "${SYSTEM_SITE:-0}" = 1 ] || "$venv/bin/pip" install -q "$work"/wheel/jobbench-*.whl
mkdir "$work/empty"
cd "$work/empty"
"$venv/bin/jobbench" run --no-progress --runs-dir runs
test -f runs/*/report/leaderboard.md
echo "wheel install OK: jobbench run on the packaged sample wrote $(ls -d runs/*/report)"
