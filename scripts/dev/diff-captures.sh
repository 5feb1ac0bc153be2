#!/usr/bin/env bash
# The `laptime diff` runs of docs/PROFILING.md §9, captured and diffed in one go on a GPU
# machine with Nsight Systems (and PyTorch, for the torch rows):
#
#   for gpt2 and resnet50, bf16:
#     A, A'   laptime bench, eager, --nvtx layer, captured twice   -> calibration: A vs A'
#     G       laptime bench --graph (nsys --cuda-graph-trace=node) -> eager vs graph: A vs G
#     T       bench/torch_baseline.py, eager, --nvtx layer         -> torch vs laptime: T vs A
#   each exported to SQLite, each diff written as text, JSON and SVG.
#
# Usage: scripts/dev/diff-captures.sh [--out DIR] [--build-dir DIR] [--iters N] [--warmup N]
#   --out DIR        where captures/ and diffs/ go (default: <build dir>/diff-captures-<date>-<time>)
#   --build-dir DIR  the CMake build folder holding bench/laptime (default: build)
#   --iters N        timed iterations per capture (default 30: the bootstrap wants many)
#   --warmup N       warm-up iterations per capture (default 5)
# NSYS and PYTHON select the tools (nsys, python3). A failing step is reported and the
# others still run; the summary lists every step. Exit status: 1 if any step failed.
# Diffs pass --skip-warmup N on both sides (PyTorch's iterations carry no warm-up mark).
# The calibration (A vs A') should label nothing FASTER or SLOWER; its intervals give the
# noise floor per model (the smallest change the diff can detect).
set -uo pipefail

usage() { sed -n '3,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NSYS=${NSYS:-nsys}
PYTHON=${PYTHON:-python3}
BUILD=build
OUT=""
ITERS=30
WARMUP=5
while (($#)); do
  case $1 in
    --out) OUT=${2:?--out needs a folder}; shift 2 ;;
    --build-dir) BUILD=${2:?--build-dir needs a folder}; shift 2 ;;
    --iters) ITERS=${2:?--iters needs a number}; shift 2 ;;
    --warmup) WARMUP=${2:?--warmup needs a number}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "diff-captures.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
cd "$REPO" || exit 1
LAPTIME=$BUILD/bench/laptime
[[ -x $LAPTIME ]] || { echo "diff-captures.sh: no $LAPTIME: build the laptime target first" >&2; exit 1; }
command -v "$NSYS" >/dev/null || { echo "diff-captures.sh: no nsys ($NSYS) on PATH" >&2; exit 1; }
OUT=${OUT:-$BUILD/diff-captures-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/captures" "$OUT/diffs" "$OUT/logs"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
FAILED=0
have_torch=0
"$PYTHON" -c "import torch" 2>/dev/null && have_torch=1

record() {  # record STATUS NAME
  printf '%-5s %s\n' "$1" "$2" | tee -a "$SUMMARY"
  [[ $1 == FAIL ]] && FAILED=1
  return 0
}

# capture NAME [nsys options --] COMMAND...: nsys profile, then the SQLite export.
capture() {
  local name=$1; shift
  local extra=()
  while (($#)) && [[ $1 != -- ]]; do extra+=("$1"); shift; done
  shift
  local log=$OUT/logs/$name.log
  if "$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --force-overwrite=true \
       "${extra[@]}" -o "$OUT/captures/$name" "$@" >"$log" 2>&1 &&
     "$NSYS" export --type sqlite --force-overwrite=true -o "$OUT/captures/$name.sqlite" \
       "$OUT/captures/$name.nsys-rep" >>"$log" 2>&1; then
    record PASS "capture $name"
  else
    record FAIL "capture $name (log: $log)"
  fi
}

# diff NAME BEFORE AFTER [options]: text, JSON and SVG; exit 3 (a gate) does not apply here.
diff_pair() {
  local name=$1 before=$OUT/captures/$2.sqlite after=$OUT/captures/$3.sqlite; shift 3
  if [[ ! -f $before || ! -f $after ]]; then
    record SKIP "diff $name (a capture is missing)"
    return
  fi
  if "$LAPTIME" diff "$before" "$after" --skip-warmup "$WARMUP" "$@" \
       --json "$OUT/diffs/$name.json" --svg "$OUT/diffs/$name.svg" >"$OUT/diffs/$name.txt" 2>&1; then
    record PASS "diff $name: $(grep -m1 '^Verdict' "$OUT/diffs/$name.txt")"
  else
    record FAIL "diff $name (see $OUT/diffs/$name.txt)"
  fi
}

# noise_floor NAME: from the calibration diff's JSON, the smallest change it could detect:
# the half-width of each row's 95% interval, relative to its median (the iteration, the
# median layer, the widest layer), and whether anything was labelled FASTER or SLOWER.
noise_floor() {
  local json=$OUT/diffs/$1.json
  [[ -f $json ]] || return
  if "$PYTHON" - "$json" >"$OUT/diffs/$1_noise_floor.txt" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
def half(r):
    lo, hi = r.get("ci_pct", [0, 0])
    return max(abs(lo), abs(hi))
rows = [r for r in d["rows"] if "ci_pct" in r]
layers = [r for r in rows if not r["whole_iteration"]]
flagged = [f'{r["name"]} {r["label"]}' for r in rows if r["label"] in ("FASTER", "SLOWER")]
print(f'iteration: ±{half(rows[0]):.2f}%', end="")
if layers:
    worst = max(layers, key=half)
    print(f'; layers: median ±{statistics.median(map(half, layers)):.2f}%, widest ±{half(worst):.2f}% ({worst["name"]})', end="")
print("; flagged: " + (", ".join(flagged) if flagged else "none"))
PY
  then
    record PASS "noise floor $1: $(cat "$OUT/diffs/$1_noise_floor.txt")"
  else
    record FAIL "noise floor $1"
  fi
}

for model in gpt2 resnet50; do
  bench=("$LAPTIME" bench "$model" --precision bf16 --warmup "$WARMUP" --iters "$ITERS")
  capture "${model}_A" -- "${bench[@]}" --nvtx layer
  capture "${model}_A2" -- "${bench[@]}" --nvtx layer
  capture "${model}_graph" --cuda-graph-trace=node -- "${bench[@]}" --nvtx layer --graph
  if ((have_torch)); then
    capture "${model}_torch" -- "$PYTHON" bench/torch_baseline.py "$model" --precision bf16 \
      --warmup "$WARMUP" --iters "$ITERS" --nvtx layer
  else
    record SKIP "capture ${model}_torch (torch is not importable by $PYTHON)"
  fi
  diff_pair "${model}_A_vs_A2" "${model}_A" "${model}_A2"
  noise_floor "${model}_A_vs_A2"
  diff_pair "${model}_A_vs_A2_by_block" "${model}_A" "${model}_A2" --by block
  diff_pair "${model}_eager_vs_graph" "${model}_A" "${model}_graph"
  diff_pair "${model}_torch_vs_laptime" "${model}_torch" "${model}_A"
  # Where steady state starts, as analyze reports it.
  if [[ -f $OUT/captures/${model}_A.sqlite ]]; then
    "$LAPTIME" analyze "$OUT/captures/${model}_A.sqlite" >"$OUT/diffs/${model}_A_analyze.txt" 2>&1
    record PASS "analyze ${model}_A: $(grep -m1 '^Steady state' "$OUT/diffs/${model}_A_analyze.txt")"
  fi
done
rm -f "$OUT"/captures/*.nsys-rep
echo "summary: $SUMMARY; diffs (text, JSON, SVG): $OUT/diffs"
exit "$FAILED"
