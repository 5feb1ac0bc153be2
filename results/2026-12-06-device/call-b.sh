#!/usr/bin/env bash
# Call B: the Kineto fixtures of record with their nsys twins (captures.sh kineto), then joules per
# forward for the headline rows (device-call.sh energy) with what time is left. Run from the
# repository root with .carry and .nsys-deps carried.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; git log -1 --format='%h %s' | cut -c1-80; date -u; } >"$OUT/call-b.log"
OUT= RESULTS=/tmp/cap timeout -k 5 "${KINETO_LIMIT:-300}" scripts/dev/captures.sh kineto >>"$OUT/call-b.log" 2>&1
echo "== kineto rc=$? at ${SECONDS}s" >>"$OUT/call-b.log"
K=/tmp/cap/kineto
tar czf "$OUT/captures-kineto.tgz" -C "$K" --exclude=./traces --exclude=./under_nsys . 2>/dev/null
for m in gpt2 resnet50; do
  (cd "$K/traces" 2>/dev/null && tar cf "$OUT/kineto-$m.tar" ${m}_*.json.gz) 2>/dev/null
done
# The headline rows first, then PyTorch eager: what a short budget leaves out is the least needed.
ROWS="laptime_gpt2_bf16_b8_energy::gpt2 -p bf16 --iters 400
laptime_resnet50_bf16_b256_energy::resnet50 -p bf16 --iters 300
laptime_gpt2_fp8_b8_energy::gpt2 -p fp8 --iters 560
laptime_resnet50_fp8_b256_energy::resnet50 -p fp8 --iters 400
torch_gpt2_bf16_b8_energy::gpt2 --precision bf16 --iters 100
torch_resnet50_bf16_b256_energy::resnet50 --precision bf16 --iters 90"
if ((SECONDS < 480)); then
  ROWS=$ROWS BUDGET=$((575 - SECONDS)) scripts/dev/device-call.sh energy >>"$OUT/call-b.log" 2>&1
  echo "== energy rc=$? at ${SECONDS}s" >>"$OUT/call-b.log"
  python3 bench/compare.py /tmp/device-call/energy/json/*.json >>"$OUT/call-b.log" 2>&1
fi
ls -la "$OUT" >>"$OUT/call-b.log"
