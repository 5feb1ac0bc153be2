#!/usr/bin/env bash
# Call A of results/2026-12-02d-overlap: the overlapped stem (lab v4) and the CUTLASS bf16 ReLU
# GEMMs, checked and timed. Timings first on an idle card (the lab's stem v3 against v4; ResNet-50
# B256 bf16 laps, production against --kernel stem=v3, alternating; fp8 B256), then the suites the
# change touches and ResNet-50's end-to-end check in parallel, then two per-layer captures
# (ResNet-50 B256 bf16, GPT-2 B8 fp8, eager) analyzed, with scripts/dev/memsets.py over each.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; A=/tmp/a
mkdir -p $A/laps $A/caps && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$A/rc.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >$A/gpu.txt 2>&1
git log -1 --format='%H %s' >$A/commit.txt 2>/dev/null
timeout 120 "$L" lab stem --versions v3,v4 --json $A/lab_stem.json >$A/lab_stem.log 2>&1; note "lab stem" $?
for i in 1 2; do
  timeout 90 "$L" bench resnet50 -p bf16 --json $A/laps/bf16_v4_$i.json >$A/laps/bf16_v4_$i.log 2>&1; note "bf16 b256 prod $i" $?
  timeout 90 "$L" bench resnet50 -p bf16 --kernel stem=v3 --json $A/laps/bf16_v3_$i.json >$A/laps/bf16_v3_$i.log 2>&1; note "bf16 b256 stem=v3 $i" $?
done
timeout 120 "$L" bench resnet50 -p fp8 --json $A/laps/fp8.json >$A/laps/fp8.log 2>&1; note "fp8 b256" $?
(timeout 240 "$T/test_cutlass_gemm" >$A/test_cutlass_gemm.log 2>&1; note test_cutlass_gemm $?) &
(timeout 300 "$T/test_resnet50_layers" >$A/test_resnet50_layers.log 2>&1; note test_resnet50_layers $?) &
(timeout 300 "$T/test_lab_kernels" >$A/test_lab_kernels.log 2>&1; note test_lab_kernels $?) &
(timeout 200 "$T/test_e4m3_stream" >$A/test_e4m3_stream.log 2>&1; note test_e4m3_stream $?) &
(timeout 300 python3 tests/e2e/check_resnet50.py --laptime "$L" >$A/e2e_resnet50.log 2>&1; note e2e_resnet50 $?) &
wait
timeout 60 "$L" peak --force --cache $A/caps/peak.json >$A/caps/peak.log 2>&1; note peak $?
for row in "resnet50_bf16:resnet50 -p bf16" "gpt2_fp8:gpt2 -p fp8"; do
  n=${row%%:*}
  timeout 120 "$L" bench ${row#*:} --nvtx layer --warmup 3 --iters 10 --trace $A/caps/$n.sqlite >$A/caps/trace_$n.log 2>&1; note "trace $n" $?
  timeout 60 "$L" analyze $A/caps/$n.sqlite --peak $A/caps/peak.json >$A/caps/analyze_$n.log 2>&1; note "analyze $n" $?
  timeout 60 python3 scripts/dev/memsets.py $A/caps/$n.sqlite >$A/caps/memsets_$n.txt 2>&1; note "memsets $n" $?
done
cp $A/rc.txt "$R/rc.txt"
tar czf "$R/a.tgz" -C $A --exclude='*.sqlite' .
ls -la "$R"
