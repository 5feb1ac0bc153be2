#!/usr/bin/env bash
# The session's closing GPU run, in parts that fit the device's 10-minute calls:
#
#   scripts/dev/h200-final.sh check     GPU suites (the sm_80 build's too, when build80/ has
#                                       them) + end-to-end checks + Ctrl-C check (+ the
#                                       sanitizer sweep with SANITIZE=1), in parallel:
#                                       correctness only; then, serial: laptime's lap table,
#                                       PyTorch eager for every row, torch.compile (default)
#                                       for the headline rows
#   scripts/dev/h200-final.sh autotune  torch.compile(mode="max-autotune-no-cudagraphs") for
#                                       the headline rows (minutes of tuning each)
#   scripts/dev/h200-final.sh resnet-autotune
#                                       ResNet-50's max-autotune row with a call to itself (its
#                                       compile outlasted 200 s), then laptime, eager and
#                                       compile-default rows beside it
#   scripts/dev/h200-final.sh traces    the lesson's captures: pitfalls (issue 8), roofline
#                                       check and diff captures (issue 9)
#   scripts/dev/h200-final.sh probe     development: lap rows and per-layer captures given in
#                                       PROBE_ROWS / PROBE_TRACES, checks in PROBE_PAR, a
#                                       sanitizer subset in SANITIZE_ONLY
#
# Everything lands in $RESULTS (default /tmp/final), packed into $OUT/final-PART.tgz after
# every step, so a call cut short still returns what was done. Each step has its own time
# limit, and steps are skipped once the part's budget (BUDGET seconds) is spent.
# Expects a build in build/ and, for nsys, the .deb files in .nsys-deps/.
set -uo pipefail
part=${1:?usage: h200-final.sh check|autotune|resnet-autotune|traces|probe}
BUDGET=${BUDGET:-540}
R=${RESULTS:-/tmp/final}/$part
mkdir -p "$R/json"
L=build/bench/laptime
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
if [[ -d .nsys-deps ]]; then
  for f in .nsys-deps/*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
export NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
SUMMARY=$R/summary.txt

pack() { [[ -n ${OUT:-} ]] && tar czf "$OUT/final-$part.tgz" -C "$R" . 2>/dev/null; cp "$SUMMARY" "$OUT/summary-$part.txt" 2>/dev/null; true; }
left() { echo $((BUDGET - SECONDS)); }
# step NAME LIMIT COMMAND...: runs COMMAND (log in $R/NAME.log) unless the budget is spent.
step() {
  local name=$1 limit=$2 rc=0 t0=$SECONDS
  shift 2
  if (($(left) < 20)); then echo "$name: SKIPPED (budget spent)" | tee -a "$SUMMARY"; return; fi
  ((limit > $(left))) && limit=$(left)
  timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1 || rc=$?
  echo "$name: rc=$rc $((SECONDS - t0))s" | tee -a "$SUMMARY"
  pack
}
# par NAME COMMAND...: COMMAND in the background (log in $R/NAME.log, its status in par.txt);
# correctness runs only: they share the GPU.
par() { local name=$1; shift; (timeout -k 5 300 "$@" >"$R/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/par.txt") & }
gtest_line() { grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$@" | tr '\n' ' '; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python3 -c 'import torch, transformers, torchvision; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(), "transformers", transformers.__version__, "torchvision", torchvision.__version__)'
  git log -1 --oneline 2>/dev/null; date -u; } >"$SUMMARY" 2>&1

bench_row() {  # bench_row NAME MODEL ARGS...: one lap-table row as laptime JSON
  local name=$1; shift
  step "bench_$name" 120 "$L" bench "$@" --nvtx iter --warmup 5 --iters 20 --json "$R/json/laptime_$name.json"
  grep -E "^  (lap|median|variant)|steady" "$R/bench_$name.log" | head -3 | sed "s/^/    /" >>"$SUMMARY"
}
torch_row() {  # torch_row NAME ARGS...: the same row in PyTorch
  local name=$1; shift
  step "torch_$name" "${TORCH_LIMIT:-200}" python3 bench/torch_baseline.py "$@" --nvtx iter --warmup 5 --iters 20 --json "$R/json/torch_$name.json"
}

case $part in
check)
  # 1. Correctness, in parallel (the GPU is shared; none of these times anything).
  for p in fp32 tf32 bf16; do
    par gpt2_layers_$p build/tests/test_gpt2_layers --gtest_filter="*/$p"
    par resnet50_layers_$p build/tests/test_resnet50_layers --gtest_filter="*/$p"
  done
  # the tests that are not per precision
  par gpt2_layers_rest build/tests/test_gpt2_layers --gtest_filter='-*/fp32:*/tf32:*/bf16'
  par resnet50_layers_rest build/tests/test_resnet50_layers --gtest_filter='-*/fp32:*/tf32:*/bf16'
  par layer_costs build/tests/test_layer_costs
  par gpt2_reference build/tests/test_gpt2_reference
  par resnet50_reference build/tests/test_resnet50_reference
  # the sm_80 build (its PTX, JIT-compiled here): the path an A100 takes
  if [[ -x build80/tests/test_gpt2_layers ]]; then
    par sm80_gpt2_layers build80/tests/test_gpt2_layers
    par sm80_resnet50_layers build80/tests/test_resnet50_layers
  fi
  par e2e_gpt2 python3 tests/e2e/check_gpt2.py --laptime "$L"
  par e2e_resnet50 python3 tests/e2e/check_resnet50.py --laptime "$L"
  par interrupt bash scripts/dev/interrupt-check.sh build
  [[ -n ${SANITIZE:-} ]] && par sanitize bash scripts/sanitize.sh --build-dir build --out "$R/sanitize" --jobs 6
  wait
  cat "$R/par.txt" >>"$SUMMARY"
  for f in "$R"/gpt2_*.log "$R"/resnet50_*.log "$R"/sm80_*.log "$R"/layer_costs.log; do
    [[ -f $f ]] && echo "  ${f##*/}: $(gtest_line "$f")" >>"$SUMMARY"
  done
  grep -hE "^\[  FAILED  \] [A-Za-z]" "$R"/*.log | sort -u | head -20 >>"$SUMMARY"
  for f in "$R"/e2e_*.log; do { echo "  ${f##*/}:"; sed -n '/^summary:/,$p' "$f" | tail -24; } >>"$SUMMARY"; done
  tail -5 "$R/interrupt.log" >>"$SUMMARY"
  [[ -f $R/sanitize/summary.txt ]] && tail -70 "$R/sanitize/summary.txt" >>"$SUMMARY"
  echo "phase 1 done at ${SECONDS}s" >>"$SUMMARY"
  pack
  # 2. laptime's lap table (serial, alone on the GPU).
  bench_row gpt2_bf16_b8 gpt2 --precision bf16
  bench_row gpt2_bf16_b8_graph gpt2 --precision bf16 --graph
  LAPTIME_GPT2_GEMM=timed bench_row gpt2_bf16_b8_timed gpt2 --precision bf16
  bench_row gpt2_tf32_b8 gpt2 --precision tf32
  LAPTIME_GPT2_GEMM=timed bench_row gpt2_tf32_b8_timed gpt2 --precision tf32
  bench_row gpt2_fp32_b8 gpt2 --precision fp32
  bench_row gpt2_bf16_b1_graph gpt2 --precision bf16 --batch 1 --graph
  bench_row resnet50_bf16_b256 resnet50 --precision bf16
  bench_row resnet50_bf16_b256_graph resnet50 --precision bf16 --graph
  bench_row resnet50_bf16_b256_cudnnstem resnet50 --precision bf16 --stem cudnn
  bench_row resnet50_tf32_b256 resnet50 --precision tf32
  bench_row resnet50_fp32_b256 resnet50 --precision fp32
  bench_row resnet50_bf16_b32_graph resnet50 --precision bf16 --batch 32 --graph
  bench_row resnet50_bf16_b1_graph resnet50 --precision bf16 --batch 1 --graph
  # 3. PyTorch: eager for every row, torch.compile (default mode) for the headline rows.
  torch_row gpt2_bf16_b8 gpt2 --precision bf16
  torch_row gpt2_tf32_b8 gpt2 --precision tf32
  torch_row gpt2_fp32_b8 gpt2 --precision fp32
  torch_row gpt2_bf16_b1 gpt2 --precision bf16 --batch 1
  torch_row resnet50_bf16_b256 resnet50 --precision bf16
  torch_row resnet50_tf32_b256 resnet50 --precision tf32
  torch_row resnet50_fp32_b256 resnet50 --precision fp32
  torch_row resnet50_bf16_b32 resnet50 --precision bf16 --batch 32
  torch_row resnet50_bf16_b1 resnet50 --precision bf16 --batch 1
  torch_row gpt2_bf16_b8_compile gpt2 --precision bf16 --compile
  torch_row resnet50_bf16_b256_compile resnet50 --precision bf16 --compile
  ;;
autotune)
  torch_row resnet50_bf16_b256_compile resnet50 --precision bf16 --compile  # cut from check by its budget on 2026-11-30
  # torch.compile(mode="max-autotune-no-cudagraphs"): minutes of template tuning per model.
  export TORCH_LIMIT=${TORCH_LIMIT:-300}
  torch_row gpt2_bf16_b8_maxautotune gpt2 --precision bf16 --compile --compile-mode max-autotune-no-cudagraphs
  torch_row resnet50_bf16_b256_maxautotune resnet50 --precision bf16 --compile --compile-mode max-autotune-no-cudagraphs
  ;;
resnet-autotune)
  # ResNet-50's max-autotune row alone needs more than the 200 s `autotune` could give it on
  # 2026-11-30: this part runs it first with the call to itself, then the rows it is read
  # against (laptime, eager, compile default), so the four sit side by side in one call.
  # Inductor's cache (the autotuning results per shape among it) goes to .inductor-cache/, and
  # back under $OUT when the row did not finish: carried into a later call, it spares the shapes
  # already tuned.
  export TORCHINDUCTOR_CACHE_DIR=$PWD/.inductor-cache
  TORCH_LIMIT=${TORCH_LIMIT:-450} torch_row resnet50_bf16_b256_maxautotune resnet50 --precision bf16 --compile \
    --compile-mode max-autotune-no-cudagraphs
  [[ -s $R/json/torch_resnet50_bf16_b256_maxautotune.json || -z ${OUT:-} ]] || tar czf "$OUT/inductor-cache.tgz" .inductor-cache
  bench_row resnet50_bf16_b256 resnet50 --precision bf16
  torch_row resnet50_bf16_b256 resnet50 --precision bf16
  torch_row resnet50_bf16_b256_compile resnet50 --precision bf16 --compile
  ;;
probe)
  # PROBE_SKIP_CHECKS=1: straight to the lap rows and captures.
  if [[ -z ${PROBE_SKIP_CHECKS:-} ]]; then
  par sanitize env CUDA_BARRIERS=256 bash scripts/sanitize.sh --build-dir build --out "$R/sanitize" --jobs 6 \
    --only "${SANITIZE_ONLY:-synccheck resnet50 bf16|gpt2flash}"
  # Correctness runs beside the sweep, one a line: NAME:COMMAND.
  checks=${PROBE_PAR:-"layer_costs:build/tests/test_layer_costs
e2e_gpt2:python3 tests/e2e/check_gpt2.py --laptime $L --attention auto,cudnn"}
  while IFS= read -r c <&3; do
    # shellcheck disable=SC2086
    [[ -n $c ]] && par "${c%%:*}" ${c#*:}
  done 3<<<"$checks"
  wait
  cat "$R/par.txt" >>"$SUMMARY"
  while IFS= read -r c <&3; do
    [[ -z $c ]] && continue
    f=$R/${c%%:*}.log
    if grep -q '^\[==========\]' "$f"; then
      { echo "  ${c%%:*}: $(gtest_line "$f")"; grep -hE "^\[  FAILED  \] [A-Za-z]" "$f" | head -20; } >>"$SUMMARY"
    else
      { echo "  ${c%%:*}:"; grep -iE "rel|pass|fail|summary|error" "$f" | tail -24; } >>"$SUMMARY"
    fi
  done 3<<<"$checks"
  [[ -f $R/sanitize/summary.txt ]] && tail -30 "$R/sanitize/summary.txt" >>"$SUMMARY"
  pack
  fi
  step peak 60 "$L" peak
  # Lap rows, one a line: NAME:ENV=VALUE,...:laptime bench arguments (ENV may be empty).
  rows=${PROBE_ROWS:-"gpt2_bf16_b8::gpt2 -p bf16
gpt2_bf16_b8_timed:LAPTIME_GPT2_GEMM=timed:gpt2 -p bf16"}
  while IFS= read -r r <&3; do
    [[ -z $r ]] && continue
    name=${r%%:*} rest=${r#*:}
    envs=${rest%%:*} args=${rest#*:}
    # shellcheck disable=SC2086
    step "bench_$name" 120 env ${envs//,/ } "$L" bench $args --nvtx iter --warmup 5 --iters 20 --json "$R/json/laptime_$name.json"
    grep -E "^  (lap|median|variant)|steady" "$R/bench_$name.log" | head -3 | sed "s/^/    /" >>"$SUMMARY"
  done 3<<<"$rows"
  # Per-layer captures, one a line: NAME:laptime bench arguments (CUPTI, the bench's layer
  # sidecar: analyze adds the roofline table).
  traces=${PROBE_TRACES:-"gpt2_fp32_b8:gpt2 -p fp32"}
  while IFS= read -r c <&3; do
    [[ -z $c ]] && continue
    # shellcheck disable=SC2086
    step "trace_${c%%:*}" 120 "$L" bench ${c#*:} --nvtx layer --warmup 3 --iters 10 --trace "$R/${c%%:*}.sqlite"
    step "analyze_${c%%:*}" 60 "$L" analyze "$R/${c%%:*}.sqlite"
    rm -f "$R/${c%%:*}.sqlite"
  done 3<<<"$traces"
  ;;
traces)
  step pitfalls 150 bash scripts/dev/capture-pitfalls.sh "$R/pitfalls" --nsys "$NSYS"
  step roofline 120 bash scripts/dev/roofline-check.sh --out "$R/roofline" --laptime "$L" --tests build/tests/test_layer_costs
  step diff 300 bash scripts/dev/diff-captures.sh --out "$R/diff" --iters 20
  ;;
esac
python3 bench/compare.py "$R"/json/*.json >"$R/compare.txt" 2>&1 && cat "$R/compare.txt" >>"$SUMMARY"
echo "done at ${SECONDS}s" >>"$SUMMARY"
pack
cat "$SUMMARY"
