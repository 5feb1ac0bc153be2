#!/usr/bin/env bash
# Fuzzes the safetensors reader and the PyTorch profiler (Kineto) trace reader: builds
# tests/fuzz/fuzz_safetensors and fuzz_kineto (clang, libFuzzer, ASan+UBSan) in build-fuzz/ and runs
# each for SECONDS (default 60) from its committed seed corpus. New inputs go to
# build-fuzz/fuzz-corpus/ and build-fuzz/kineto-corpus/ (the committed corpora are never written); a
# finding is saved under build-fuzz/artifacts/ and the script exits non-zero.
#   tests/fuzz/run.sh [SECONDS]          (needs: apt-get install clang libclang-rt-14-dev)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=${LAPTIME_FUZZ_BUILD:-build-fuzz}
command -v clang++ >/dev/null || { echo "run.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DLAPTIME_FUZZ=ON \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$build" --target fuzz_safetensors fuzz_kineto -j2
mkdir -p "$build/fuzz-corpus" "$build/kineto-corpus" "$build/artifacts"

# Every seed once first (the regression set), then mutate for the time given.
"$build/tests/fuzz/fuzz_safetensors" tests/fuzz/corpus/* 2>&1 | tail -1
"$build/tests/fuzz/fuzz_safetensors" -max_total_time="$seconds" -print_final_stats=1 \
  -dict=tests/fuzz/safetensors.dict -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/artifacts/" "$build/fuzz-corpus" tests/fuzz/corpus

"$build/tests/fuzz/fuzz_kineto" tests/fuzz/kineto_corpus/* 2>&1 | tail -1
exec "$build/tests/fuzz/fuzz_kineto" -max_total_time="$seconds" -print_final_stats=1 \
  -dict=tests/fuzz/kineto.dict -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/artifacts/kineto-" "$build/kineto-corpus" tests/fuzz/kineto_corpus
