#!/usr/bin/env bash
# Call 4: Nsight Compute over the wgmma core (N64 and N128 key tiles, two blocks an SM) and the
# mma.sync kernel, one launch each at GPT-2's shape: the limiter and where the warps stall.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
H=$(pwd)
cd /tmp || exit 2
timeout -k 5 300 $NCU --set full --import-source yes -k 'regex:attention_kernel' -f -o attn "$H/.carry/attn_variants" profile >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?" >>"$OUT/ncu.log"
$NCU -i attn.ncu-rep --page details >"$OUT/details.txt" 2>&1
$NCU -i attn.ncu-rep --page raw --csv >"$OUT/raw.csv" 2>&1
for i in 0 1 2; do
  $NCU -i attn.ncu-rep --page source --csv --print-source sass --launch-skip $i --launch-count 1 >"/tmp/sass_$i.csv" 2>&1
done
tar czf "$OUT/sass.tgz" /tmp/sass_*.csv
gzip -9 "$OUT/raw.csv"
cp attn.ncu-rep "$OUT/" 2>/dev/null
ls -la "$OUT"
