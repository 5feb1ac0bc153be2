#!/usr/bin/env bash
# GPT-2 on the GPU in one go, for the issue-10 work: the GPU suites, the end-to-end check
# against PyTorch, and lap times for each attention core x precision, a table printed last.
#
#   scripts/dev/gpt2-perf.sh            (from the repository root; the build in build/)
#
# Environment: BUILD (build folder, default build), OUT (where logs go, default
# /tmp/gpt2-perf), E2E_SHAPES (check_gpt2.py --shapes, default 3x77), SKIP_TESTS=1,
# SKIP_E2E=1, SET=full|confirm (which lap times), TRACE=1 (a CUPTI capture of bf16 B8 and B1-graph, analyzed: per-kernel times).
# Timings: laptime bench, CUDA events, median of 20 after 5 warm-up; compare within one run.
set -u
BUILD=${BUILD:-build}
LAPTIME=$BUILD/bench/laptime
OUT=${OUT:-/tmp/gpt2-perf}
mkdir -p "$OUT"
TABLE=$OUT/table.txt
: >"$TABLE"
CARD=$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader 2>&1)
echo "card: $CARD" | tee -a "$TABLE"

# 1. GPU suites, one process per precision, and the end-to-end check, side by side.
if [[ ${SKIP_TESTS:-0} != 1 ]]; then
  for p in fp32 tf32 bf16; do
    "$BUILD/tests/test_gpt2_layers" --gtest_filter="*/$p" >"$OUT/tests-$p.log" 2>&1 &
  done
fi
if [[ ${SKIP_E2E:-0} != 1 ]]; then
  python3 tests/e2e/check_gpt2.py --laptime "$LAPTIME" --shapes "${E2E_SHAPES:-3x77}" \
    --attention auto,cudnn,flash,naive >"$OUT/e2e.log" 2>&1 &
fi
wait
for p in fp32 tf32 bf16; do
  [[ -f $OUT/tests-$p.log ]] || continue
  echo "GPU suite $p: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+|^\[  SKIPPED \] [0-9]+' "$OUT/tests-$p.log" | tr '\n' ' ')" | tee -a "$TABLE"
  grep -E '^\[  FAILED  \] .*\.' "$OUT/tests-$p.log" | head -20
  grep -B2 -A8 'Failure' "$OUT/tests-$p.log" | head -60
done
[[ -f $OUT/e2e.log ]] && { sed -n '/^summary:/,$p' "$OUT/e2e.log" | tee -a "$TABLE"; tail -5 "$OUT/e2e.log"; }

# 2. Lap times.
bench() {  # bench LABEL [laptime bench args...]
  local label=$1
  shift
  local out
  out=$("$LAPTIME" bench gpt2 --iters 20 --warmup 5 "$@" 2>&1)
  echo "== $label: $*" >>"$OUT/bench.log"
  echo "$out" >>"$OUT/bench.log"
  local lap var
  lap=$(sed -n 's/^lap time: \([0-9.]*\) ms.*/\1/p' <<<"$out")
  var=$(sed -n 's/^  variant *//p' <<<"$out")
  [[ -z $lap ]] && var=$(tail -1 <<<"$out")
  printf '%-36s %9s ms   %s\n' "$label" "${lap:-FAIL}" "$var" | tee -a "$TABLE"
}
if [[ ${SET:-full} == full ]]; then
  for a in auto cudnn flash naive; do bench "bf16 B8 T1024 $a" -p bf16 --attention $a; done
  LAPTIME_GPT2_GELU=kernel bench "bf16 B8 T1024 auto, GELU kernel" -p bf16
  bench "tf32 B8 T1024 auto" -p tf32
  LAPTIME_GPT2_GELU=kernel bench "tf32 B8 T1024 auto, GELU kernel" -p tf32
  bench "tf32 B8 T1024 cudnn (fp16 core)" -p tf32 --attention cudnn
  bench "fp32 B8 T1024 auto" -p fp32
  LAPTIME_GPT2_GELU=epilogue bench "fp32 B8 T1024 auto, GELU epilogue" -p fp32
  # fp32 storage: auto runs our fp32 flash kernel; naive is the T x T core it replaced.
  for p in fp32 tf32; do for a in flash naive; do bench "$p B8 T1024 $a" -p $p --attention $a; done; done
  for a in auto cudnn flash naive; do bench "bf16 B1 T1024 graph $a" -p bf16 -b 1 --graph --attention $a; done
  bench "bf16 B1 T1024 eager auto" -p bf16 -b 1
fi
# SET=confirm (the second call): the defaults, and what the first call left open.
if [[ ${SET:-full} == confirm ]]; then
  bench "bf16 B8 T1024 auto" -p bf16
  LAPTIME_GPT2_GEMM=timed bench "bf16 B8 T1024 auto, GEMMs timed" -p bf16
  bench "tf32 B8 T1024 naive" -p tf32 --attention naive
  bench "tf32 B8 T1024 cudnn (fp16 core)" -p tf32 --attention cudnn
  LAPTIME_GPT2_GEMM=timed bench "tf32 B8 T1024 cudnn, GEMMs timed" -p tf32 --attention cudnn
  bench "fp32 B8 T1024 auto" -p fp32
  LAPTIME_GPT2_GEMM=timed bench "fp32 B8 T1024 auto, GEMMs timed" -p fp32
  bench "bf16 B1 T1024 graph auto" -p bf16 -b 1 --graph
  LAPTIME_GPT2_GEMM=timed bench "bf16 B1 T1024 graph auto, GEMMs timed" -p bf16 -b 1 --graph
fi

# 3. Where the time goes (per-kernel), from laptime's own CUPTI capture.
if [[ ${TRACE:-0} == 1 ]]; then
  for c in "b8:-p bf16" "b1graph:-p bf16 -b 1 --graph"; do
    name=${c%%:*}
    # shellcheck disable=SC2086
    "$LAPTIME" bench gpt2 ${c#*:} --iters 10 --warmup 3 --trace "/tmp/gpt2-$name.sqlite" >/dev/null 2>&1 &&
      { echo "=== $name: ${c#*:}"; "$LAPTIME" analyze "/tmp/gpt2-$name.sqlite" 2>&1; } >>"$OUT/analyze.txt"
  done
fi
echo
echo "=== table"
cat "$TABLE"
