#!/usr/bin/env bash
# A learner's own kernel file on a GPU machine, in one call (docs/KERNELS.md "Write your own"),
# with build/ built or carried (bench/laptime, its module, tests/test_lab_try). About 6 minutes on
# an H200; each step has its own time limit, and the summary says how long each took and whether
# what it checks held (OK / NOT OK lines):
#
#   1. `laptime peak --cache` into the run's folder (the roofs every lab run below reads)
#   2. the templates of layernorm, attention and quantize (`--template`), each run with `--try`
#      beside its whole ladder: the rung passes and is timed (lab/KERNEL_template.{json,txt})
#   3. the three wrong layernorms of kernels/lab/examples/wrong/: each FAILED with its worst
#      element, never timed, the ladder's v1 beside them passed (lab/layernorm_wrong.*)
#   4. the worked example: the template (v1) and kernels/lab/examples/layernorm_v2.cu beside the
#      ladder: v2 faster than the template (lab/layernorm_v1_v2.*)
#   5. what a learner's file must not do to the lab, each made from the template with sed: a
#      hang, a fault, a block of 0 threads, a grid of (2^31 - 1) x 65535 blocks, a write one row past the
#      output: each rung FAILED with its sentence, the lab exits 1 in bounded time
#      (lab/hostile_NAME.*)
#   6. nsys captures of `bench gpt2` and `bench gpt2 --kernel layernorm=layernorm_v2.cu` (and the
#      template), and `laptime diff` of each against the default: the LayerNorm rows move, the
#      header and JSON name the file and its SHA-256 (captures/, diff/)
#   7. `laptime kernels --command lab layernorm --try layernorm_v2.cu` run as printed (ncu), then
#      `laptime kernels` on its report: a row for the file's rung (ncu/)
#   8. `laptime lab --all`: every kernel's first and production versions and the summary (lab/all.*)
#   9. test_lab_try on the GPU (its GPU tests run here; they skip in CI)
#  10. summary.txt: the checks above, and the medians of the rungs (what docs/KERNELS.md's
#      measured outcome takes)
#
# Usage: scripts/lab-try-run.sh    ($OUT set by the device tool, else lab-try-run/ in the build)
# With the builds carried (scripts/dev/pack-carry.sh), carry this suite too:
#   TESTS="test_lab_try test_lab_kernels test_lab_cli" scripts/dev/pack-carry.sh
# Everything lands in $OUT/lab-try-run.tgz (the nsys captures' .nsys-rep and .sqlite left out for
# size) with $OUT/lab-try-summary.txt beside it; both are written after every step, so a call cut
# short still returns what it did. A failing step is recorded and the next one runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SCRIPT_NAME=lab-try-run.sh
# shellcheck source=scripts/lab-steps.sh
source "$PWD/scripts/lab-steps.sh"
EX=$PWD/kernels/lab/examples
R=/tmp/lab-try-run
rm -rf "$R" && mkdir -p "$R/lab" "$R/files" "$R/ncu" "$R/captures" "$R/diff" "$R/cache"
export LAPTIME_CACHE_DIR=$R/cache  # the compiled files' cache: what the run made, nothing older
S=$R/summary.txt
DEST=${OUT:-$PWD/build/lab-try-run}
mkdir -p "$DEST"
ARCHIVE=lab-try-run.tgz SUMMARY=lab-try-summary.txt
trap pack EXIT
# check WHAT PYTHON_EXPR FILE...: an OK or NOT OK line in the summary, from a few lines of Python
# over the lab's JSON reports (r[0], r[1], ... in the order given).
check() {
  local what=$1 expr=$2; shift 2
  python3 - "$what" "$expr" "$@" >>"$S" 2>&1 <<'PY'
import json, sys
what, expr, files = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    r = [json.load(open(f)) for f in files]
    rung = lambda rep, id: next(v for v in rep["versions"] if v["id"] == id)
    med = lambda rep, id, shape=0: next(t["median_us"] for t in rung(rep, id)["timings"] if t["shape"] == shape)
    ok = eval(expr)
except Exception as e:
    ok, what = False, f"{what} ({type(e).__name__}: {e})"
print(("  OK      " if ok else "  NOT OK  ") + what)
PY
  pack
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null; } >"$S" 2>&1

# 1. The roofs.
step peak 60 "$L" peak --cache "$R/peak.json"
PEAK=()
[[ -f $R/peak.json ]] && PEAK=(--peak "$R/peak.json")

# 2. The templates, as written, beside their ladders.
for k in layernorm attention quantize; do
  "$L" lab "$k" --template "$R/files/${k}_template.cu" >/dev/null
  step "lab_${k}_template" 120 "$L" lab "$k" --try "$R/files/${k}_template.cu" "${PEAK[@]}" \
    --json "$R/lab/${k}_template.json"
  cp "$R/lab_${k}_template.log" "$R/lab/${k}_template.txt"
  check "$k: the template passes its checks and is timed" \
    "rung(r[0], '${k}_template.cu')['status'] == 'passed' and rung(r[0], '${k}_template.cu')['timings']" \
    "$R/lab/${k}_template.json"
done

# 3. The wrong layernorms.
step lab_layernorm_wrong 120 "$L" lab layernorm --versions v1 --try "$EX/wrong/layernorm_off_by_one_row.cu" \
  --try "$EX/wrong/layernorm_unwritten_tail.cu" --try "$EX/wrong/layernorm_race.cu" "${PEAK[@]}" \
  --json "$R/lab/layernorm_wrong.json"
cp "$R/lab_layernorm_wrong.log" "$R/lab/layernorm_wrong.txt"
for f in off_by_one_row unwritten_tail race; do
  check "layernorm_$f.cu: FAILED, never timed" \
    "rung(r[0], 'layernorm_$f.cu')['status'] == 'FAILED' and not rung(r[0], 'layernorm_$f.cu')['timings']" \
    "$R/lab/layernorm_wrong.json"
done
check "the ladder's v1 passed beside the wrong files" "rung(r[0], 'v1')['status'] == 'passed'" \
  "$R/lab/layernorm_wrong.json"

# 4. The worked example: v1 (the template) to v2.
cp "$R/files/layernorm_template.cu" "$R/files/layernorm_v1.cu"
step lab_layernorm_v1_v2 120 "$L" lab layernorm --try "$R/files/layernorm_v1.cu" --try "$EX/layernorm_v2.cu" \
  "${PEAK[@]}" --json "$R/lab/layernorm_v1_v2.json"
cp "$R/lab_layernorm_v1_v2.log" "$R/lab/layernorm_v1_v2.txt"
check "layernorm_v2.cu beats the template" "med(r[0], 'layernorm_v2.cu') < med(r[0], 'layernorm_v1.cu')" \
  "$R/lab/layernorm_v1_v2.json"

# 5. What a file must not do to the lab: each a rung FAILED, the lab's exit 1, in bounded time.
T=$R/files/layernorm_template.cu
hostile() {  # hostile NAME SED_EXPR WHAT_THE_DETAIL_SAYS
  sed "$2" "$T" >"$R/files/$1.cu"
  step "lab_hostile_$1" 90 "$L" lab layernorm --versions none --timeout 3 --try "$R/files/$1.cu" \
    --json "$R/lab/hostile_$1.json"
  cp "$R/lab_hostile_$1.log" "$R/lab/hostile_$1.txt"
  check "$1.cu: FAILED (\"$3\")" \
    "rung(r[0], '$1.cu')['status'] == 'FAILED' and '$3' in ' '.join(c['detail'] for c in rung(r[0], '$1.cu')['checks'])" \
    "$R/lab/hostile_$1.json"
}
hostile hang 's/^  if (row >= rows) return;$/  volatile int spin = 1;\n  while (spin) {\n  }/' "passed --timeout 3 s"
hostile fault 's/^  if (row >= rows) return;$/  if (row >= rows) return;\n  out[(long long)1 << 40] = in[0];/' \
  "compute-sanitizer --tool memcheck"
hostile bad_shape 's/s.block = dim3(256);/s.block = dim3(0);/' "asked for a block of 0 x 1 x 1"
hostile huge_launch 's/s.grid = dim3(ceil_div(rows, 256));/s.grid = dim3(2147483647u, 65535u);/' "passed --timeout 3 s"
hostile stray_write 's/y\[c\] = to_scalar(/y[c + C] = to_scalar(/' "wrote past the end"
# The sanitizer command a fault prints, run as printed: it names the line.
grep -o "compute-sanitizer --tool memcheck [^;]*--once[^ ]*" "$R/lab/hostile_fault.txt" | head -1 >"$R/files/sanitize.sh"
[[ -s $R/files/sanitize.sh ]] && step sanitize_fault 120 bash "$R/files/sanitize.sh"

# 6. Into the model, and the diff.
capture() {
  local name=$1; shift
  step "capture_$name" 90 "$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none \
    --force-overwrite=true -o "$R/captures/$name" "$L" bench gpt2 -w 5 -n 30 --json "$R/captures/$name.json" "$@" &&
    step "export_$name" 60 "$NSYS" export --type sqlite --force-overwrite=true -o "$R/captures/$name.sqlite" \
      "$R/captures/$name.nsys-rep"
}
capture gpt2_default
capture gpt2_layernorm_v2 --kernel layernorm="$EX/layernorm_v2.cu"
capture gpt2_layernorm_v1 --kernel layernorm="$R/files/layernorm_v1.cu"
for v in v2 v1; do
  step "diff_layernorm_$v" 60 "$L" diff "$R/captures/gpt2_default.sqlite" "$R/captures/gpt2_layernorm_$v.sqlite" \
    --skip-warmup 5 --json "$R/diff/layernorm_$v.json" --svg "$R/diff/layernorm_$v.svg"
  cp "$R/diff_layernorm_$v.log" "$R/diff/layernorm_$v.txt" 2>/dev/null
  grep -m1 '^Verdict' "$R/diff/layernorm_$v.txt" | sed 's/^/  /' >>"$S"
done
check "the bench's JSON names the file and its SHA-256" \
  "r[0]['config']['kernel_files'][0]['sha256'] == __import__('hashlib').sha256(open('$EX/layernorm_v2.cu','rb').read()).hexdigest()" \
  "$R/captures/gpt2_layernorm_v2.json"

# 7. ncu over the file's rung, as `laptime kernels --command` prints it.
(cd "$R/ncu" && "$L" kernels --command lab layernorm --try "$EX/layernorm_v2.cu" --binary "$L" >command.txt &&
  grep -m1 '^  ncu ' command.txt | sed 's/^  //' >command.sh)
step ncu_lab_layernorm_try 120 env PATH="$NCU_DIR:$PATH" bash -c "cd '$R/ncu' && bash command.sh"
step kernels_lab_layernorm_try 30 env PATH="$NCU_DIR:$PATH" "$L" kernels "$R/ncu/lab_layernorm.ncu-rep" \
  "${PEAK[@]}" --json "$R/ncu/lab_layernorm.kernels.json"
grep -q "layernorm_v2.cu" "$R/kernels_lab_layernorm_try.log" && echo "  OK      ncu's report has the file's rung" >>"$S" ||
  echo "  NOT OK  ncu's report has the file's rung" >>"$S"

# 8. Every kernel's first and production versions.
step lab_all 300 "$L" lab --all "${PEAK[@]}" --json "$R/lab/all.json"
cp "$R/lab_all.log" "$R/lab/all.txt"

# 9. The suite's GPU tests.
step test_lab_try 300 build/tests/test_lab_try
grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$R/test_lab_try.log" | sed 's/^/  /' >>"$S"

# 10. The rungs' medians.
python3 - "$R/lab" >>"$S" 2>&1 <<'PY'
import glob, json, os, sys
print("\nkernel precision rung: cold median us [95%] hot us GB/s %DRAM vs-production vs-best (status)")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(path))
    if r.get("schema") != "laptime.lab/1":
        continue
    for v in r["versions"]:
        for t in v["timings"] or [None]:
            if t is None:
                print(f'  {r["kernel"]} {r["precision"]} {v["id"]}: {v["status"]}')
                continue
            pct = lambda x: "-" if x is None else f"{x:.1f}%"
            x = lambda y: "-" if y is None else f"{y:.2f}x"
            print(f'  {r["kernel"]} {r["precision"]} {v["id"]}{"*" if v["production"] else ""} '
                  f'[{r["shapes"][t["shape"]]["label"]}]: {t["median_us"]:.2f} [{t["ci95_us"][0]:.2f}, '
                  f'{t["ci95_us"][1]:.2f}] hot {t["hot"]["median_us"]:.2f} {t["gbps"]:.0f} GB/s '
                  f'{pct(t["dram_pct"])} {x(t["vs_production"])} {x(t["vs_best"])} ({v["status"]})')
PY
pack
