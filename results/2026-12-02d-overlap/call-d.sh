#!/usr/bin/env bash
# Call D of results/2026-12-02d-overlap: stem v4 rebuilt from call C's reading (the pool on its own
# warpgroup, the MMA warpgroups ping-pong, an epilogue without shuffles into v3's ring layout, nine
# rows by position): the lab's v3 against v4, the stem's tests, the e4m3 stream, and the B256 bf16
# lap with production against --kernel stem=v3, alternating.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; D=/tmp/d
mkdir -p $D && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$D/rc.txt; }
git log -1 --format='%H %s' >$D/commit.txt 2>/dev/null
timeout 100 "$L" lab stem --versions v3,v4 --json $D/lab_stem.json >$D/lab_stem.log 2>&1; note "lab stem" $?
for i in 1 2; do
  timeout 90 "$L" bench resnet50 -p bf16 --json $D/bf16_v4_$i.json >$D/bf16_v4_$i.log 2>&1; note "bf16 prod $i" $?
  timeout 90 "$L" bench resnet50 -p bf16 --kernel stem=v3 --json $D/bf16_v3_$i.json >$D/bf16_v3_$i.log 2>&1; note "bf16 stem=v3 $i" $?
done
(timeout 200 "$T/test_resnet50_layers" --gtest_filter='*FusedStem*' >$D/test_resnet50_stem.log 2>&1; note "resnet50 stem tests" $?) &
(timeout 200 "$T/test_lab_kernels" --gtest_filter='*stem*:*Stem*' >$D/test_lab_stem.log 2>&1; note "lab stem tests" $?) &
(timeout 200 "$T/test_e4m3_stream" >$D/test_e4m3_stream.log 2>&1; note test_e4m3_stream $?) &
wait
for f in $D/bf16_*.log; do echo "$(basename $f .log) $(grep 'lap time' $f)"; done >$D/laps.txt
cp $D/rc.txt $D/laps.txt "$R/"; tar czf "$R/d.tgz" -C $D .
ls -la "$R"
