#!/usr/bin/env bash
# Call E of results/2026-12-02d-overlap: the PERF.md table (scripts/dev/table-run.sh, LAYERS=0) on
# an idle card, then GPT-2's suites and end-to-end check, and the sm_80 build's suites (its PTX
# JIT-compiled here), in parallel.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; T80=$PWD/build80/tests; E=/tmp/e
mkdir -p $E && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$E/rc.txt; }
git log -1 --format='%H %s' >$E/commit.txt 2>/dev/null
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 300 bash scripts/dev/table-run.sh >$E/table-run.log 2>&1; note table $?
cp /tmp/device-run/table.txt $E/ 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
(timeout 170 "$T/test_gpt2_layers" >$E/test_gpt2_layers.log 2>&1; note test_gpt2_layers $?) &
(timeout 200 python3 tests/e2e/check_gpt2.py --laptime "$L" >$E/e2e_gpt2.log 2>&1; note e2e_gpt2 $?) &
if [[ -x $T80/test_resnet50_layers ]]; then
  (timeout 170 "$T80/test_resnet50_layers" >$E/sm80_test_resnet50_layers.log 2>&1; note "sm80 test_resnet50_layers" $?) &
  (timeout 170 "$T80/test_gpt2_layers" >$E/sm80_test_gpt2_layers.log 2>&1; note "sm80 test_gpt2_layers" $?) &
  (timeout 170 "$T80/test_fp8_layers" >$E/sm80_test_fp8_layers.log 2>&1; note "sm80 test_fp8_layers" $?) &
fi
wait
cp $E/rc.txt "$R/"; cp $E/table.txt "$R/" 2>/dev/null; tar czf "$R/e.tgz" -C $E .
ls -la "$R"
