#!/usr/bin/env bash
# Call 2: docs/PERF.md's table in one call (device-call.sh table): every headline and small-shape
# row, laptime in bf16 and fp8 beside PyTorch eager, then torch.compile, then each row's joules
# per forward (energy); the per-layer captures are call 3's. Run from the repository root with
# .carry carried; its summaries and reports come back as device-call-{table,laps,compile,energy}.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
LAYERS=0 LAPS_BUDGET=${LAPS_BUDGET:-185} COMPILE_BUDGET=${COMPILE_BUDGET:-100} ENERGY_BUDGET=${ENERGY_BUDGET:-240} \
  scripts/dev/device-call.sh table
