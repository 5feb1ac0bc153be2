#!/usr/bin/env bash
# The PERF.md table of one device call (issue 29's "Done when"): every headline and small-shape
# row of laptime beside PyTorch eager and torch.compile, one row at a time on an idle card, then
# the per-layer captures analyzed against their roofs. Three parts of device-run.sh in one call,
# each with its own budget, all under $RESULTS (default /tmp/device-run) and packed into $OUT:
#
#   tar xJf .carry/build.tar.xz && scripts/dev/table-run.sh
#
# laps (ROWS below) -> compile (GPT-2 B8, ResNet-50 B256, default mode) -> layers (GPT-2 B8 and
# ResNet-50 B256, bf16 -> fp8, analyzed with --peak and diffed; LAYERS=0 leaves it out). ~8 minutes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
ROWS="laptime_gpt2_bf16_b8::gpt2 -p bf16
laptime_gpt2_fp8_b8::gpt2 -p fp8
laptime_gpt2_bf16_b8_graph::gpt2 -p bf16 --graph
laptime_gpt2_fp8_b8_graph::gpt2 -p fp8 --graph
laptime_gpt2_bf16_b1_graph::gpt2 -p bf16 -b 1 --graph
laptime_gpt2_fp8_b1_graph::gpt2 -p fp8 -b 1 --graph
laptime_resnet50_bf16_b256::resnet50 -p bf16
laptime_resnet50_fp8_b256::resnet50 -p fp8
laptime_resnet50_bf16_b32_graph::resnet50 -p bf16 -b 32 --graph
laptime_resnet50_fp8_b32_graph::resnet50 -p fp8 -b 32 --graph
laptime_resnet50_bf16_b1_graph::resnet50 -p bf16 -b 1 --graph
laptime_resnet50_fp8_b1_graph::resnet50 -p fp8 -b 1 --graph
laptime_resnet50_bf16_b1::resnet50 -p bf16 -b 1
laptime_resnet50_fp8_b1::resnet50 -p fp8 -b 1
torch_gpt2_bf16_b8::gpt2 --precision bf16
torch_gpt2_fp8_b8::gpt2 --precision fp8
torch_gpt2_bf16_b1::gpt2 --precision bf16 -b 1
torch_resnet50_bf16_b256::resnet50 --precision bf16
torch_resnet50_bf16_b32::resnet50 --precision bf16 -b 32
torch_resnet50_bf16_b1::resnet50 --precision bf16 -b 1"
status=0
ROWS=$ROWS BUDGET=${LAPS_BUDGET:-330} bash scripts/dev/device-run.sh laps >/dev/null || status=1
BUDGET=${COMPILE_BUDGET:-220} TORCH_LIMIT=150 bash scripts/dev/device-run.sh compile >/dev/null || status=1
[[ ${LAYERS:-1} == 1 ]] && { BUDGET=${LAYERS_BUDGET:-110} bash scripts/dev/device-run.sh layers >/dev/null || status=1; }
R=${RESULTS:-/tmp/device-run}
python3 bench/compare.py "$R"/laps/json/*.json "$R"/compile/json/*.json >"$R/table.txt" 2>&1
[[ -n ${OUT:-} ]] && cp "$R/table.txt" "$OUT/"
cat "$R/table.txt"
exit "$status"
