#!/usr/bin/env bash
# Call D of results/2026-12-02e-layernorm: LayerNorm v6 (v5 launched as a programmatic dependent of
# the GEMM before it): the ladder alone, GPT-2 B8 laps with v6 against `--kernel layernorm=v5`
# alternating (bf16, eager and graph), fp8 eager and graph, then the suites that launch it (the
# lab's, GPT-2's layers with their graph tests) and GPT-2's end-to-end check. Packed with PROBES=0
# BUILD80=0 TESTS="test_lab_kernels test_gpt2_layers" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; D=/tmp/d
mkdir -p $D/laps && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$D/rc.txt; }
timeout 60 "$L" lab layernorm --versions v5,v6 >$D/lab_layernorm.log 2>&1; note "lab layernorm" $?
bench() {  # bench NAME ARGS...
  local n=$1; shift
  timeout 60 "$L" bench gpt2 "$@" --json $D/laps/$n.json >$D/laps/$n.log 2>&1; note "$n" $?
}
for i in 1 2 3; do
  bench bf16_v6_$i -p bf16
  bench bf16_v5_$i -p bf16 --kernel layernorm=v5
done
bench bf16_graph_v6 -p bf16 --graph
bench bf16_graph_v5 -p bf16 --graph --kernel layernorm=v5
for i in 1 2; do bench fp8_$i -p fp8; done
bench fp8_graph -p fp8 --graph
grep -H "lap time" $D/laps/*.log >$D/laps/summary.txt
grep -H -A1 "  clock" $D/laps/*.log >$D/laps/clocks.txt
(timeout 200 "$T/test_lab_kernels" >$D/test_lab_kernels.log 2>&1; note test_lab_kernels $?) &
(timeout 200 "$T/test_gpt2_layers" >$D/test_gpt2_layers.log 2>&1; note test_gpt2_layers $?) &
(timeout 200 python3 tests/e2e/check_gpt2.py --laptime "$L" >$D/e2e_gpt2.log 2>&1; note e2e_gpt2 $?) &
wait
cp $D/rc.txt $D/laps/summary.txt "$R/" 2>/dev/null; tar czf "$R/d.tgz" -C $D .
ls -la "$R"
