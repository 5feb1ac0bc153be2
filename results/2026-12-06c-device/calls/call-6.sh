#!/usr/bin/env bash
# Call 6: the wgmma core with its copies' addresses made once (a cursor a tile), the descriptors
# made once, and the running max moved only when it rises by 2^8 (the rescale skipped otherwise):
# every configuration checked against the mma.sync kernel on odd shapes and timed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader >"$OUT/variants.log"
timeout -k 5 150 .carry/attn_variants >>"$OUT/variants.log" 2>&1
