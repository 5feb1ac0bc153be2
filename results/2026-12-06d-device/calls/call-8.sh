#!/usr/bin/env bash
# Call 8 (2026-12-06d), on an H200 only (another card: nothing run, exit 3): the energy rows the
# last H200 table could not reach: PyTorch eager ResNet-50 B32 and B1, torch.compile's GPT-2 B8
# and ResNet-50 B256 (compiled here, no cache carried), each with ~1.5 s of steady laps.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-8.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
grep -q H200 "$L" || { echo "== not an H200: nothing run" >>"$L"; exit 3; }
tar xJf .carry/build.tar.xz || exit 2
ROWS="torch_resnet50_bf16_b32_energy::resnet50 --precision bf16 -b 32 --iters 230
torch_resnet50_bf16_b1_energy::resnet50 --precision bf16 -b 1 --iters 250" BUDGET=300 RESULTS=/tmp/dc \
  timeout -k 5 $((310 - SECONDS)) scripts/dev/device-call.sh energy >/dev/null 2>&1
echo "== energy rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dc/energy/summary.txt "$OUT/energy-summary.txt" 2>/dev/null
tar cJf "$OUT/energy-json.tar.xz" -C /tmp/dc/energy json 2>/dev/null
