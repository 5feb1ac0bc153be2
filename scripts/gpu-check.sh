#!/usr/bin/env bash
# shellcheck disable=SC2317  # step functions run through step "$@", which shellcheck cannot see
# Everything in laptime that needs a GPU, in one run, with a log per step and a summary:
#
#   1. configure and build (Release, all cores)              unless --skip-build
#   2. ctest: every suite, the GPU ones included (they skip themselves only without a GPU)
#   3. end-to-end correctness against PyTorch: tests/e2e/check_gpt2.py, check_resnet50.py
#   4. laptime bench, both models, bf16 and fp32, eager and --graph, --json reports
#   5. bench/torch_baseline.py for the same models and precisions (eager), plus
#      torch.compile in bf16                                 when torch is importable
#   6. bench/compare.py: one table of all the reports (text and Markdown)
#
# Usage: scripts/gpu-check.sh [--out DIR] [--build-dir DIR] [--skip-build] [--quick]
#   --out DIR        where logs/, json/, compare.txt, compare.md and summary.txt go
#                    (default: <build dir>/gpu-check-<date>-<time>)
#   --build-dir DIR  the CMake build folder (default: build); with --skip-build it must hold
#                    a built bench/laptime already
#   --skip-build     use the existing build as it is
#   --quick          bf16 only, 2 warm-up + 5 timed iterations, no torch.compile, and the
#                    end-to-end checks on one small shape each: a smoke test
#
# A failing step does not stop the run: the later steps still run and the summary lists
# every step as PASS, FAIL or SKIP (a prerequisite is missing: no torch, no check script).
# Exit status: 1 if any step failed, else 0.
# Timing runs use --nvtx iter on both sides: the iteration range only, so that PyTorch's
# per-layer hooks do not tax its eager numbers. PYTHON selects the interpreter (python3).
set -euo pipefail

usage() { sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
OUT=""
BUILD=build
SKIP_BUILD=0
QUICK=0
while (($#)); do
  case $1 in
    --out) OUT=${2:?--out needs a folder}; shift 2 ;;
    --build-dir) BUILD=${2:?--build-dir needs a folder}; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    --quick) QUICK=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu-check.sh: unknown option '$1'; see --help." >&2; exit 2 ;;
  esac
done

# Folders given relative to where the script was started; everything runs from the repository.
((SKIP_BUILD)) || mkdir -p "$BUILD"
if [[ -d $BUILD ]]; then BUILD=$(cd "$BUILD" && pwd); fi
LAPTIME=$BUILD/bench/laptime
if ((SKIP_BUILD)) && [[ ! -x $LAPTIME ]]; then
  echo "gpu-check.sh: --skip-build, but there is no $LAPTIME; build first or drop --skip-build." >&2
  exit 2
fi
OUT=${OUT:-$BUILD/gpu-check-$(date +%Y%m%d-%H%M%S)}  # under the build folder: git ignores it
OUT=$(mkdir -p "$OUT/logs" "$OUT/json" && cd "$OUT" && pwd)
cd "$REPO"

MODELS=(gpt2 resnet50)
if ((QUICK)); then
  PRECISIONS=(bf16) WARMUP=2 ITERS=5 E2E_GPT2=(--shapes 3x77) E2E_RESNET50=(--batches 3)
else
  PRECISIONS=(bf16 fp32) WARMUP=5 ITERS=20 E2E_GPT2=() E2E_RESNET50=()
fi
SKIP=77  # a step's exit status for "cannot run here" (the Automake convention)

# --- steps --------------------------------------------------------------------------------------
#
# A step is a function run as `fn >log 2>&1 || rc=$?`. In that position bash ignores `set -e`
# inside the function, so every step function returns its failures explicitly.

NAMES=() RESULTS=() TIMES=() LOGS=()

# step NAME COMMAND...: runs COMMAND with its output in logs/<NAME>.log and records the result.
step() {
  local name=$1 log="$OUT/logs/${1// /_}.log" start=$SECONDS rc=0 result
  shift
  printf '%-36s ' "$name"
  "$@" >"$log" 2>&1 || rc=$?
  case $rc in
    0) result=PASS ;;
    "$SKIP") result=SKIP ;;
    *) result=FAIL ;;
  esac
  NAMES+=("$name") RESULTS+=("$result") TIMES+=("$((SECONDS - start))") LOGS+=("logs/${log##*/}")
  printf '%s  %4ss  %s\n' "$result" "$((SECONDS - start))" "logs/${log##*/}"
  case $result in
    FAIL) tail -n 5 "$log" | sed 's/^/    | /' ;;
    SKIP) tail -n 1 "$log" | sed 's/^/    | /' ;;
  esac
}

skip() { echo "skipped: $*"; return "$SKIP"; }  # use as: condition || { skip "why"; return; }

have_torch() { "$PYTHON" -c "import torch" 2>/dev/null; }

info() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
  "$PYTHON" --version
  "$PYTHON" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, \
                'cuDNN', torch.backends.cudnn.version())" || echo "torch: not importable"
  git -C "$REPO" log -1 --oneline
  return 0  # informational: never fails the run
}

build() {
  cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release || return
  cmake --build "$BUILD" -j "$(nproc)"
}

run_ctest() {
  local out rc=0
  out=$(ctest --test-dir "$BUILD" --output-on-failure 2>&1) || rc=$?
  printf '%s\n' "$out"
  echo "ctest: $(grep -c -- '\*\*\*Skipped' <<<"$out") test(s) skipped themselves" \
    "(GPU tests skip only without a usable GPU)"
  return "$rc"
}

e2e() {  # e2e SCRIPT ARGS...
  [[ -f $1 ]] || { skip "$1 is not in this checkout"; return; }
  have_torch || { skip "the end-to-end checks compare against PyTorch, not importable here"; return; }
  "$PYTHON" "$@"
}

laptime_bench() {  # laptime_bench MODEL PRECISION MODE JSON
  local graph=()
  [[ $3 == graph ]] && graph=(--graph)
  "$LAPTIME" bench "$1" --precision "$2" "${graph[@]}" --nvtx iter \
    --warmup "$WARMUP" --iters "$ITERS" --json "$4"
}

torch_bench() {  # torch_bench MODEL PRECISION MODE JSON
  have_torch || { skip "torch is not importable"; return; }
  local compile=()
  [[ $3 == compile ]] && compile=(--compile)
  "$PYTHON" "$REPO/bench/torch_baseline.py" "$1" --precision "$2" "${compile[@]}" --nvtx iter \
    --warmup "$WARMUP" --iters "$ITERS" --json "$4"
}

compare() {  # compare JSON... : the table, printed and in compare.txt, and compare.md
  (($#)) || { skip "no bench report was written"; return; }
  "$PYTHON" "$REPO/bench/compare.py" "$@" >"$OUT/compare.txt" || return
  cat "$OUT/compare.txt"
  "$PYTHON" "$REPO/bench/compare.py" --markdown "$@" >"$OUT/compare.md"
}

# --- the run ------------------------------------------------------------------------------------

echo "gpu-check: $REPO -> $OUT ($( ((QUICK)) && echo quick || echo full) run)"
step info info
if ((SKIP_BUILD)); then
  step build skip "--skip-build: using $BUILD as it is"
else
  step build build
fi
step ctest run_ctest
step "e2e gpt2" e2e tests/e2e/check_gpt2.py --laptime "$LAPTIME" "${E2E_GPT2[@]}"
step "e2e resnet50" e2e tests/e2e/check_resnet50.py --laptime "$LAPTIME" "${E2E_RESNET50[@]}"

REPORTS=()  # in table order: PyTorch eager (the baseline), compile, laptime eager, graph
for model in "${MODELS[@]}"; do
  for p in "${PRECISIONS[@]}"; do
    modes=(eager)
    if ((!QUICK)) && [[ $p == bf16 ]]; then modes+=(compile); fi
    for mode in "${modes[@]}"; do
      json=$OUT/json/pytorch-${mode}_${model}_${p}.json
      step "bench torch $model $p $mode" torch_bench "$model" "$p" "$mode" "$json"
      if [[ -f $json ]]; then REPORTS+=("$json"); fi
    done
    for mode in eager graph; do
      json=$OUT/json/laptime_${model}_${p}_${mode}.json
      step "bench laptime $model $p $mode" laptime_bench "$model" "$p" "$mode" "$json"
      if [[ -f $json ]]; then REPORTS+=("$json"); fi
    done
  done
done
step compare compare "${REPORTS[@]}"

# --- summary ------------------------------------------------------------------------------------

passed=0 failed=0 skipped=0
for r in "${RESULTS[@]}"; do
  case $r in PASS) ((++passed)) ;; FAIL) ((++failed)) ;; SKIP) ((++skipped)) ;; esac
done
{
  if [[ -f $OUT/compare.txt ]]; then echo; cat "$OUT/compare.txt"; fi
  echo
  printf '%-36s %-6s %6s  %s\n' step result time log
  for i in "${!NAMES[@]}"; do
    printf '%-36s %-6s %5ss  %s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${TIMES[$i]}" "${LOGS[$i]}"
  done
  echo "$passed passed, $failed failed, $skipped skipped; logs and reports in $OUT"
} | tee "$OUT/summary.txt"
exit $((failed > 0 ? 1 : 0))
