# Call C as sent to the device (from the repository root, .carry carried; OUT set by the device tool).
tar xJf .carry/build.tar.xz && source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1; F=$OUT/fix.log; { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log -1 --format=%h; } >$F
G='*WholeModel*:*Blocks*:*LayerNormLaunches*'
(timeout 110 build80/tests/test_gpt2_layers --gtest_filter="$G" --gtest_repeat=2 >$OUT/sm80.log 2>&1; echo "sm80 gpt2_layers rc=$?" >>$F) &
(timeout 110 build/tests/test_lab_try --gtest_filter='TryOnGpu.Hangs*' >$OUT/try.log 2>&1; echo "test_lab_try hangs rc=$?" >>$F) &
(timeout 110 build/tests/test_gpt2_layers --gtest_filter="$G" >$OUT/sm90.log 2>&1; echo "sm90 gpt2_layers rc=$?" >>$F) &
(o=$(timeout 60 build80/bench/laptime bench gpt2 -b 1 -t 64 -n 2 -p fp8 2>&1); echo "sm80 fp8 refusal rc=$? $o" >>$F) &
wait
(timeout 60 build/bench/laptime bench gpt2 -p bf16 -n 30 2>&1 | grep -E "lap time|variant" >>$F)
for f in sm80 try sm90; do echo "== $f" >>$F; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \] [A-Z]|Failure" $OUT/$f.log | sort -u | head -20 >>$F; done
cat $F
