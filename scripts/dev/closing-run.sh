#!/usr/bin/env bash
# The session's closing GPU run (2026-12-01), in two calls on one warm machine:
#
#   scripts/dev/closing-run.sh a   correctness and captures (~7 min):
#                                  1. a smoke row through the dlopen'ed GPU module;
#                                  2. in parallel (nothing here is a timing): every GPU suite of the
#                                     sm_90 build and the sm_80 build's, the end-to-end checks in
#                                     fp32/tf32/bf16, the Ctrl-C check, host-build-check.sh (nsys
#                                     over the split binary, the real .nsys-rep export),
#                                     test_ncu with the real ncu and the walk-through's printed ncu
#                                     command, the ncu fixtures' sidecars, harden-io-check.sh;
#                                  3. then graph-check.sh (laptime's CUPTI capture of a --graph run)
#                                     beside extra-captures.sh (pitfall sync, two processes in one
#                                     capture: issue 20's fixtures);
#   scripts/dev/closing-run.sh b   fp8's full probe alone on the GPU (its lap table is a timing).
#   scripts/dev/closing-run.sh c   issue 22's speed rows side by side with torch.compile, and the real
#                                  ncu / nsys tests the first part a could not pass (~5 min);
#   scripts/dev/closing-run.sh d   the real-nsys test again and overlap-captures.sh (two processes at once);
#   scripts/dev/closing-run.sh f   the rest of issue 22's table (GPT-2 B1, ResNet-50 B32 and B1) with
#                                  PyTorch eager, torch.compile and _scaled_mm beside it;
#   scripts/dev/closing-run.sh e   analyzer-bench.sh (laptime analyze against nsys stats at 10^6 and
#                                  5*10^6 kernels, on the device's CPU), after the analyzer's speed work.
#
# Needs build/ (stripped binaries: bench/laptime, bench/liblaptime_gpu.so, bench/laptime_fp8_shapes,
# tests/test_*) and build80/ (sm_80: bench/laptime + its module, tests/test_{gpt2,resnet50,fp8}_layers),
# unpacked from .carry/build.tar.xz, and .nsys-deps/. Each part packs $OUT/closing-PART.tgz and
# copies its summary to $OUT/closing-PART.txt after every step.
set -uo pipefail
part=${1:?usage: closing-run.sh a|b|c|d|e|f}
R=/tmp/closing/$part
mkdir -p "$R"
L=build/bench/laptime
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
if [[ -d .nsys-deps ]]; then
  for f in .nsys-deps/*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
NSYS_DIR=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
NCU_DIR=/opt/nvidia/nsight-compute/2025.3.1
S=$R/summary.txt
pack() { [[ -n ${OUT:-} ]] && { tar czf "$OUT/closing-$part.tgz" -C "$R" . 2>/dev/null; cp "$S" "$OUT/closing-$part.txt"; }; true; }
par() { local name=$1 limit=$2; shift 2; (timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/par.txt") & }
gtest_line() { grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$@" | tr '\n' ' '; }
# row NAME LIMIT COMMAND...: one timed row alone, its rc, seconds and printed lap in the summary.
row() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1
  echo "$name: rc=$? $((SECONDS - t0))s $(grep -m1 'lap time' "$R/$name.log")" >>"$S"
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())'
  nproc; date -u; } >"$S" 2>&1

case $part in
a)
  timeout 60 "$L" bench gpt2 -b 1 -t 128 -w 1 -n 5 >"$R/smoke.log" 2>&1
  echo "smoke (bench through the module): rc=$? $(grep -m1 '^lap time' "$R/smoke.log")" >>"$S"
  pack
  T=build/tests
  for p in fp32 tf32 bf16; do
    par gpt2_layers_$p 300 $T/test_gpt2_layers --gtest_filter="*/$p"
    par resnet50_layers_$p 300 $T/test_resnet50_layers --gtest_filter="*/$p"
  done
  par gpt2_layers_rest 300 $T/test_gpt2_layers --gtest_filter='-*/fp32:*/tf32:*/bf16'
  par resnet50_layers_rest 300 $T/test_resnet50_layers --gtest_filter='-*/fp32:*/tf32:*/bf16'
  for t in test_gpt2_reference test_resnet50_reference test_layer_costs test_bench_report test_fp8_layers \
           test_fp8_reference; do
    par "${t#test_}" 300 $T/$t
  done
  par sm80_gpt2_layers 300 build80/tests/test_gpt2_layers
  par sm80_resnet50_layers 300 build80/tests/test_resnet50_layers
  par sm80_fp8_layers 300 build80/tests/test_fp8_layers
  par sm80_fp8_refusal 60 build80/bench/laptime bench gpt2 -b 1 -t 64 -n 2 -p fp8
  par e2e_gpt2 300 python3 tests/e2e/check_gpt2.py --laptime "$L"
  par e2e_resnet50 300 python3 tests/e2e/check_resnet50.py --laptime "$L"
  par interrupt 120 bash scripts/dev/interrupt-check.sh build
  par host_build_check 240 env PATH="$NSYS_DIR:$PATH" bash scripts/dev/host-build-check.sh build
  par ncu 300 bash scripts/dev/ncu-sidecars.sh
  par harden_io 120 bash scripts/dev/harden-io-check.sh build
  # The committed report's import in base units (test_ncu's real-ncu case compares against it).
  par ncu_import 60 bash -c "$NCU_DIR/ncu --import tests/fixtures/ncu/domains.ncu-rep --csv --page raw --print-units base >$R/domains_base.csv"
  wait
  sort "$R/par.txt" >>"$S"
  for f in "$R"/*layers*.log "$R"/*reference.log "$R"/layer_costs.log "$R"/bench_report.log; do
    [[ -f $f ]] && echo "  ${f##*/}: $(gtest_line "$f")" >>"$S"
  done
  grep -hE "^\[  FAILED  \] [A-Za-z]" "$R"/*.log | sort -u | head -20 >>"$S"
  for f in "$R"/e2e_*.log; do { echo "  ${f##*/}:"; sed -n '/^summary:/,$p' "$f" | tail -16; } >>"$S"; done
  { tail -3 "$R/interrupt.log"; tail -8 "$R/host_build_check.log"; tail -8 "$R/harden_io.log"; tail -12 "$R/ncu.log"; tail -3 "$R/sm80_fp8_refusal.log"; } >>"$S"
  echo "phase 1 done at ${SECONDS}s" >>"$S"
  pack
  # Captures beside the analyzer's benchmark (graph-check's figures are checked against its own file,
  # not timed against anything; the benchmark is CPU-only).
  par graph_check 240 env PATH="$NSYS_DIR:$PATH" OUT="$R/graph" bash scripts/dev/graph-check.sh build
  par extra_captures 240 env PATH="$NSYS_DIR:$PATH" OUT="$R" bash scripts/dev/extra-captures.sh build
  wait
  { sort "$R/par.txt" | tail -2; tail -25 "$R/graph_check.log"; cat "$R/extra/captures.txt"; } >>"$S"
  for n in sync_gpt2 two_gpt2 gpt2_resnet50; do head -30 "$R/extra/$n.analyze.txt" >>"$S"; done
  echo "done at ${SECONDS}s" >>"$S"
  pack
  ;;
b)
  # fp8-probe.sh packs its own $OUT/fp8-probe.tgz and $OUT/summary-fp8.txt.
  bash scripts/dev/fp8-probe.sh full >"$R/fp8.log" 2>&1
  echo "fp8 full: rc=$?" >>"$S"
  tail -80 "$R/fp8.log" >>"$S"
  pack
  ;;
c)
  # Issue 22's speed table side by side, torch.compile included (the probe had no time for it):
  # one row at a time on an otherwise idle machine; then the two device tests the first run of
  # part a could not pass (the real ncu's conversion, the real nsys export).
  mkdir -p "$R/json"
  loop="--nvtx iter --warmup 5 --iters 20"
  for p in bf16 fp8; do
    row laptime_gpt2_${p}_b8 60 "$L" bench gpt2 -p $p $loop --json "$R/json/laptime_gpt2_${p}_b8.json"
    row laptime_resnet50_${p}_b256 60 "$L" bench resnet50 -p $p $loop --json "$R/json/laptime_resnet50_${p}_b256.json"
  done
  row torch_gpt2_bf16_b8 90 python3 bench/torch_baseline.py gpt2 --precision bf16 $loop --json "$R/json/torch_gpt2_bf16_b8.json"
  row torch_resnet50_bf16_b256 90 python3 bench/torch_baseline.py resnet50 --precision bf16 $loop --json "$R/json/torch_resnet50_bf16_b256.json"
  row compile_gpt2_bf16_b8 200 python3 bench/torch_baseline.py gpt2 --precision bf16 --compile --warmup 5 --iters 20 \
    --json "$R/json/compile_gpt2_bf16_b8.json"
  pack
  row compile_resnet50_bf16_b256 200 python3 bench/torch_baseline.py resnet50 --precision bf16 --compile --warmup 5 \
    --iters 20 --json "$R/json/compile_resnet50_bf16_b256.json"
  pack
  row test_ncu_real 120 env PATH="$NCU_DIR:$PATH" build/tests/test_ncu --gtest_filter='NcuRep.*'
  row test_nsys_real 120 env PATH="$NSYS_DIR:$PATH" build/tests/test_host_cli --gtest_filter='NsysReport.Real*'
  for t in test_ncu_real test_nsys_real; do echo "  $t: $(gtest_line "$R/$t.log")" >>"$S"; done
  python3 - "$R/json" >>"$S" 2>&1 <<'PY'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    if f.name.endswith(".layers.json"): continue
    j = json.loads(f.read_text()); s = {k: j["steady_ms"].get(k) for k in ("median", "min", "mean")}
    print(f"  {f.stem:32s}", json.dumps(s)[:160])
PY
  echo "done at ${SECONDS}s" >>"$S"
  pack
  ;;
d)
  # The real-nsys export test with the carried binary named (its compiled-in path is the host's).
  env PATH="$NSYS_DIR:$PATH" LAPTIME_BINARY=$PWD/$L build/tests/test_host_cli --gtest_filter='NsysReport.Real*' >"$R/test_nsys_real.log" 2>&1
  echo "test_nsys_real: rc=$? $(gtest_line "$R/test_nsys_real.log")" >>"$S"
  # Two processes looping at the same time on the GPU (issue 20 item 4), before the CPU-heavy benchmark.
  env PATH="$NSYS_DIR:$PATH" OUT="$R" bash scripts/dev/overlap-captures.sh build >"$R/overlap.log" 2>&1
  echo "overlap captures: rc=$?" >>"$S"
  [[ -f $R/overlap.txt ]] && tail -30 "$R/overlap.txt" >>"$S"
  pack
  ;;
f)
  # The rest of issue 22's table side by side: GPT-2 B1, ResNet-50 B32 and B1 (eager and --graph),
  # with PyTorch eager, torch.compile and _scaled_mm at the same shapes; one row at a time.
  mkdir -p "$R/json"
  loop="--nvtx iter --warmup 5 --iters 20"
  for p in bf16 fp8; do
    row laptime_gpt2_${p}_b1 60 "$L" bench gpt2 -p $p -b 1 $loop --json "$R/json/laptime_gpt2_${p}_b1.json"
    row laptime_gpt2_${p}_b1_graph 60 "$L" bench gpt2 -p $p -b 1 --graph $loop --json "$R/json/laptime_gpt2_${p}_b1_graph.json"
    for b in 32 1; do
      row laptime_resnet50_${p}_b$b 60 "$L" bench resnet50 -p $p -b $b $loop --json "$R/json/laptime_resnet50_${p}_b$b.json"
      row laptime_resnet50_${p}_b${b}_graph 60 "$L" bench resnet50 -p $p -b $b --graph $loop \
        --json "$R/json/laptime_resnet50_${p}_b${b}_graph.json"
    done
  done
  pack
  row torch_gpt2_bf16_b1 90 python3 bench/torch_baseline.py gpt2 --precision bf16 -b 1 $loop --json "$R/json/torch_gpt2_bf16_b1.json"
  row torch_gpt2_fp8_b1 90 python3 bench/torch_baseline.py gpt2 --precision fp8 -b 1 $loop --json "$R/json/torch_gpt2_fp8_b1.json"
  row torch_gpt2_fp8_b8 90 python3 bench/torch_baseline.py gpt2 --precision fp8 $loop --json "$R/json/torch_gpt2_fp8_b8.json"
  for b in 32 1; do
    row torch_resnet50_bf16_b$b 90 python3 bench/torch_baseline.py resnet50 --precision bf16 -b $b $loop \
      --json "$R/json/torch_resnet50_bf16_b$b.json"
  done
  pack
  row compile_gpt2_bf16_b1 150 python3 bench/torch_baseline.py gpt2 --precision bf16 -b 1 --compile --warmup 5 --iters 20 \
    --json "$R/json/compile_gpt2_bf16_b1.json"
  pack
  for b in 32 1; do
    row compile_resnet50_bf16_b$b 150 python3 bench/torch_baseline.py resnet50 --precision bf16 -b $b --compile --warmup 5 \
      --iters 20 --json "$R/json/compile_resnet50_bf16_b$b.json"
    pack
  done
  echo "done at ${SECONDS}s" >>"$S"
  pack
  ;;
e)
  # The analyzer against nsys stats, on the device's CPU, after the analyzer's last speed work.
  env PATH="$NSYS_DIR:$PATH" OUT="$R/analyzer" bash scripts/dev/analyzer-bench.sh >"$R/analyzer_bench.log" 2>&1
  echo "analyzer bench: rc=$?" >>"$S"
  tail -40 "$R/analyzer_bench.log" >>"$S"
  pack
  ;;
esac
cat "$S"
