#!/usr/bin/env bash
# Set up JobBench on a fresh Debian/Ubuntu machine (or any machine with Python >= 3.11).
#   bash scripts/setup.sh          # system packages (if root + apt) and the package
#   bash scripts/setup.sh --dev    # plus test dependencies and Chromium for report tests
# System packages: LibreOffice (headless workbook recalculation), bubblewrap (agent sandbox),
# Chromium (only with --dev: renders report.html in tests). Each is optional at run time:
# JobBench falls back (formulas engine, plain subprocess with a warning) and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1
PY=${PYTHON:-python3}

apt_pkgs="bubblewrap libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-draw-nogui"
[ "$dev" = 1 ] && apt_pkgs="$apt_pkgs chromium"
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  need=""
  for p in $apt_pkgs; do
    case "$p" in
      libreoffice-*) command -v soffice >/dev/null 2>&1 && continue ;;
      chromium) command -v chromium >/dev/null 2>&1 && continue ;;
    esac
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
  done
  if [ -n "$need" ]; then
    echo "setup: apt-get install$need"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $need >/dev/null
  fi
else
  echo "setup: not root or no apt-get; skipping system packages ($apt_pkgs)" >&2
fi

if [ "$dev" = 1 ]; then
  "$PY" -m pip install -q --disable-pip-version-check -e '.[dev]'
else
  "$PY" -m pip install -q --disable-pip-version-check -e .
fi
if [ "$dev" = 1 ]; then
  # The Harbor bridge's tests check exported tasks and job files with the real harbor package,
  # which needs Python >= 3.12: below that, put it in .venv-harbor/ (tests find it there).
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    HPY=""
    for c in python3.13 python3.12 "$HOME"/.pyenv/versions/3.13*/bin/python \
             "$HOME"/.pyenv/versions/3.12*/bin/python; do
      if command -v "$c" >/dev/null 2>&1 \
         && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
        HPY="$c"; break
      fi
    done
    if [ -z "$HPY" ]; then
      echo "setup: no Python >= 3.12 found; the Harbor bridge tests need one (.venv-harbor)" >&2
    elif ! .venv-harbor/bin/python -c 'import harbor' >/dev/null 2>&1; then
      echo "setup: .venv-harbor (harbor for the bridge tests, $("$HPY" --version))"
      "$HPY" -m venv .venv-harbor
      .venv-harbor/bin/python -m pip install -q --disable-pip-version-check 'harbor>=0.26,<0.27'
    fi
  fi
fi
echo "setup: done ($("$PY" -c 'import jobbench; print("jobbench", jobbench.__version__)'))"
