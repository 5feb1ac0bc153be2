#!/usr/bin/env bash
# Issue 29's item 2, fp8 ResNet-50 on the e4m3 stream (layers/e4m3_block.h), in one device call:
# its GPU suites (test_e4m3_stream, every CUTLASS kernel, the fp8 layers, the layer costs) beside
# the end-to-end check against PyTorch (bf16 and the three fp8 rows: stream, layers/auto,
# layers/fp8), then ResNet-50 lap rows one at a time on the idle card: bf16, fp8 on the stream and
# fp8 with bf16 activations (LAPTIME_RESNET_FP8=layers) side by side at B256, and the small shapes;
# then (LAYERS=0 leaves it out) fp8's per-layer capture analyzed against each layer's roof.
# COMPILE=1 adds torch.compile's ResNet-50 B256 row; PRECISIONS (default bf16,fp8) the e2e's; NCU=1
# Nsight Compute (--set full) on one iteration's kernels in NCU_RANGES (layer1.0's conv2, conv3 and
# downsample, layer2.1's conv3 by default).
#
#   TESTS="test_e4m3_stream test_cutlass_gemm test_fp8_layers test_layer_costs" BUILD80=0 scripts/dev/pack-carry.sh
#   (device) tar xJf .carry/build.tar.xz && scripts/dev/stream-run.sh
#
# Everything lands under $RESULTS/stream (default /tmp/device-run/stream) and is packed into
# $OUT/stream.tgz, with summary.txt beside it. ROWS replaces the lap rows (device-run.sh laps).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=scripts/dev/device-run.sh
source scripts/dev/device-run.sh --env "$(realpath -m build/lib)"
RESULTS=${RESULTS:-/tmp/device-run}
R=$RESULTS/stream
mkdir -p "$R"
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >"$S"
pack() { [[ -n ${OUT:-} ]] && { tar czf "$OUT/stream.tgz" -C "$RESULTS" . 2>/dev/null; cp "$S" "$OUT/summary.txt"; }; true; }
for t in test_e4m3_stream test_cutlass_gemm test_fp8_layers test_layer_costs; do
  (timeout -k 5 300 build/tests/$t >"$R/$t.log" 2>&1; echo "$t: rc=$? $(grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$R/$t.log" | tr '\n' ' ')" >>"$S") &
done
timeout -k 5 "${E2E_LIMIT:-330}" python3 tests/e2e/check_resnet50.py --laptime build/bench/laptime --precisions "${PRECISIONS:-bf16,fp8}" \
  --batches 32,3 >"$R/e2e_resnet50.log" 2>&1
echo "e2e_resnet50: rc=$?" >>"$S"
grep -A20 '^summary:' "$R/e2e_resnet50.log" >>"$S"
wait
pack
ROWS=${ROWS:-"laptime_resnet50_bf16_b256::resnet50 -p bf16
laptime_resnet50_fp8_b256::resnet50 -p fp8
laptime_resnet50_fp8layers_b256:LAPTIME_RESNET_FP8=layers:resnet50 -p fp8
laptime_resnet50_fp8_b32_graph::resnet50 -p fp8 -b 32 --graph
laptime_resnet50_bf16_b32_graph::resnet50 -p bf16 -b 32 --graph
laptime_resnet50_fp8_b1_graph::resnet50 -p fp8 -b 1 --graph
laptime_resnet50_fp8_b1::resnet50 -p fp8 -b 1"}
ROWS=$ROWS RESULTS=$RESULTS BUDGET=${LAPS_BUDGET:-240} bash scripts/dev/device-run.sh laps >/dev/null
cat "$RESULTS/laps/summary.txt" >>"$S"
if [[ ${COMPILE:-0} == 1 ]]; then  # torch.compile's ResNet-50 B256 row beside them
  SHAPES=resnet50 RESULTS=$RESULTS BUDGET=${COMPILE_BUDGET:-170} TORCH_LIMIT=160 bash scripts/dev/device-run.sh compile >/dev/null
  cat "$RESULTS/compile/summary.txt" >>"$S"
fi
python3 bench/compare.py "$RESULTS"/laps/json/*.json "$RESULTS"/compile/json/*.json >"$R/table.txt" 2>&1
cat "$R/table.txt" >>"$S"
pack
if [[ ${LAYERS:-1} == 1 ]]; then  # fp8's per-layer capture, analyzed against each layer's roof
  TRACES="resnet50_fp8:resnet50 -p fp8" DIFFS="" RESULTS=$RESULTS BUDGET=${LAYERS_BUDGET:-120} \
    bash scripts/dev/device-run.sh layers >/dev/null
  awk '/^Roofline per layer/{f=1} f' "$RESULTS/layers/analyze_resnet50_fp8.log" | head -40 >>"$S"
  pack
fi
if [[ ${NCU:-0} == 1 ]]; then  # Nsight Compute on the stream's memory-bound kernels, one iteration
  NCU_BIN=${NCU_DIR:-/opt/nvidia/nsight-compute/2025.3.1}/ncu
  inc=()
  for r in ${NCU_RANGES:-layer1.0/layer1.0.conv2 layer1.0/layer1.0.conv3 layer1.0/layer1.0.downsample layer2.1/layer2.1.conv3}; do
    inc+=(--nvtx-include "laptime@forward/$r/")
  done
  timeout -k 5 "${NCU_LIMIT:-200}" "$NCU_BIN" --nvtx "${inc[@]}" --set full -f -o "$R/stream_ncu" \
    build/bench/laptime bench resnet50 -p fp8 -w 0 -n 1 >"$R/ncu.log" 2>&1
  echo "ncu: rc=$?" >>"$S"
  "$NCU_BIN" --import "$R/stream_ncu.ncu-rep" --page details >"$R/ncu_details.txt" 2>&1
  grep -E '^  [a-z_].*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Block Limit|Theoretical Occupancy|Compute \(SM\) Throughput|L2 Hit' \
    "$R/ncu_details.txt" | head -80 >>"$S"
  pack
fi
cat "$S"
