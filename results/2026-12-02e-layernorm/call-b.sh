#!/usr/bin/env bash
# Call B of results/2026-12-02e-layernorm: the PERF.md table (scripts/dev/table-run.sh, LAYERS=0)
# on an idle card, with the bench's new clock column; the sampler's own cost (GPT-2 B1 eager, the
# launch-bound row, LAPTIME_BENCH_CLOCK=off against on, alternating); then the suites call A
# could not carry and the sm_80 build's (its PTX JIT-compiled here), in parallel. Packed with
# PROBES=0 TESTS80="test_gpt2_layers test_resnet50_layers" TESTS="test_resnet50_layers test_e4m3_stream"
# scripts/dev/pack-carry.sh build build80.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; T80=$PWD/build80/tests; B=/tmp/b
mkdir -p $B/sampler && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$B/rc.txt; }
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 300 bash scripts/dev/table-run.sh >$B/table-run.log 2>&1; note table $?
cp /tmp/device-run/table.txt $B/ 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
for i in 1 2; do
  LAPTIME_BENCH_CLOCK=off timeout 60 "$L" bench gpt2 -p bf16 -b 1 -n 50 --json $B/sampler/off_$i.json >$B/sampler/off_$i.log 2>&1
  note "sampler off $i" $?
  timeout 60 "$L" bench gpt2 -p bf16 -b 1 -n 50 --json $B/sampler/on_$i.json >$B/sampler/on_$i.log 2>&1; note "sampler on $i" $?
done
grep -H "lap time" $B/sampler/*.log >$B/sampler/summary.txt
(timeout 300 "$T/test_resnet50_layers" >$B/test_resnet50_layers.log 2>&1; note test_resnet50_layers $?) &
(timeout 150 "$T/test_e4m3_stream" >$B/test_e4m3_stream.log 2>&1; note test_e4m3_stream $?) &
(timeout 400 "$T80/test_resnet50_layers" >$B/sm80_test_resnet50_layers.log 2>&1; note "sm80 test_resnet50_layers" $?) &
(timeout 200 "$T80/test_gpt2_layers" >$B/sm80_test_gpt2_layers.log 2>&1; note "sm80 test_gpt2_layers" $?) &
wait
cp $B/rc.txt $B/sampler/summary.txt "$R/" 2>/dev/null; cp $B/table.txt "$R/" 2>/dev/null; tar czf "$R/b.tgz" -C $B .
ls -la "$R"
