#!/usr/bin/env bash
# Packs what a device call needs of the builds into .carry/build.tar.xz (ignored; carry ".carry"
# and unpack with `tar xJf .carry/build.tar.xz` first): stripped copies of the binaries that
# device-run.sh, captures.sh and bench-identical.sh run, since build/ itself is over the 64 MiB a
# call may carry. Builds the targets first. Run it here, not on the device:
#   scripts/dev/pack-carry.sh [SRC_BUILD (default build)] [SRC_BUILD80 (default build80: sm_80, optional)]
# TESTS="test_a test_b" packs those suites alone (TESTS="" none) (a call's carry is 64 MiB with the tracked tree:
# every suite does not fit beside it); BUILD80=0 leaves the sm_80 build out; PROBES=0 leaves out
# the development probes (laptime_fp8_shapes, laptime_cutlass_probe, laptime_sdpa_probe);
# TESTS80="test_a" packs those sm_80 suites alone; LAPTIME80=0 leaves out the sm_80 laptime (the
# suites link the library statically and run without it).
set -euo pipefail
src=${1:-build}
src80=${2:-build80}
tests=(test_gpt2_layers test_gpt2_reference test_resnet50_layers test_resnet50_reference test_layer_costs
       test_bench_report test_fp8_layers test_fp8_reference test_trace_graph test_ncu test_host_cli
       test_lab_kernels test_lab_cli test_cutlass_gemm test_gemm_tuner test_e4m3_stream)
# shellcheck disable=SC2206  # TESTS is a word list
[[ -n ${TESTS+set} ]] && tests=($TESTS)
[[ ${BUILD80:-1} == 0 ]] && src80=/nonexistent
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/work} CCACHE_DIR=${CCACHE_DIR:-/work/.ccache}
cmake --build "$src" -j2 --target laptime laptime_fp8_shapes laptime_cutlass_probe laptime_sdpa_probe "${tests[@]}"
tests80=(test_gpt2_layers test_resnet50_layers test_fp8_layers)
# shellcheck disable=SC2206  # TESTS80 is a word list
[[ -n ${TESTS80:-} ]] && tests80=($TESTS80)
laptime80=(bench/laptime bench/liblaptime_gpu.so)
[[ ${LAPTIME80:-1} == 0 ]] && laptime80=()
[[ -d $src80 ]] && cmake --build "$src80" -j2 --target laptime "${tests80[@]}"
stage=$(mktemp -d)
copy() {  # copy FROM_BUILD TO_NAME FILES...
  local from=$1 to=$2; shift 2
  for f in "$@"; do
    [[ -e $from/$f ]] || { echo "pack-carry: no $from/$f" >&2; exit 1; }
    mkdir -p "$stage/$to/$(dirname "$f")"
    cp "$from/$f" "$stage/$to/$f"
    strip --strip-unneeded "$stage/$to/$f" 2>/dev/null || true
  done
}
probes=(bench/laptime_fp8_shapes bench/laptime_cutlass_probe bench/laptime_sdpa_probe)
[[ ${PROBES:-1} == 0 ]] && probes=()
copy "$src" build bench/laptime bench/liblaptime_gpu.so "${probes[@]}" "${tests[@]/#/tests/}"
[[ -d $src80 ]] && copy "$src80" build80 "${laptime80[@]}" "${tests80[@]/#/tests/}"
# The system libraries the binaries link that the device lacks (RE2: libre2-dev is not there);
# device-run.sh, captures.sh and bench-identical.sh put build/lib on LD_LIBRARY_PATH.
mkdir -p "$stage/build/lib"
for lib in $(ldd "$src/bench/laptime" | awk '/libre2/ {print $3}'); do cp -L "$lib" "$stage/build/lib/"; done
mkdir -p .carry
# xz -9e: its 64 MiB window spans the binaries, which share most of their code (a third of -6's size).
tar cf - -C "$stage" . | xz -9e -T1 >.carry/build.tar.xz
rm -rf "$stage"
ls -la .carry/build.tar.xz
