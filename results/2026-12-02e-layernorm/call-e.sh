#!/usr/bin/env bash
# NOT RUN: four attempts found no machine, and then too little device time was left to start one.
# Call E of results/2026-12-02e-layernorm: the GPT-2 rows that LayerNorm v6 (after the table of
# call B) could move, at the session's last code commit: B1 --graph (the small row with a bound)
# with v6 and with `--kernel layernorm=v5`, alternating, and B8 fp8 eager and graph. The device
# time left (351 s) was too little for the whole table again. Packed with PROBES=0 BUILD80=0
# TESTS="test_bench_report" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; E=/tmp/e
mkdir -p $E && t0=$SECONDS
bench() {  # bench NAME ARGS...
  local n=$1; shift
  timeout 40 "$L" bench gpt2 "$@" --json $E/$n.json >$E/$n.log 2>&1; echo "$n rc=$? $((SECONDS - t0))s" >>$E/rc.txt
}
for i in 1 2; do
  bench b1_graph_v6_$i -p bf16 -b 1 --graph
  bench b1_graph_v5_$i -p bf16 -b 1 --graph --kernel layernorm=v5
done
bench fp8_b8 -p fp8
bench fp8_b8_graph -p fp8 --graph
grep -H "lap time" $E/*.log | sed 's|/tmp/e/||' >$E/summary.txt
cp $E/rc.txt $E/summary.txt "$R/"; tar czf "$R/e.tgz" -C $E .
ls -la "$R"
