#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# Ctrl-C during `laptime bench`, on a machine with a GPU (issue 12, item 7): sends SIGINT to a
# running bench and checks that it
#   1. interrupted in the steady loop: exits 130, prints the statistics of the iterations done
#      ("interrupted: N of M steady iterations done", "steady state over N iterations"), writes a
#      valid --json with "interrupted": true and N steady laps, and a --trace that
#      `laptime analyze` reads;
#   2. interrupted during warm-up: exits 130, says there are no steady-state statistics, still
#      writes a valid --json;
#   3. given a second Ctrl-C: exits 130 at once;
#   4. not interrupted: exits 0 with no "interrupted" in its JSON;
# and that no temporary (.NAME.laptime-PID.tmp) is left behind by 1, 2 or 4.
#
#   scripts/dev/interrupt-check.sh [BUILD_DIR]      (default: build)
set -euo pipefail

build=${1:-build}
laptime=$(realpath "$build/bench/laptime")
[[ -x $laptime ]] || { echo "interrupt-check: $laptime not found; build the laptime target first." >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# Starts a bench in the background with line-buffered output; waits until its header is out
# (the model is built, the loop about to start), then `settle` seconds more.
start_bench() {
  local out=$1 settle=$2
  shift 2
  stdbuf -oL -eL "$laptime" bench "$@" >"$out" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q '^  weights ' "$out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep "$settle"
}

finish() {  # waits for $pid, sets rc
  set +e
  wait "$pid"
  rc=$?
  set -e
}

no_temporaries() {
  local left
  left=$(find "$work" -name '.*.laptime-*.tmp' | wc -l)
  [[ $left == 0 ]] && pass "$1: no temporary left" || fail "$1: $left temporaries left in $work"
}

echo "1. Ctrl-C in the steady loop"
start_bench "$work/steady.txt" 3 gpt2 --batch 1 --seq 128 --warmup 2 --iters 100000 \
  --json "$work/steady.json" --trace "$work/steady.sqlite"
kill -INT "$pid"
finish
[[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
if n=$(grep -oP 'interrupted: \K[0-9]+(?= of 100000 steady iterations done)' "$work/steady.txt"); then
  pass "says 'interrupted: $n of 100000 steady iterations done'"
  grep -q "steady state over $n iterations (ms): mean" "$work/steady.txt" && pass "statistics over the $n laps" \
    || fail "no 'steady state over $n iterations' line"
  python3 - "$work/steady.json" "$n" <<'PY' && pass "JSON valid: interrupted, $n steady laps, median" || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
steady = [i for i in r["iterations"] if not i["warmup"]]
assert r["interrupted"] is True, r.get("interrupted")
assert len(steady) == int(sys.argv[2]), (len(steady), sys.argv[2])
assert r["steady_ms"]["median"] > 0
PY
else
  fail "no 'interrupted: N of 100000' line"; sed 's/^/        /' "$work/steady.txt" | tail -20
fi
"$laptime" analyze "$work/steady.sqlite" >"$work/analyze.txt" 2>&1 && pass "laptime analyze reads the trace" \
  || { fail "laptime analyze on the trace"; tail -5 "$work/analyze.txt"; }
no_temporaries "steady"

echo "2. Ctrl-C during warm-up"
start_bench "$work/warm.txt" 2 gpt2 --batch 1 --seq 128 --warmup 100000 --iters 5 --json "$work/warm.json"
kill -INT "$pid"
finish
[[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
grep -q 'all warm-up: no steady-state statistics' "$work/warm.txt" && pass "says there are no statistics" \
  || fail "no 'no steady-state statistics' line"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["interrupted"] and "steady_ms" not in r' \
  "$work/warm.json" && pass "JSON valid, interrupted, no steady_ms" || fail "JSON"
no_temporaries "warm-up"

echo "3. a second Ctrl-C exits at once"
start_bench "$work/twice.txt" 2 gpt2 --batch 1 --seq 128 --warmup 2 --iters 100000
kill -INT "$pid"
kill -INT "$pid" 2>/dev/null || true
start=$(date +%s)
finish
[[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
(( $(date +%s) - start <= 5 )) && pass "within 5 s" || fail "took $(( $(date +%s) - start )) s"

echo "4. no Ctrl-C"
set +e
"$laptime" bench gpt2 --batch 1 --seq 128 --warmup 1 --iters 3 --json "$work/plain.json" >"$work/plain.txt" 2>&1
rc=$?
set -e
[[ $rc == 0 ]] && pass "exit 0" || fail "exit $rc"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "interrupted" not in r' "$work/plain.json" \
  && pass "JSON without 'interrupted'" || fail "JSON"
no_temporaries "plain"

if (( failures )); then echo "interrupt-check: $failures check(s) failed"; exit 1; fi
echo "interrupt-check: all checks passed"
