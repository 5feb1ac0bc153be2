#!/usr/bin/env bash
# Call A of results/2026-12-02c-stem: the wgmma stem checked and timed, then the GPU suites and
# both end-to-end checks on the code as it stands, then the B256 bf16 lap with each stem core.
# Run on the device from the repository root, the build carried (scripts/dev/pack-carry.sh).
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt" 2>&1
t0=$SECONDS
# 1. The lab's stem ladder alone on the idle card: each version checked and timed at the models' shapes.
timeout 150 "$L" lab stem --json "$R/lab_stem.json" >"$R/lab_stem.log" 2>&1; echo "lab stem rc=$? $((SECONDS - t0))s" >>"$R/rc.txt"
# 2. The suites, in parallel (correctness only).
for t in test_resnet50_layers test_lab_kernels test_e4m3_stream test_gpt2_layers test_fp8_layers test_cutlass_gemm; do
  (timeout 280 "$T/$t" >"$R/$t.log" 2>&1; echo "$t rc=$? $((SECONDS - t0))s" >>"$R/rc.txt") &
done
wait
# 3. Both end-to-end checks, every precision.
(timeout 200 python3 tests/e2e/check_resnet50.py --laptime "$L" >"$R/e2e_resnet50.log" 2>&1; echo "e2e_resnet50 rc=$? $((SECONDS - t0))s" >>"$R/rc.txt") &
(timeout 200 python3 tests/e2e/check_gpt2.py --laptime "$L" >"$R/e2e_gpt2.log" 2>&1; echo "e2e_gpt2 rc=$? $((SECONDS - t0))s" >>"$R/rc.txt") &
wait
# 4. ResNet-50 bf16 B256, production (wgmma) and --kernel stem=v2 (mma.sync), alternating.
for i in 1 2; do
  "$L" bench resnet50 -b 256 -p bf16 -n 30 --json "$R/ab_v3_$i.json" >"$R/ab_v3_$i.log" 2>&1
  "$L" bench resnet50 -b 256 -p bf16 -n 30 --kernel stem=v2 --json "$R/ab_v2_$i.json" >"$R/ab_v2_$i.log" 2>&1
done
echo "done $((SECONDS - t0))s" >>"$R/rc.txt"
cd "$R" && tar czf logs.tgz --remove-files ./*.log ./*.json 2>/dev/null; ls "$R"
