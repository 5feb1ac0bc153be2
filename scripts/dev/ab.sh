#!/usr/bin/env bash
# Before/after lap rows of two laptime binaries on one GPU, alternated so that clock and thermal
# drift fall on both alike:
#
#   scripts/dev/ab.sh OUTDIR NAME ROUNDS BEFORE_BIN AFTER_BIN -- BENCH_ARGS...
#
# runs `BIN bench BENCH_ARGS --nvtx iter --json OUTDIR/json/laptime_NAME_{before,after}_R.json`
# ROUNDS times each (before, after, before, after, ...) and prints each row's median.
set -uo pipefail
out=${1:?usage: ab.sh OUTDIR NAME ROUNDS BEFORE_BIN AFTER_BIN -- BENCH_ARGS...}
name=$2 rounds=$3 before=$4 after=$5
shift 5
[[ ${1:-} == -- ]] && shift
mkdir -p "$out/json"
for ((i = 1; i <= rounds; ++i)); do
  for side in before after; do
    bin=$before
    [[ $side == after ]] && bin=$after
    log=$out/${name}_${side}_$i.log
    "$bin" bench "$@" --nvtx iter --json "$out/json/laptime_${name}_${side}_$i.json" >"$log" 2>&1
    echo "$name $side $i: rc=$? $(grep -oE 'median [0-9.]+' "$log" | head -1)"
  done
done
