#!/usr/bin/env bash
# Device-side, one call (issue 19, `laptime kernels`): what the committed Nsight Compute reports
# lack, and the walk-through of docs/PROFILING.md section 13 run as it is written.
#   scripts/dev/ncu-sidecars.sh          (build/ carried; $OUT set by the device tool)
# About 3 minutes on an H200. Everything lands in $OUT/ncu-sidecars.tgz, packed even when a
# step fails or the call is cut short:
#   fixtures/laptime_gpt2.layers.json, laptime_resnet50.layers.json, laptime_resnet50_stem_cudnn.layers.json
#       the layer costs of the shapes tests/fixtures/ncu/capture.sh profiled (`laptime bench ... --json X.json`
#       writes X.layers.json beside it), fixtures/cmp.txt against the two committed ones. The cuDNN stem's is
#       new (it has a maxpool range): commit it under tests/fixtures/ncu/ with copies of the committed ones
#       for the pairs of the same shape if wanted (laptime_resnet50's as laptime_resnet50_stem_fused, --stem
#       fused being bf16's default; laptime_gpt2's as laptime_gpt2_attn_{cudnn,flash,naive}), then run
#       tests/fixtures/ncu/ncu_layers.py to refresh the expected sums.
#   test_ncu.log   test_ncu with the real ncu on PATH: NcuRep.TheRealNcuConvertsTheCommittedReport runs
#                  instead of skipping (`ncu --import --csv --page raw --print-units base`)
#   walk/          `laptime kernels --command gpt2 -b 1 -t 256` run exactly as printed (one forward under
#                  ncu, about 70 s: its own time is in walk/time.txt against the printed estimate), then
#                  `laptime kernels` on the .ncu-rep it wrote (the conversion, the sidecar found beside it,
#                  --svg against `laptime peak`'s ceilings, walk/peak_h200.json: commit it as
#                  tests/fixtures/ncu/peak_h200.json for the walk-through's roofline) and on the stem pair
set -uo pipefail
export LAPTIME_SOURCE_DIR=$PWD
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
NCU_DIR=${NCU_DIR:-/opt/nvidia/nsight-compute/2025.3.1}
L=$PWD/build/bench/laptime
R=/tmp/ncu-sidecars
rm -rf "$R" && mkdir -p "$R/fixtures" "$R/walk"
pack() { [[ -n ${OUT:-} ]] && tar czf "$OUT/ncu-sidecars.tgz" -C "$R" . ; true; }
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/card.txt"

# 1. The sidecars, at the shapes and variants of the committed reports.
cd "$R/fixtures"
timeout -k 5 120 "$L" bench gpt2 -b 1 -t 256 -w 0 -n 1 --json laptime_gpt2.json >gpt2.log 2>&1 || echo "gpt2 sidecar: rc=$?"
timeout -k 5 120 "$L" bench resnet50 -b 8 -w 0 -n 1 --json laptime_resnet50.json >resnet50.log 2>&1 || echo "resnet50 sidecar: rc=$?"
timeout -k 5 120 "$L" bench resnet50 -b 8 -w 0 -n 1 --stem cudnn --json laptime_resnet50_stem_cudnn.json \
  >resnet50_stem_cudnn.log 2>&1 || echo "resnet50 cudnn-stem sidecar: rc=$?"
for f in laptime_gpt2 laptime_resnet50; do
  cmp "$f.layers.json" "$LAPTIME_SOURCE_DIR/tests/fixtures/ncu/$f.layers.json" >>cmp.txt 2>&1 && echo "$f: same" >>cmp.txt
done
ls -la "$R/fixtures"; cat cmp.txt
cd - >/dev/null

# 2. The conversion test with the real ncu.
PATH=$NCU_DIR:$PATH timeout -k 5 60 build/tests/test_ncu >"$R/test_ncu.log" 2>&1
echo "test_ncu rc=$?"; tail -3 "$R/test_ncu.log"

# 3. The walk-through: the printed command, run as printed, then read.
cd "$R/walk"
export PATH=$NCU_DIR:$(dirname "$L"):$PATH
laptime kernels --command gpt2 -b 1 -t 256 --binary "$L" | tee command.txt
cmd=$(grep -m1 '^  ncu ' command.txt | sed 's/^  //')
start=$SECONDS
timeout -k 5 300 bash -c "$cmd" >ncu.log 2>&1
echo "rc=$? $((SECONDS - start)) s" | tee time.txt
timeout -k 5 120 laptime peak --cache peak_h200.json >peak.txt 2>&1 || echo "peak: rc=$?"
laptime kernels gpt2_b1_t256.ncu-rep --peak peak_h200.json --json gpt2.json --svg gpt2.svg >gpt2.txt 2>&1
echo "kernels rc=$?"; head -12 gpt2.txt
fx=$LAPTIME_SOURCE_DIR/tests/fixtures/ncu
laptime kernels "$fx/laptime_resnet50_stem_cudnn.csv" "$fx/laptime_resnet50_stem_fused.csv" >stem_ab.txt 2>&1
echo "stem A/B rc=$?"
