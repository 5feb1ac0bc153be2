#!/usr/bin/env bash
# Call C of results/2026-12-02e-layernorm: Nsight Compute on the LayerNorm ladder's v3-v5 (one
# call each at GPT-2's shape, the command `laptime kernels --command lab layernorm` prints) read
# by `laptime kernels`; per-layer captures of GPT-2 B8 bf16 and fp8 (eager) analyzed against the
# roofs `laptime peak` measures; the GEMM tuner's suite. Packed with PROBES=0 BUILD80=0
# TESTS="test_gemm_tuner" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu; C=/tmp/c
mkdir -p $C/ncu $C/caps && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$C/rc.txt; }
timeout 60 "$L" peak --force --cache $C/caps/peak.json >$C/caps/peak.log 2>&1; note peak $?
for row in gpt2_bf16:"gpt2 -p bf16" gpt2_fp8:"gpt2 -p fp8"; do
  n=${row%%:*}
  timeout 120 "$L" bench ${row#*:} --nvtx layer --warmup 3 --iters 10 --trace $C/caps/$n.sqlite >$C/caps/trace_$n.log 2>&1
  note "trace $n" $?
  timeout 60 "$L" analyze $C/caps/$n.sqlite --peak $C/caps/peak.json >$C/caps/analyze_$n.log 2>&1; note "analyze $n" $?
done
cd $C/ncu && timeout 240 "$NCU" --nvtx --nvtx-include 'laptime@lab/layernorm/' --section SpeedOfLight \
  --section SpeedOfLight_RooflineChart --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
  --section Occupancy --section LaunchStats --section WarpStateStats -f -o lab_layernorm \
  "$L" lab layernorm --once --versions v3,v4,v5 --json lab_layernorm.json >ncu_run.log 2>&1; note "ncu layernorm" $?
timeout 60 "$L" kernels lab_layernorm.ncu-rep >kernels_lab_layernorm.log 2>&1; note "kernels layernorm" $?
cd - >/dev/null
timeout 150 "$T/test_gemm_tuner" >$C/test_gemm_tuner.log 2>&1; note test_gemm_tuner $?
rm -f $C/caps/*.sqlite
cp $C/rc.txt "$R/"; tar czf "$R/c.tgz" -C $C .
ls -la "$R"
