#!/usr/bin/env bash
# Call H of results/2026-12-05b-pdl-on (the ninth session): the sm_90 GPU suites that launch
# CUTLASS's GEMMs, at 9a42f81's default (LAPTIME_CUTLASS_PDL on: every CUTLASS GEMM launched as a
# programmatic dependent), which call D checked end to end but not suite by suite; with the lab's
# kernel checks (avgpool v3 production among them). Logs straight to $OUT.
# Packed with PROBES=0 BUILD80=0 TESTS="test_cutlass_gemm test_gpt2_layers test_resnet50_layers
# test_gemm_tuner test_lab_kernels" scripts/dev/pack-carry.sh build.
set -u
unset LAPTIME_CUTLASS_PDL  # the default is what is checked
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; T=$PWD/build/tests; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >>$R/rc.txt 2>&1
for s in test_cutlass_gemm test_gpt2_layers test_resnet50_layers test_gemm_tuner test_lab_kernels; do
  ( timeout 200 "$T/$s" >$R/$s.log 2>&1; echo "$s rc=$? $((SECONDS - t0))s" >>$R/rc.txt ) &
done
wait
grep -H "PASSED\|FAILED\|SKIPPED" $R/test_*.log >>$R/rc.txt
cat $R/rc.txt
