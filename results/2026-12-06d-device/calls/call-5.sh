#!/usr/bin/env bash
# Call 5 (2026-12-06d): on an H200, the table (call-2.sh); on another card, the attention harness
# (attention/attn_variants.cu, carried built): the wgmma core's configurations as production has
# them beside the intra-warpgroup pipelined loop (S of tile kt and P·V of tile kt - 1 in flight
# together, the softmax under P·V), every output checked against the mma.sync kernel, timed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash .carry/call-2.sh; fi
L=$OUT/call-5.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
timeout -k 5 200 .carry/attn_variants >"$OUT/variants.log" 2>&1
echo "== variants rc=$? at ${SECONDS}s" >>"$L"
