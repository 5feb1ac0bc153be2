#!/usr/bin/env bash
# Call 3 (2026-12-06f) as sent, inline, on the same warm H100 with the 131 s left after call 2: the
# fp8 end-to-end check at B1 under LAPTIME_CONV_TUNE=final (with the comparison made
# fair, 3867869), then `once` against `final` alternated, two pairs, ResNet-50 B1 `--graph` fp8.
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1; LT=$(realpath build/bench/laptime); nvidia-smi --query-gpu=name --format=csv,noheader; (LAPTIME_CONV_TUNE=final timeout 60 python3 tests/e2e/check_resnet50.py --laptime "$LT" --precisions fp8 --batches 1 2>&1 | grep -A8 '^summary:') ; echo "e2e at $SECONDS s"; for i in 1 2; do for m in once final; do LAPTIME_CONV_TUNE=$m timeout 30 "$LT" bench resnet50 -b 1 -p fp8 --graph 2>&1 | grep -E "^  (lap|steady)|median" | head -2 | sed "s/^/$m $i: /"; done; done; echo "done at $SECONDS s"
