#!/usr/bin/env bash
# Verify the claude-code / codex / opencode adapters against the REAL agent CLIs.
#   bash scripts/verify_cli_agents.sh [--leaderboard-versions] [PREFIX [PYTEST ARGS…]]
#   (default PREFIX: /tmp/clis, or /tmp/clis-leaderboard with --leaderboard-versions)
# --leaderboard-versions installs the CLI versions the published leaderboard used where
# they are known (OpenCode 1.14.18, the reference agent: Job-Bench/job-bench-eval,
# harbor/configs/opencode.yaml); the run-date versions of Claude Code and Codex are not
# published, so the verified pins below are kept for them (docs/runner.md, "Protocols").
# Installs the pinned npm packages into PREFIX (npm only; needs the npm registry) and runs
# tests/runner/test_cli_agents_real.py: one full trial per CLI through the JobBench runner
# and sandbox, with the CLI pointed at a scripted model server on 127.0.0.1 (no API key,
# no internet). Not part of CI (.ci/run) on purpose: the three packages are ~1 GB.
# Pins verified on 2026-11-29 (see docs/runner.md, "Verified against the real CLIs").
set -euo pipefail
cd "$(dirname "$0")/.."
LEADERBOARD=0
if [ "${1:-}" = "--leaderboard-versions" ]; then
  LEADERBOARD=1
  shift
fi
DEFAULT_PREFIX=/tmp/clis
[ "$LEADERBOARD" = 1 ] && DEFAULT_PREFIX=/tmp/clis-leaderboard
PREFIX=${1:-${JOBBENCH_CLI_PREFIX:-$DEFAULT_PREFIX}}
[ $# -gt 0 ] && shift  # the rest goes to pytest
CODEX_VERSION=${CODEX_VERSION:-0.171.0}
OPENCODE_VERSION=${OPENCODE_VERSION:-1.18.33}
CLAUDE_CODE_VERSION=${CLAUDE_CODE_VERSION:-2.1.332}
if [ "$LEADERBOARD" = 1 ]; then
  OPENCODE_VERSION=1.14.18  # the leaderboard's reference agent
  echo "leaderboard versions: opencode-ai@$OPENCODE_VERSION (published); codex" \
       "$CODEX_VERSION and claude-code $CLAUDE_CODE_VERSION are this repository's" \
       "verified pins (their run-date versions are not published)" >&2
fi
PY=${PYTHON:-python3}

command -v npm >/dev/null 2>&1 || { echo "npm is needed (Node.js 20+)" >&2; exit 2; }
mkdir -p "$PREFIX"
# the packages' postinstall scripts are not needed: each ships its platform binary as an
# optional dependency (@openai/codex-linux-x64, opencode-linux-x64, @anthropic-ai/claude-code-linux-x64)
if ! npm install --prefix "$PREFIX" --save-exact --no-audit --no-fund \
  "@openai/codex@$CODEX_VERSION" "opencode-ai@$OPENCODE_VERSION" \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"; then
  echo "npm could not install the versions above (is each published on this registry?" \
       "npm view opencode-ai versions)" >&2
  exit 2
fi
chmod -R a+rX "$PREFIX"  # the sandbox runs the CLI as an unprivileged user
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for b in codex opencode claude; do
  printf '%-9s %s\n' "$b" "$(HOME=$home "$PREFIX/node_modules/.bin/$b" --version 2>/dev/null | head -1)"
done
export JOBBENCH_CLI_PREFIX="$PREFIX"
PYTHONPATH=src "$PY" -m pytest -q -p no:logging -rs tests/runner/test_cli_agents_real.py "$@"
