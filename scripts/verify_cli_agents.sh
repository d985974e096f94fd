#!/usr/bin/env bash
# Verify the claude-code / codex / opencode adapters against the REAL agent CLIs.
#   bash scripts/verify_cli_agents.sh [PREFIX [PYTEST ARGS…]]   # default PREFIX: /tmp/clis
# Installs the pinned npm packages into PREFIX (npm only; needs the npm registry) and runs
# tests/runner/test_cli_agents_real.py: one full trial per CLI through the JobBench runner
# and sandbox, with the CLI pointed at a scripted model server on 127.0.0.1 (no API key,
# no internet). Not part of CI (.ci/run) on purpose: the three packages are ~1 GB.
# Pins verified on 2026-11-29 (see docs/runner.md, "Verified against the real CLIs").
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${1:-${JOBBENCH_CLI_PREFIX:-/tmp/clis}}
[ $# -gt 0 ] && shift  # the rest goes to pytest
CODEX_VERSION=${CODEX_VERSION:-0.171.0}
OPENCODE_VERSION=${OPENCODE_VERSION:-1.18.33}
CLAUDE_CODE_VERSION=${CLAUDE_CODE_VERSION:-2.1.332}
PY=${PYTHON:-python3}

command -v npm >/dev/null 2>&1 || { echo "npm is needed (Node.js 20+)" >&2; exit 2; }
mkdir -p "$PREFIX"
# the packages' postinstall scripts are not needed: each ships its platform binary as an
# optional dependency (@openai/codex-linux-x64, opencode-linux-x64, @anthropic-ai/claude-code-linux-x64)
npm install --prefix "$PREFIX" --save-exact --no-audit --no-fund \
  "@openai/codex@$CODEX_VERSION" "opencode-ai@$OPENCODE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
chmod -R a+rX "$PREFIX"  # the sandbox runs the CLI as an unprivileged user
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for b in codex opencode claude; do
  printf '%-9s %s\n' "$b" "$(HOME=$home "$PREFIX/node_modules/.bin/$b" --version 2>/dev/null | head -1)"
done
export JOBBENCH_CLI_PREFIX="$PREFIX"
PYTHONPATH=src "$PY" -m pytest -q -p no:logging -rs tests/runner/test_cli_agents_real.py "$@"
