#!/usr/bin/env bash
# Call B of results/2026-12-02d-overlap: the stem's v4 with its MMA warpgroups in ping-pong, and
# eager builds timing their candidates by direct launches (LAPTIME_EAGER_TIMING=direct, the new
# default) against the graph timing before it, side by side, alternating; then the suites the
# change touches and ResNet-50's end-to-end check.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; B=/tmp/b
mkdir -p $B/laps && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$B/rc.txt; }
git log -1 --format='%H %s' >$B/commit.txt 2>/dev/null
timeout 100 "$L" lab stem --versions v3,v4 --json $B/lab_stem.json >$B/lab_stem.log 2>&1; note "lab stem" $?
row() {  # row NAME TIMING ARGS...
  local n=$1 t=$2; shift 2
  LAPTIME_EAGER_TIMING=$t timeout 150 "$L" bench "$@" --json $B/laps/$n.json >$B/laps/$n.log 2>&1; note "$n" $?
}
for i in 1 2; do
  row resnet50_bf16_direct_$i direct resnet50 -p bf16
  row resnet50_bf16_graph_$i graph resnet50 -p bf16
done
row resnet50_bf16_direct_stemv3 direct resnet50 -p bf16 --kernel stem=v3
for i in 1 2; do
  row gpt2_fp8_direct_$i direct gpt2 -p fp8
  row gpt2_fp8_graph_$i graph gpt2 -p fp8
done
row gpt2_bf16_direct direct gpt2 -p bf16
row gpt2_bf16_graph graph gpt2 -p bf16
row resnet50_fp8_direct direct resnet50 -p fp8
row resnet50_fp8_graph graph resnet50 -p fp8
(timeout 200 "$T/test_gemm_tuner" >$B/test_gemm_tuner.log 2>&1; note test_gemm_tuner $?) &
(timeout 300 "$T/test_resnet50_layers" --gtest_filter='*FusedStem*' >$B/test_resnet50_stem.log 2>&1; note "resnet50 stem tests" $?) &
(timeout 300 "$T/test_lab_kernels" >$B/test_lab_kernels.log 2>&1; note test_lab_kernels $?) &
(timeout 200 "$T/test_e4m3_stream" >$B/test_e4m3_stream.log 2>&1; note test_e4m3_stream $?) &
(timeout 300 "$T/test_fp8_layers" >$B/test_fp8_layers.log 2>&1; note test_fp8_layers $?) &
(timeout 300 python3 tests/e2e/check_resnet50.py --laptime "$L" >$B/e2e_resnet50.log 2>&1; note e2e_resnet50 $?) &
wait
for f in $B/laps/*.log; do echo "$(basename $f .log) $(grep 'lap time' $f)"; done >$B/laps/summary.txt
cp $B/rc.txt $B/laps/summary.txt "$R/"
tar czf "$R/b.tgz" -C $B .
ls -la "$R"
