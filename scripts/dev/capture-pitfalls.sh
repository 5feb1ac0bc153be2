#!/usr/bin/env bash
# Captures `laptime bench gpt2` under Nsight Systems, clean and with each pitfall, for the
# analyzer's tests and for docs/PERF.md's side-by-side laps. Needs a GPU, nsys and a built
# bench/laptime.
#
#   scripts/dev/capture-pitfalls.sh OUTDIR [--build-dir DIR] [--nsys NSYS] [-- BENCH ARGS...]
#
# Cases (file names as the tests expect them under tests/fixtures/nsys/):
#   bench_gpt2_clean                      no pitfall
#   pitfall_sync_blocking                 --pitfall sync (read back + wait on the compute stream
#                                         at every layer end), on the created (non-blocking) stream
#   pitfall_sync_blocking_default_stream  the same on the legacy default stream (--stream default)
#   pitfall_pageable                      --pitfall pageable (torch.tensor(list).cuda())
# For each: NAME.sqlite (nsys export, shrunk to the tables laptime reads by
# tests/fixtures/lesson/shrink_capture.py), NAME_{nvtx_sum,cuda_api_sum,cuda_gpu_kern_sum}.csv
# (`nsys stats` on the full export), NAME.log (the bench's output) and NAME.analyze.txt
# (`laptime analyze NAME.sqlite`). At the end, the laps side by side (the bench's own
# event-timed median, and the analyzer's lap and its estimate of the lap without the syncs).
# Default bench arguments: gpt2 --warmup 2 --iters 5, at the bench's default shape (B=8, T=1024),
# where the GPU bounds the clean lap: the analyzer's estimate of the lap without the syncs is then
# the GPU's own time, which tests/test_trace_pitfalls.cpp compares with the clean run. (At a
# small, launch-bound shape the host's own work also slows down after every drained queue, which
# an estimate from the sync run alone cannot see.) The files stay under 2 MB: their size follows
# the number of kernels and calls, not the shape.
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || { usage; exit 2; }
out=$1; shift
build=build
nsys=nsys
bench_args=(gpt2 --warmup 2 --iters 5)
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --nsys) nsys=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "capture-pitfalls.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
laptime=$build/bench/laptime
[[ -x $laptime ]] || { echo "capture-pitfalls.sh: no $laptime: build it first (cmake --build $build --target laptime)" >&2; exit 1; }
command -v "$nsys" >/dev/null || { echo "capture-pitfalls.sh: $nsys not found: pass --nsys PATH" >&2; exit 1; }
mkdir -p "$out"

capture() {  # capture NAME BENCH-ARGS...
  local name=$1; shift
  echo "== $name: laptime bench $*"
  "$nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true -o "$out/$name" \
    "$laptime" bench "$@" >"$out/$name.log" 2>&1 || { tail "$out/$name.log"; return 1; }
  "$nsys" export --type sqlite --force-overwrite=true -o "$out/$name.sqlite" "$out/$name.nsys-rep" >/dev/null
  "$nsys" stats --force-export=false -q --format csv --report nvtx_sum,cuda_api_sum,cuda_gpu_kern_sum \
    -o "$out/$name" "$out/$name.sqlite" >/dev/null
  python3 "$root/tests/fixtures/lesson/shrink_capture.py" "$out/$name.sqlite" "$out/$name.sqlite"
  rm -f "$out/$name.nsys-rep"
  "$laptime" analyze "$out/$name.sqlite" --json "$out/$name.analyze.json" >"$out/$name.analyze.txt" 2>&1 || true
}

capture bench_gpt2_clean "${bench_args[@]}"
capture pitfall_sync_blocking "${bench_args[@]}" --pitfall sync
capture pitfall_sync_blocking_default_stream "${bench_args[@]}" --pitfall sync --stream default
capture pitfall_pageable "${bench_args[@]}" --pitfall pageable

echo
printf '%-38s %12s %12s %14s %16s\n' case "bench lap" "analyze lap" "without syncs" "host wait/iter"
for name in bench_gpt2_clean pitfall_sync_blocking pitfall_sync_blocking_default_stream pitfall_pageable; do
  lap=$(sed -n 's/^lap time: \([0-9.]*\) ms.*/\1/p' "$out/$name.log" 2>/dev/null || true)
  read -r alap without wait < <(python3 - "$out/$name.analyze.json" <<'PY' || echo "- - -"
import json, sys
j = json.load(open(sys.argv[1]))
n = max(j["steady_iterations"], 1)
s = j["synchronization"]
print("%.3f %.3f %.3f" % (j["time_ms"]["lap"], s["lap_without_ms"], s["host_wait_ns"] / 1e6 / n))
PY
)
  printf '%-38s %12s %12s %14s %16s\n' "$name" "${lap:--}" "$alap" "$without" "$wait"
done
echo "(ms; bench lap: the event-timed median; analyze lap and host wait: from the NVTX ranges of the steady"
echo " iterations; without syncs: the analyzer's estimate. Copy the files into tests/fixtures/nsys/.)"
