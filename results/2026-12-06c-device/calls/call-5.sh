#!/usr/bin/env bash
# Call 5: the block's height as a parameter: one warpgroup a block (64 query rows, no barrier across
# warpgroups, four blocks an SM) and three (192 rows, one block) beside call 3's two; the core's
# configurations timed, then Nsight Compute over two of them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
H=$(pwd)
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader >"$OUT/variants.log"
timeout -k 5 150 .carry/attn_variants >>"$OUT/variants.log" 2>&1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
cd /tmp || exit 2
timeout -k 5 200 $NCU --set full --import-source yes -k 'regex:attention_kernel' -f -o attn5 "$H/.carry/attn_variants" profile >"$OUT/ncu.log" 2>&1
$NCU -i attn5.ncu-rep --page raw --csv | gzip -9 >"$OUT/raw.csv.gz"
for i in 0 1; do $NCU -i attn5.ncu-rep --page source --csv --print-source sass --launch-skip $i --launch-count 1 >"/tmp/sass5_$i.csv" 2>&1; done
tar czf "$OUT/sass.tgz" /tmp/sass5_*.csv 2>/dev/null
