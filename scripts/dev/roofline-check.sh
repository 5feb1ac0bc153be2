#!/usr/bin/env bash
# The per-layer roofline on a GPU, end to end (issue 9, item 4):
#   1. `laptime peak --force`: the ceilings of this device (bf16/tf32/fp32 GEMM, device copy)
#   2. per model: `laptime bench MODEL --nvtx layer --trace T --json B` (CUPTI capture; the
#      bench writes the per-layer FLOPs and bytes beside both, MODEL.layers.json)
#   3. `laptime analyze T --roofline-svg R --json A`: the report with its roofline table
#   4. scripts/dev/roofline_check.py: every layer's % of its bound against the bench's own
#      FLOPs (or bytes) / the layer's time from the range table / the ceiling, within 2%
# Usage: scripts/dev/roofline-check.sh [--out DIR] [--laptime BIN] [--precision P] [models...]
#   --out DIR       where the results go: peak.json, MODEL.roofline.svg, MODEL.analyze.json
#                   (default: $OUT when set, else roofline-<date>); the traces, bench reports,
#                   sidecars and per-step logs go to DIR/work, or to a temporary folder when
#                   DIR is $OUT (the device returns only a few files)
#   --laptime BIN   the binary (default: build/bench/laptime)
#   --precision P   bf16 (default), tf32 or fp32
#   --tests BIN     test_layer_costs, run first (default: tests/test_layer_costs beside the
#                   binary's build folder, when it exists): the workloads' costs on the GPU
#   models          gpt2 resnet50 (default: both)
# Exit status: 1 if any step failed. Prints the tables; the SVGs and JSON stay in DIR.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-}
LAPTIME=$REPO/build/bench/laptime
PRECISION=bf16
TESTS=""
MODELS=()
while (($#)); do
  case $1 in
    --out) OUTDIR=${2:?--out needs a folder}; shift 2 ;;
    --laptime) LAPTIME=${2:?--laptime needs a file}; shift 2 ;;
    --precision) PRECISION=${2:?--precision needs bf16, tf32 or fp32}; shift 2 ;;
    --tests) TESTS=${2:?--tests needs a file}; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) echo "roofline-check.sh: unknown option '$1'; see --help." >&2; exit 2 ;;
    *) MODELS+=("$1"); shift ;;
  esac
done
((${#MODELS[@]})) || MODELS=(gpt2 resnet50)
OUTDIR=${OUTDIR:-roofline-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR"
if [[ -n ${OUT:-} && $OUTDIR == "$OUT" ]]; then WORK=$(mktemp -d -t roofline-check.XXXXXX); else WORK=$OUTDIR/work; fi
mkdir -p "$WORK"
[[ -x $LAPTIME ]] || { echo "roofline-check.sh: no laptime binary at $LAPTIME; build it or pass --laptime." >&2; exit 2; }
PYTHON=${PYTHON:-python3}
status=0
step() {  # step NAME command...: runs it, its output to the terminal and to NAME.log
  echo "== $1"
  local name=$1
  shift
  "$@" 2>&1 | tee "$WORK/$name.log"
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) || { echo "!! $name failed (exit $rc)"; status=1; }
  return "$rc"
}

TESTS=${TESTS:-$(dirname "$LAPTIME")/../tests/test_layer_costs}
if [[ -x $TESTS ]]; then step tests "$TESTS"; else echo "== tests: no $TESTS, skipped"; fi
step peak "$LAPTIME" peak --force --cache "$OUTDIR/peak.json"
for m in "${MODELS[@]}"; do
  step "bench-$m" "$LAPTIME" bench "$m" --precision "$PRECISION" --nvtx layer --warmup 5 --iters 20 \
    --trace "$WORK/$m.sqlite" --json "$WORK/$m.json" || continue
  step "analyze-$m" "$LAPTIME" analyze "$WORK/$m.sqlite" --peak "$OUTDIR/peak.json" \
    --roofline-svg "$OUTDIR/$m.roofline.svg" --json "$OUTDIR/$m.analyze.json" || continue
  step "check-$m" "$PYTHON" "$REPO/scripts/dev/roofline_check.py" "$WORK/$m.json" "$OUTDIR/$m.analyze.json" \
    "$OUTDIR/peak.json"
done

echo "== roofline tables"
for m in "${MODELS[@]}"; do
  [[ -f $WORK/analyze-$m.log ]] && sed -n '/^Roofline per layer/,/^wrote/p' "$WORK/analyze-$m.log"
done
echo "== checks"
cat "$WORK"/check-*.log 2>/dev/null | grep -E "layers, worst deviation|roofline|sidecar" || true
[[ -f $WORK/tests.log ]] && grep -E "PASSED|FAILED|SKIPPED" "$WORK/tests.log"
echo "results in $OUTDIR, traces and logs in $WORK; exit $status"
exit "$status"
