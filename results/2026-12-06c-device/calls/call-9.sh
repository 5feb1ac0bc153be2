#!/usr/bin/env bash
# Call 9, on the H200 call 8 had just released warm (399 s of device time left): docs/PERF.md's
# table in one call, its budgets cut to fit (the layers part left out).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
LAYERS=0 LAPS_BUDGET=150 COMPILE_BUDGET=95 ENERGY_BUDGET=115 timeout 385 scripts/dev/device-call.sh table
