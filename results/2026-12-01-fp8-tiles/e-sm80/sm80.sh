#!/usr/bin/env bash
# Issue 29, call 5: the sm_80 build's GPU suites (its PTX JIT-compiled on the H200) and its fp8 refusal.
tar xJf .carry4/build80.tar.xz
source scripts/dev/device-run.sh --env "$(realpath build/lib)"
export LAPTIME_SOURCE_DIR=$PWD
R=/tmp/sm80; mkdir -p $R
for t in test_gpt2_layers test_resnet50_layers test_fp8_layers; do
  (timeout -k 5 230 build80/tests/$t > $R/$t.log 2>&1; echo "$t rc=$?" >> $R/rc.txt) &
done
(timeout 60 build80/bench/laptime bench gpt2 -b 1 -t 64 -n 2 -p fp8 > $R/refusal.log 2>&1; echo "fp8 refusal rc=$? (must be nonzero)" >> $R/rc.txt) &
wait
{ sort $R/rc.txt; for t in test_gpt2_layers test_resnet50_layers test_fp8_layers; do echo "$t: $(grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' $R/$t.log | tr '\n' ' ')"; done;
  grep -hE '^\[  FAILED  \] [A-Za-z]' $R/*.log | sort -u | head; grep -m1 -i fp8 $R/refusal.log | cut -c1-250; } > $R/summary.txt
tar czf $OUT/sm80.tgz -C $R .; cp $R/summary.txt $OUT/; cat $R/summary.txt
