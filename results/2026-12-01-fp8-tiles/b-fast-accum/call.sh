#!/usr/bin/env bash
# Issue 29, call 2: fast accumulation (cuBLASLt's and CUTLASS's), its accuracy end to end, and
# where GPT-2 fp8's memsets come from. Everything under $OUT.
set -uo pipefail
tar xJf .carry2/build.tar.xz
R=/tmp/c2; mkdir -p $R/json
source scripts/dev/device-run.sh --env "$(realpath build/lib)"
export LAPTIME_SOURCE_DIR=$PWD
L=build/bench/laptime
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u; } > $R/summary.txt
build/tests/test_cutlass_gemm > $R/cutlass_gemm.log 2>&1; echo "test_cutlass_gemm rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/cutlass_gemm.log | tr '\n' ' ')" >> $R/summary.txt
LAPTIME_FP8_FAST_ACCUM=1 build/bench/laptime_cutlass_probe --rows 8192 --json $R/probe_fast.json > $R/probe_fast.log 2>&1; echo "probe_fast rc=$?" >> $R/summary.txt
LOOP="--nvtx iter --warmup 5 --iters 20"
row() { local name=$1; shift; env "$@" $L bench $ARGS $LOOP --json $R/json/$name.json > $R/$name.log 2>&1; echo "$name rc=$? $(grep -m1 '^lap time' $R/$name.log)" >> $R/summary.txt; }
ARGS="gpt2 -p fp8"
for rep in 1 2; do
  row laptime_gpt2_fp8_b8_r$rep X=1
  row laptime_gpt2_fp8_b8_fast_r$rep LAPTIME_FP8_FAST_ACCUM=1
  row laptime_gpt2_fp8_b8_fast_timed_r$rep LAPTIME_FP8_FAST_ACCUM=1 LAPTIME_GPT2_GEMM=timed
  row laptime_gpt2_fp8_b8_timed_r$rep LAPTIME_GPT2_GEMM=timed
done
ARGS="gpt2 -p fp8 --graph"; row laptime_gpt2_fp8_b8_graph X=1
ARGS="gpt2 -p bf16 --graph"; row laptime_gpt2_bf16_b8_graph X=1
ARGS="resnet50 -p fp8"; row laptime_resnet50_fp8_b256 X=1; row laptime_resnet50_fp8_b256_fast LAPTIME_FP8_FAST_ACCUM=1
grep -h -A8 '^  plans' $R/laptime_gpt2_fp8_b8_fast_timed_r1.log | cut -c1-300 >> $R/summary.txt
$L bench gpt2 -p fp8 --nvtx layer --warmup 3 --iters 10 --trace $R/gpt2_fp8.sqlite > $R/trace.log 2>&1
python3 scripts/dev/memsets.py $R/gpt2_fp8.sqlite > $R/memsets.txt 2>&1; cat $R/memsets.txt >> $R/summary.txt
rm -f $R/*.sqlite
LAPTIME_FP8_FAST_ACCUM=1 timeout 240 python3 tests/e2e/check_gpt2.py --laptime $L --precisions fp8 > $R/e2e_gpt2_fast.log 2>&1; echo "e2e gpt2 fp8 fast rc=$?" >> $R/summary.txt
sed -n '/^summary:/,$p' $R/e2e_gpt2_fast.log | tail -20 >> $R/summary.txt
python3 bench/compare.py $R/json/*.json > $R/compare.txt 2>&1
tar czf $OUT/c2.tgz -C $R .; cp $R/summary.txt $OUT/
cat $R/summary.txt $R/compare.txt | cut -c1-250
