#!/usr/bin/env bash
# Call 2 (2026-12-06d), on an H200 only (another card: nothing run, exit 3): docs/PERF.md's table
# in one call, laptime at the head a1ad025: the lap rows beside PyTorch eager, torch.compile's rows,
# then the energy part whole (every laptime row, PyTorch eager's GPT-2 and ResNet-50 rows, and
# torch.compile's, compiled again from the Inductor cache the compile part left). The per-layer
# captures (the layers part) follow in the next call on the same card.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-2.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
grep -q H200 "$L" || { echo "== not an H200: nothing run" >>"$L"; exit 3; }
tar xJf .carry/build.tar.xz || exit 2
mkdir -p /tmp/dcout
OUT=/tmp/dcout LAYERS=0 LAPS_BUDGET=150 COMPILE_BUDGET=100 ENERGY_BUDGET=290 RESULTS=/tmp/dc \
  timeout -k 5 $((585 - SECONDS)) scripts/dev/device-call.sh table >/dev/null 2>&1
echo "== table rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dcout/device-call-table.txt "$OUT/" 2>/dev/null
tar cf "$OUT/table.tar" -C /tmp/dcout . 2>/dev/null
