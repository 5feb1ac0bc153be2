#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# On a machine with a GPU and Nsight Systems (issue 21): the split `laptime` (host-only
# executable + liblaptime_gpu.so loaded with dlopen) and .nsys-rep reading, where they can only be
# seen for real. Checks that
#   1. `laptime bench gpt2` runs through the module on a GPU (exit 0, a lap time), and
#      `laptime --help` / `analyze` still map no CUDA library there (LD_DEBUG=libs);
#   2. `nsys profile ... laptime bench gpt2` records the bench's kernels and NVTX ranges although
#      the CUDA libraries arrive by dlopen: `laptime analyze RUN.nsys-rep` (exported once by the
#      real nsys, said in one line) finds the `forward` iterations and their kernels, and a
#      second analyze reads the cached RUN.sqlite without running nsys;
#   3. test_host_cli's NsysReport.RealNsysExportMatchesTheCommittedExport passes: the committed
#      graph_cases.nsys-rep exported by this nsys reads as the graph_cases.sqlite beside it.
# Everything it prints and the small files go to $OUT/host-build-check.tgz when $OUT is set.
# About 2 minutes (one GPT-2 B=1 bench under nsys).
#
#   scripts/dev/host-build-check.sh [BUILD_DIR]      (default: build)
set -euo pipefail

build=${1:-build}
laptime=$(realpath "$build/bench/laptime")
[[ -x $laptime && -f $build/bench/liblaptime_gpu.so ]] || { echo "host-build-check: build the laptime target first ($build/bench)." >&2; exit 1; }
command -v nsys >/dev/null || { echo "host-build-check: nsys is not on PATH." >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/host-build-check.log
failures=0
pass() { echo "  ok    $*" | tee -a "$log"; }
fail() { echo "  FAIL  $*" | tee -a "$log"; failures=$((failures + 1)); }
cuda_libs='lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|cupti|nvrtc)\.so'

echo "1. bench through the module" | tee -a "$log"
"$laptime" bench gpt2 -b 1 -t 128 -n 10 >"$work/bench.txt" 2>&1 && grep -q 'lap' "$work/bench.txt" &&
  pass "laptime bench gpt2 -b 1 -t 128 ran on the GPU" || fail "bench: $(tail -n 3 "$work/bench.txt")"
for args in "--help" "analyze tests/fixtures/synthetic_trace.sqlite"; do
  if LD_DEBUG=libs "$laptime" $args 2>&1 >/dev/null | grep 'calling init:' | grep -qE "$cuda_libs"; then
    fail "laptime $args loaded a CUDA library"
  else
    pass "laptime $args loaded no CUDA library"
  fi
done

echo "2. nsys profile through dlopen, then analyze the .nsys-rep" | tee -a "$log"
nsys profile --trace=cuda,nvtx,osrt -o "$work/run" "$laptime" bench gpt2 -b 1 -t 128 -n 10 >"$work/nsys-profile.txt" 2>&1 &&
  [[ -f $work/run.nsys-rep ]] && pass "nsys profile wrote run.nsys-rep" || fail "nsys profile: $(tail -n 3 "$work/nsys-profile.txt")"
"$laptime" analyze "$work/run.nsys-rep" --json "$work/run.json" >"$work/analyze.txt" 2>"$work/analyze.err" &&
  pass "analyze run.nsys-rep exit 0" || fail "analyze run.nsys-rep: $(cat "$work/analyze.err")"
grep -q 'laptime: exporting .* with `nsys export --type sqlite` to .*run.sqlite, kept for later runs.' "$work/analyze.err" &&
  pass "said it exported once: $(head -n 1 "$work/analyze.err")" || fail "no export line: $(cat "$work/analyze.err")"
python3 - "$work/run.json" <<'EOF' && pass "the trace holds the bench's forward iterations and kernels" || fail "run.json lacks iterations or kernels"
import json, sys
j = json.load(open(sys.argv[1]))
steady = [it for it in j["iterations"] if it["steady"]]
assert j["range"] == "forward" and len(steady) >= 5 and all(it["kernels"] > 0 for it in steady), (j["range"], steady[:1])
EOF
"$laptime" analyze "$work/run.nsys-rep" >/dev/null 2>"$work/analyze2.err" &&
  grep -q 'laptime: reading .*run.sqlite, the SQLite export beside' "$work/analyze2.err" &&
  pass "second analyze read the cached export" || fail "second analyze: $(cat "$work/analyze2.err")"

echo "3. the committed report through this nsys" | tee -a "$log"
LAPTIME_BINARY=$laptime "$build/tests/test_host_cli" --gtest_filter='NsysReport.RealNsysExportMatchesTheCommittedExport' >"$work/gtest.txt" 2>&1 &&
  grep -q '\[       OK \]' "$work/gtest.txt" && pass "RealNsysExportMatchesTheCommittedExport" ||
  fail "RealNsysExportMatchesTheCommittedExport: $(tail -n 15 "$work/gtest.txt")"

echo "host-build-check: $failures failure(s)" | tee -a "$log"
if [[ -n ${OUT:-} ]]; then
  nsys --version >"$work/nsys-version.txt" 2>&1 || true
  tar -C "$work" -czf "$OUT/host-build-check.tgz" host-build-check.log bench.txt nsys-profile.txt analyze.txt analyze.err \
    analyze2.err run.json gtest.txt nsys-version.txt 2>/dev/null || true
fi
exit $((failures > 0))
