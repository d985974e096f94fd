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
echo "setup: done ($("$PY" -c 'import jobbench; print("jobbench", jobbench.__version__)'))"
