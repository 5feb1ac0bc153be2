#!/usr/bin/env bash
# Call 1 (2026-12-06f), the head 110a888, on an H200: docs/PERF.md's table in one call: the lap rows
# beside PyTorch eager, torch.compile's rows, then the energy part whole (every laptime row, PyTorch
# eager's GPT-2 and ResNet-50 rows, torch.compile's from the Inductor cache the compile part left).
# The layers part follows in call 3 on the same card. Another card: the table is not run;
# FALLBACK=check (the default) runs `device-call.sh check` instead (correctness only, any card),
# FALLBACK=none exits at once.
# ANY_CARD=1 runs it on whatever card the call got (the device's rules lend an H200 only to work that
# cannot fit an H100's memory: comparisons are made within one call, on its card).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-1.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
if [[ ${ANY_CARD:-0} != 1 ]] && ! grep -q H200 "$L"; then
  [[ ${FALLBACK:-check} == check ]] || { echo "== not an H200: nothing run" >>"$L"; exit 3; }
  echo "== not an H200: the table is not run; check instead" >>"$L"
  tar xJf .carry/build.tar.xz || exit 2
  BUDGET=380 RESULTS=/tmp/dc timeout -k 5 450 scripts/dev/device-call.sh check >/dev/null 2>&1
  echo "== check rc=$? at ${SECONDS}s" >>"$L"
  tar czf "$OUT/check.tgz" -C /tmp/dc/check --exclude='*.nsys-rep' --exclude='*.sqlite' --exclude='*.bin' . 2>/dev/null
  exit 3
fi
tar xJf .carry/build.tar.xz || exit 2
mkdir -p /tmp/dcout
# The parts pack into /tmp/dcout after each step; it goes to $OUT as one table.tar every 20 s (the
# eight files a call returns), so a call cut at its device-time limit still returns the rows done.
snapshot() { tar cf "$OUT/.table.tar" -C /tmp/dcout . 2>/dev/null && mv -f "$OUT/.table.tar" "$OUT/table.tar"; }
(while sleep 20; do snapshot; done) &
snap=$!
# TOTAL (the call's seconds) and the parts' budgets can be lowered when less device time is left.
OUT=/tmp/dcout LAYERS=0 LAPS_BUDGET=${LAPS_BUDGET:-150} COMPILE_BUDGET=${COMPILE_BUDGET:-100} \
  ENERGY_BUDGET=${ENERGY_BUDGET:-290} RESULTS=/tmp/dc \
  timeout -k 5 $((${TOTAL:-585} - SECONDS)) scripts/dev/device-call.sh table >/dev/null 2>&1
echo "== table rc=$? at ${SECONDS}s" >>"$L"
kill "$snap" 2>/dev/null
wait "$snap" 2>/dev/null
snapshot
cp /tmp/dcout/device-call-table.txt "$OUT/" 2>/dev/null
