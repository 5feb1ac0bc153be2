#!/usr/bin/env bash
# Captures for issue 20's last two items, made on the H200 beside closing-run.sh a's phase 3:
#   sync_gpt2      laptime bench gpt2 --pitfall sync (a value read back at every layer's end): the
#                  verdict's heading must name the synchronizations (item 5);
#   sync_resnet50  the same for ResNet-50 at B32;
#   two_gpt2       two `laptime bench gpt2` processes in one capture (two ranks of one job);
#   gpt2_resnet50  GPT-2 and ResNet-50 in one capture, each with its own loop (item 4).
# Each: the .nsys-rep's SQLite export, nsys stats' three reports as CSV, and the bench's log.
# Usage: OUT=DIR bash scripts/dev/extra-captures.sh BUILD   (nsys on PATH; about 90 s)
set -uo pipefail
B=${1:?usage: extra-captures.sh BUILD}
L=$B/bench/laptime
W=${OUT:?}/extra
mkdir -p "$W"
cap() {
  local name=$1; shift
  nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --force-overwrite=true -o "$W/$name" "$@" \
    >"$W/$name.log" 2>&1
  echo "$name: profile rc=$?" | tee -a "$W/captures.txt"
  nsys export --type sqlite --force-overwrite=true -o "$W/$name.sqlite" "$W/$name.nsys-rep" >>"$W/$name.log" 2>&1
  for r in nvtx_sum cuda_gpu_kern_sum cuda_api_sum; do
    nsys stats --report $r --format csv --force-export=false -o "$W/$name" "$W/$name.sqlite" >>"$W/$name.log" 2>&1
  done
  rm -f "$W/$name.nsys-rep"
  ls -la "$W/$name"* | tee -a "$W/captures.txt"
}
cap sync_gpt2 "$L" bench gpt2 -b 8 -w 2 -n 8 --pitfall sync
cap sync_resnet50 "$L" bench resnet50 -b 32 -w 2 -n 8 --pitfall sync
cap two_gpt2 bash -c "$L bench gpt2 -b 1 -t 128 -w 3 -n 30 & $L bench gpt2 -b 1 -t 128 -w 3 -n 30 & wait"
cap gpt2_resnet50 bash -c "$L bench gpt2 -b 1 -t 128 -w 3 -n 30 & $L bench resnet50 -b 8 -w 3 -n 30 & wait"
for n in sync_gpt2 sync_resnet50 two_gpt2 gpt2_resnet50; do
  "$L" analyze "$W/$n.sqlite" >"$W/$n.analyze.txt" 2>&1; echo "$n analyze rc=$?" >>"$W/captures.txt"
done
