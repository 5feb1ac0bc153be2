#!/usr/bin/env bash
# shellcheck disable=SC2317  # run_one runs through xargs, which shellcheck cannot see
# compute-sanitizer over both models, every precision, eager and CUDA Graph, on tiny shapes:
#
#   tools       memcheck (--leak-check full), racecheck, initcheck, synccheck
#               (CUDA_BARRIERS=N: synccheck tracks N cuda::barriers per block, --num-cuda-barriers;
#               the first H200 sweep overflowed the default inside a cuDNN engine)
#   models      gpt2     tests/golden/gpt2_tiny.safetensors      (2 layers, C=64), B=2 T=32
#               resnet50 tests/golden/resnet50_tiny.safetensors  (widths /8), B=2 61x61
#   precisions  fp32 tf32 bf16
#   modes       eager, graph (laptime bench --graph)
#   and gpt2flash: GPT-2 bf16 with `--attention flash`, our own attention kernel (bf16's
#               default is cuDNN's; fp32 and tf32 run our fp32 flash kernel by default), on
#               seeded weights of head size 64 (2 layers, C=128) that weights/convert.py
#               --random writes into --out first
#   and resnet50stem: ResNet-50 bf16 with `--stem fused`, our own stem kernel (convolution,
#               ReLU and max pool in one)
#
# 64 runs (48, 8 of gpt2flash, 8 of resnet50stem) of `laptime bench MODEL --weights TINY -w 1 -n 2`, several at a time, one log each,
# then a table: tool, model, precision, mode, the tool's error count, how many of the findings
# are in our kernels (kernels/, layers/: names read from the sources), in vendor code
# (cuBLASLt's nvjet/cutlass kernels, cuDNN's engines, anything in libcublas*/libcudnn*) or
# unattributed, and the run's exit status. The tiny configurations take the same code paths
# as the full-size models (every kernel, every cuDNN/cuBLASLt call), only with small shapes.
#
# Usage: scripts/sanitize.sh [--build-dir DIR] [--out DIR] [--jobs N] [--tools "memcheck ..."]
#   --build-dir DIR  a build holding bench/laptime (default: build); built if missing
#   --out DIR        logs/ and summary.txt go here (default: <build>/sanitize-<date>-<time>)
#   --jobs N         runs at once on the one GPU (default 6)
#   --tools LIST     a subset of the four tools
#   --only REGEX     only the runs whose "tool model precision mode" matches (grep -E), e.g.
#                    'synccheck resnet50 bf16|gpt2flash' to repeat what a sweep left open
# COMPUTE_SANITIZER selects the binary (default: compute-sanitizer on PATH, else
# /usr/local/cuda/bin/compute-sanitizer). Exit status: 1 if any finding is in our kernels or
# unattributed, or a run failed for another reason; vendor-only findings are listed, exit 0.
set -euo pipefail

usage() { sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=build
OUT=""
JOBS=6
TOOLS="memcheck racecheck initcheck synccheck"
ONLY=.
while (($#)); do
  case $1 in
    --build-dir) BUILD=${2:?--build-dir needs a folder}; shift 2 ;;
    --out) OUT=${2:?--out needs a folder}; shift 2 ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --tools) TOOLS=${2:?--tools needs a list}; shift 2 ;;
    --only) ONLY=${2:?--only needs a pattern}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "sanitize.sh: unknown option '$1'; see --help." >&2; exit 2 ;;
  esac
done

SANITIZER=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[[ -x $SANITIZER ]] || { echo "sanitize.sh: no compute-sanitizer at $SANITIZER; set COMPUTE_SANITIZER." >&2; exit 2; }

cd "$REPO"
if [[ ! -x $BUILD/bench/laptime ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target laptime >/dev/null
fi
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$BUILD/sanitize-$(date +%Y%m%d-%H%M%S)}
OUT=$(mkdir -p "$OUT/logs" && cd "$OUT" && pwd)

# Our kernels, by the names they are declared with in kernels/ and layers/.
perl -0777 -ne 'while (/__global__\s+(?:static\s+)?(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:void\s+)?(\w+)\s*\(/g) { print "$1\n" }' \
  kernels/*.cu kernels/*.cuh layers/*.cu layers/*.cuh 2>/dev/null | sort -u >"$OUT/our_kernels.txt"

run_one() {  # run_one TOOL MODEL PRECISION MODE
  local tool=$1 model=$2 precision=$3 mode=$4 weights extra=() opts=() bench_model=$2
  case $model in
    gpt2) weights=tests/golden/gpt2_tiny.safetensors; extra=(-b 2 -t 32) ;;
    # bf16 runs cuDNN's attention by default: our own flash kernel needs a run of its own
    # (head size 64, the only one the bf16 kernel takes: the golden tiny model has 16)
    gpt2flash) weights=$OUT/gpt2_tiny_hd64.safetensors; extra=(-b 2 -t 32 --attention flash); bench_model=gpt2 ;;
    resnet50) weights=tests/golden/resnet50_tiny.safetensors; extra=(-b 2) ;;
    # our fused stem kernel (conv + ReLU + max pool), bf16 only
    resnet50stem) weights=tests/golden/resnet50_tiny.safetensors; extra=(-b 2 --stem fused); bench_model=resnet50 ;;
  esac
  [[ $mode == graph ]] && extra+=(--graph)
  case $tool in
    memcheck) opts=(--leak-check full) ;;
    synccheck) [[ -n ${CUDA_BARRIERS:-} ]] && opts=(--num-cuda-barriers "$CUDA_BARRIERS") ;;
    racecheck) opts=(--racecheck-report analysis) ;;  # one report per race, not per access pair
  esac
  local log="$OUT/logs/$tool-$model-$precision-$mode.log"
  # ResNet-50 times every convolution candidate at build (hundreds of library kernels, slow
  # under a sanitizer): take the heuristic's plans instead. Our own kernels run either way.
  local env=()
  [[ $model == resnet50* ]] && env=(env LAPTIME_CONV_TUNE=off)
  local cmd=("${env[@]}" "$SANITIZER" --tool "$tool" "${opts[@]}" --print-limit 50
             "$BUILD/bench/laptime" bench "$bench_model" --weights "$weights" -p "$precision" -w 1 -n 2 "${extra[@]}")
  local start=$SECONDS rc=0
  { echo "+ ${cmd[*]}"; "${cmd[@]}"; } >"$log" 2>&1 || rc=$?
  echo "+ exit $rc after $((SECONDS - start)) s" >>"$log"
}
export -f run_one
export SANITIZER BUILD OUT CUDA_BARRIERS

# GPT-2 with head size 64 (2 layers, 2 heads, C=128), seeded, for the gpt2flash rows.
python3 weights/convert.py gpt2 --random --seed 1 --n-layer 2 --n-head 2 --n-embd 128 --vocab-size 512 \
  --n-ctx 64 --output "$OUT/gpt2_tiny_hd64.safetensors" >/dev/null
start=$SECONDS
for tool in $TOOLS; do
  for model in gpt2 resnet50; do
    for precision in fp32 tf32 bf16; do
      for mode in eager graph; do echo "$tool $model $precision $mode"; done
    done
  done
  for mode in eager graph; do echo "$tool gpt2flash bf16 $mode"; echo "$tool resnet50stem bf16 $mode"; done
done | { grep -E -- "$ONLY" || { echo "sanitize.sh: --only '$ONLY' matches no run." >&2; exit 2; }; } | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
echo "sanitize.sh: $(find "$OUT/logs" -name "*.log" | wc -l) runs in $((SECONDS - start)) s; logs in $OUT/logs" >&2

# The table. A finding is a block of the tool's report: its first line (what happened) and the
# indented lines under it (where: kernel, source line, host backtrace). It is ours when it
# names one of our kernels, vendor when it names cuBLASLt/cuDNN code, else unattributed.
python3 - "$OUT" <<'EOF'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
ours = [k for k in (out / "our_kernels.txt").read_text().split() if k]
ours_re = re.compile(r"\b(%s)\b" % "|".join(map(re.escape, ours))) if ours else None
vendor_re = re.compile(r"nvjet|cutlass|xmma|cublas|cudnn|sm\d+_.*(gemm|conv)|implicit_convolve|winograd|fft", re.I)
not_findings = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "LEAK SUMMARY", "RACECHECK SUMMARY",
                "Target application returned", "Saved host backtrace")
rows, bad, vendor_kernels = [], 0, set()
for log in sorted((out / "logs").glob("*.log")):
    tool, model, precision, mode = log.stem.split("-")
    text = log.read_text(errors="replace").splitlines()
    summary = next((l for l in text if "ERROR SUMMARY" in l),
                   next((l for l in text if "RACECHECK SUMMARY" in l), ""))
    m = re.search(r"(\d+) errors?", summary)
    errors = int(m.group(1)) if m else None
    rc = next((l.split()[2] for l in reversed(text) if l.startswith("+ exit ")), "?")
    blocks, cur = [], None
    for line in text:
        if not line.startswith("========="):
            continue
        body = line[len("========="):]
        if body.startswith(" ") and not body.startswith("  ") and body.strip() and \
                not any(body.strip().startswith(s) for s in not_findings):
            cur = [body.strip()]
            blocks.append(cur)
        elif cur is not None and body.startswith("  "):
            cur.append(body.strip())
    n_ours = n_vendor = n_other = 0
    for b in blocks:
        where = "\n".join(b)
        if ours_re and ours_re.search(where):
            n_ours += 1
        elif vendor_re.search(where):
            n_vendor += 1
            k = re.search(r"\w*(nvjet|cutlass|xmma|cublas|cudnn|gemm|conv)\w*", where, re.I)
            vendor_kernels.add(k.group(0) if k else b[0][:60])
        else:
            n_other += 1
    ok_rc = rc == "0"
    if n_ours or n_other or errors is None or not ok_rc:
        bad += 1
    rows.append((tool, model, precision, mode, "?" if errors is None else str(errors),
                 str(n_ours), str(n_vendor), str(n_other), rc))
head = ("tool", "model", "precision", "mode", "errors", "ours", "vendor", "unattributed", "exit")
widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in [head] + rows]
lines.append("")
lines.append(f"{len(rows)} runs; {bad} with findings in our kernels, unattributed findings, "
             "a missing summary or a non-zero exit")
if vendor_kernels:
    lines.append("vendor code with findings: " + ", ".join(sorted(vendor_kernels)))
(out / "summary.txt").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if bad else 0)
EOF
