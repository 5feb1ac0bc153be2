#!/usr/bin/env bash
# laptime lab on a GPU machine, in one call (issue 27; docs/KERNELS.md), with build/ built
# (bench/laptime, its module, tests/test_lab_*). About 3 minutes on an H200; each step has its
# own time limit, and the summary says how long each took:
#
#   1. `laptime peak --cache` into the run's folder (the roofs every lab run below reads)
#   2. `laptime lab --list --json`
#   3. every kernel in its default precision (bf16, or fp8 for quantize and amax), and the attention
#      core in fp32 too (its production differs there), every version: lab/KERNEL_PRECISION.{json,txt}
#      (fp32's checks of every kernel are in step 4's tests)
#   4. the lab's GPU tests (every version against the reference, the --kernel swap-in) and its CLI tests
#   5. `laptime kernels --command lab layernorm` run exactly as printed (ncu, one call a version),
#      then `laptime kernels` on the report it wrote, with the layer costs found beside it
#   6. nsys captures of `bench gpt2` and `bench gpt2 --kernel layernorm=v1`, and `laptime diff`
#      of the two (the LayerNorm rows' change with its interval)
#   7. summary.txt: per kernel, precision and version, the median, interval, GB/s and % of the
#      roofs (what docs/KERNELS.md's measured table takes)
#
# Usage: scripts/lab-run.sh            ($OUT set by the device tool, else lab-run/ in the build)
# Everything lands in $OUT/lab-run.tgz (the nsys captures' .nsys-rep and .sqlite left out for
# size) with $OUT/lab-summary.txt beside it; both are written after every step, so a cut-short
# call still returns what it did. A failing step is recorded and the next one runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SCRIPT_NAME=lab-run.sh
# shellcheck source=scripts/lab-steps.sh
source "$PWD/scripts/lab-steps.sh"
R=/tmp/lab-run
rm -rf "$R" && mkdir -p "$R/lab" "$R/tests" "$R/ncu" "$R/captures" "$R/diff"
S=$R/summary.txt
DEST=${OUT:-$PWD/build/lab-run}
mkdir -p "$DEST"
ARCHIVE=lab-run.tgz SUMMARY=lab-summary.txt
trap pack EXIT
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u; } >"$S" 2>&1

# 1-2. The roofs, and the registry.
step peak 60 "$L" peak --cache "$R/peak.json"
PEAK=()
[[ -f $R/peak.json ]] && PEAK=(--peak "$R/peak.json")
step list 30 "$L" lab --list --json "$R/lab/list.json"

# 3. Every kernel in its default precision (attention in fp32 too), every version.
while read -r kernel precision; do
  step "lab_${kernel}_$precision" 60 "$L" lab "$kernel" -p "$precision" "${PEAK[@]}" \
    --json "$R/lab/${kernel}_$precision.json"
  cp "$R/lab_${kernel}_$precision.log" "$R/lab/${kernel}_$precision.txt"
done < <(python3 -c '
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    for p in k["precisions"][:1] + (["fp32"] if k["name"] == "attention" else []):
        print(k["name"], p)' "$R/lab/list.json")

# 4. The lab's tests on the GPU (and its CLI tests with a GPU present).
step test_lab_kernels 150 build/tests/test_lab_kernels
step test_lab_cli 60 build/tests/test_lab_cli
grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$R"/test_lab_*.log | sed 's/^/  /' >>"$S"

# 5. ncu over one ladder, as `laptime kernels --command` prints it, then the report by version.
(cd "$R/ncu" && "$L" kernels --command lab layernorm --binary "$L" >command.txt &&
  grep -m1 '^  ncu ' command.txt | sed 's/^  //' >command.sh)
step ncu_lab_layernorm 90 env PATH="$NCU_DIR:$PATH" bash -c "cd '$R/ncu' && bash command.sh"
step kernels_lab_layernorm 30 env PATH="$NCU_DIR:$PATH" "$L" kernels "$R/ncu/lab_layernorm.ncu-rep" "${PEAK[@]}" \
  --json "$R/ncu/lab_layernorm.kernels.json"

# 6. The whole model with LayerNorm v1 against the default, captured and diffed.
capture() {
  local name=$1; shift
  step "capture_$name" 60 "$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none \
    --force-overwrite=true -o "$R/captures/$name" "$L" bench gpt2 -w 5 -n 30 --json "$R/captures/$name.json" "$@" &&
    step "export_$name" 60 "$NSYS" export --type sqlite --force-overwrite=true -o "$R/captures/$name.sqlite" \
      "$R/captures/$name.nsys-rep"
}
capture gpt2_default
capture gpt2_layernorm_v1 --kernel layernorm=v1
step diff_layernorm_v1 60 "$L" diff "$R/captures/gpt2_default.sqlite" "$R/captures/gpt2_layernorm_v1.sqlite" \
  --skip-warmup 5 --json "$R/diff/layernorm_v1.json" --svg "$R/diff/layernorm_v1.svg"
cp "$R/diff_layernorm_v1.log" "$R/diff/layernorm_v1.txt" 2>/dev/null
grep -m1 '^Verdict' "$R/diff/layernorm_v1.txt" | sed 's/^/  /' >>"$S"

# 7. The measured table.
python3 - "$R/lab" >>"$S" 2>&1 <<'PY'
import glob, json, os, sys
print("\nkernel precision version: median us [95%] GB/s %DRAM %compute vs-production (status)")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*_*.json"))):
    if path.endswith("list.json"):
        continue
    r = json.load(open(path))
    for v in r["versions"]:
        rows = v["timings"] or [None]
        for t in rows:
            if t is None:
                print(f'  {r["kernel"]} {r["precision"]} {v["id"]}: {v["status"]} {v["refusal"]}')
                continue
            shape = r["shapes"][t["shape"]]["label"]
            pct = lambda x: "-" if x is None else f"{x:.1f}%"
            vs = "-" if t["vs_production"] is None else f'{t["vs_production"]:.2f}x'
            print(f'  {r["kernel"]} {r["precision"]} {v["id"]}{"*" if v["production"] else ""} [{shape}]: '
                  f'{t["median_us"]:.2f} [{t["ci95_us"][0]:.2f}, {t["ci95_us"][1]:.2f}] {t["gbps"]:.0f} GB/s '
                  f'{pct(t["dram_pct"])} {pct(t["compute_pct"])} {vs} ({v["status"]})')
PY
pack
