#!/usr/bin/env bash
# Are two laptime binaries the same bench on a GPU (the bench rows of byte-identical.sh's host
# reports), and do the GPU suites pass? For a change that must not move what the bench does:
#
#   scripts/dev/bench-identical.sh OLD_BIN [BUILD_DIR]
#
#   OLD_BIN    the laptime from before the change (default: $OLD_LAPTIME); put it inside the build
#              folder (ignored) so that carrying the build brings it
#   BUILD_DIR  the new build (default: build), with bench/laptime and the suites test_gpt2_layers,
#              test_resnet50_layers, test_gpt2_reference, test_resnet50_reference,
#              test_layer_costs, test_bench_report
#
# 1. In the background, the GPU suites, split as `device-call.sh check` splits them: test_gpt2_layers
#    and test_resnet50_layers per precision and the rest, test_gpt2_reference,
#    test_resnet50_reference, test_layer_costs (the built models' costs against the committed
#    sidecars, byte for byte), test_bench_report.
# 2. Meanwhile, the same bench rows with both binaries, old and new side by side, each in a
#    folder of its own so both print the same relative paths: GPT-2 (B=8 T=1024) and ResNet-50
#    (B=32), bf16 / tf32 / fp32, eager and --graph, every row with --trace t.sqlite and
#    --json r.json (so each writes t.layers.json and r.layers.json). ResNet-50's rows choose
#    their convolutions untimed (LAPTIME_CONV_TUNE=off), so that the plan lines, the workspace
#    and the trace's kernels are deterministic and compared exactly; one more ResNet-50 row
#    times them (the tuned path, through core/timing.h) and one GPT-2 row times its GEMMs
#    (LAPTIME_GPT2_GEMM=timed): there what a timing chose is masked too. fp8 rows (GPT-2,
#    ResNet-50 B=32) force e4m3 (LAPTIME_FP8_GEMM=fp8) so that the choice and the sidecars are
#    deterministic; their plan lines, which carry measured milliseconds, are masked. Three small
#    GPT-2 rows run the pitfalls (sync, pageable, alloc), one writes --json - (standard output),
#    and `laptime peak --force` runs once a side (its lines and file with every number masked:
#    the format must not move, the ceilings may).
#    Each row is compared by compare_py below: text and JSON with only what measures time
#    masked (its docstring lists every masked field), the sidecars byte for byte, the trace's
#    NVTX range and kernel names with their counts, the exit status.
#
# Takes about 3 minutes on one H200 (the suites and the rows share the GPU; nothing here is a
# timing). Results: $OUT/bench-identical.tgz (every log, output and diff) and
# $OUT/bench-identical.txt; without $OUT, $RESULTS (default /tmp/bench-identical). Exit 1 when a
# row differs or a suite fails.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
OLD=${1:-${OLD_LAPTIME:-}}
BUILD=${2:-build}
[[ -x $OLD ]] || { echo "bench-identical: no old laptime at '$OLD' (pass it as the first argument)." >&2; exit 2; }
[[ -x $BUILD/bench/laptime ]] || { echo "bench-identical: no $BUILD/bench/laptime; build it first." >&2; exit 2; }
OLD=$(readlink -f "$OLD")
NEW=$(readlink -f "$BUILD/bench/laptime")
T=$(readlink -f "$BUILD/tests")
R=${RESULTS:-/tmp/bench-identical}
rm -rf "$R"
mkdir -p "$R/rows" "$R/suites"
SUMMARY=$R/summary.txt
export LAPTIME_SOURCE_DIR=$REPO PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${NEW%/bench/laptime}/lib:${LD_LIBRARY_PATH:-}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  echo "old: $OLD"; echo "new: $NEW ($(git log -1 --format='%h %s' 2>/dev/null | cut -c1-80))"; } >"$SUMMARY"
pack() { [[ -n ${OUT:-} ]] && { tar czf "$OUT/bench-identical.tgz" -C "$R" . 2>/dev/null; cp "$SUMMARY" "$OUT/bench-identical.txt"; }; true; }
status=0

# compare.py ROWDIR [--tuned-conv] [--json-stdout] [--peak]: one row's old/ and new/ side by side (written
# into $R once; its docstring says what is masked and why).
cat >"$R/compare.py" <<'PY'
"""Compares one bench row run by two laptime binaries (scripts/dev/bench-identical.sh).

    compare.py ROWDIR [--tuned-conv] [--json-stdout] [--peak]

ROWDIR holds old/ and new/, each with stdout, stderr, rc and the files the run wrote (r.json,
t.sqlite, their .layers.json sidecars). What must be equal is compared after masking what
measures time, and only that:

  text (stdout)  every lap, the statistics line, throughput, TFLOP/s, the enqueue line, the
                 "device in use" figure, the lap time, and the milliseconds a timed GEMM build
                 took ("GEMM algorithms timed at build (5 shapes, <ms> ms)"). With --tuned-conv
                 (ResNet-50 with its convolutions chosen by timing) also each plan line after the
                 convolution's name, the build line and the workspace: the engine a timing
                 picks is itself a measurement. Nothing else: the header, the variant, the
                 files written, the GFLOP count, the weights and activations stay exact.
  JSON           the same fields: iterations[].lap_ms, steady_ms, throughput.items_per_s,
                 tflops, enqueue_ms, memory_bytes.device_in_use, config.variant's build
                 milliseconds; with --tuned-conv config.plans (after each name) and
                 memory_bytes.workspace.
  sidecars       every *.layers.json byte for byte, unmasked.
  trace          t.sqlite: the NVTX range names with their counts and the kernel names with
                 their counts (no times), when the row is not --tuned-conv.
  stderr         seconds and candidate counts masked; a difference is a note, not a failure,
                 unless --json-stdout (then stderr carries the text report and is compared
                 like stdout).
  exit status    equal.

--peak: the row is `laptime peak --cache p.json`: its text and p.json with every number (and
the "measured" date line) masked, so that what is compared is the format, not the ceilings.

Prints one line (OK, or FAIL and what differs) and writes ROWDIR/diff.txt; exits 1 when a check fails.
"""
import collections
import difflib
import json
import re
import sqlite3
import sys
from pathlib import Path

M = "<masked>"


def mask_text(text, tuned):
    out = []
    for line in text.splitlines():
        line = re.sub(r"^(  [ \d]{5} (?:warmup|      ) )\s*[\d.]+$", r"\1" + M, line)
        line = re.sub(r"^(  steady state over \d+ iterations \(ms\):).*$", r"\1 " + M, line)
        line = re.sub(r"^(  throughput  )\d+( \w+/s)$", r"\1" + M + r"\2", line)
        line = re.sub(r"^(  compute     [\d.]+ GFLOP per forward, )[\d.]+( TFLOP/s achieved)$", r"\1" + M + r"\2", line)
        line = re.sub(r"^  host        .*$", "  host        " + M, line)
        line = re.sub(r"(device in use )[\d.]+( MiB)", r"\1" + M + r"\2", line)
        line = re.sub(r"^(lap time: )[\d.]+( ms .*)$", r"\1" + M + r"\2", line)
        line = re.sub(r"(GEMM algorithms timed at build \(\d+ shapes, )\d+( ms\))", r"\1" + M + r"\2", line)
        if line.startswith(("  plans       ", "              ")):
            line = mask_plan(line[:14], line[14:], tuned)
        if tuned:
            line = re.sub(r"(workspace )[\d.]+( MiB)", r"\1" + M + r"\2", line)
        out.append(line)
    return "\n".join(out) + "\n"


def mask_plan(prefix, plan, tuned):
    if plan.startswith("build: "):  # "build: N distinct ... timed, S s": seconds always, the rest when timed
        return prefix + ("build: " + M if tuned else re.sub(r", [\d.]+ s$", ", " + M + " s", plan))
    if not tuned:
        return prefix + plan
    name = re.match(r"[^: ]+", plan)
    return prefix + (name.group(0) if name else "") + " " + M


def mask_stderr(text):
    text = re.sub(r"\d+\.\d+ s\b", M + " s", text)
    return re.sub(r"\d+ candidates timed", M + " candidates timed", text)


def mask_json(j, tuned):
    for it in j.get("iterations", []):
        it["lap_ms"] = M
    for key in ("steady_ms", "tflops", "enqueue_ms"):
        if key in j:
            j[key] = M
    if "throughput" in j:
        j["throughput"]["items_per_s"] = M
    mem = j.get("memory_bytes", {})
    if "device_in_use" in mem:
        mem["device_in_use"] = M
    if tuned and "workspace" in mem:
        mem["workspace"] = M
    cfg = j.get("config", {})
    if "variant" in cfg:
        cfg["variant"] = re.sub(r"(GEMM algorithms timed at build \(\d+ shapes, )\d+( ms\))", r"\1" + M + r"\2",
                                cfg["variant"])
    if "plans" in cfg:
        cfg["plans"] = [mask_plan("", p, tuned) for p in cfg["plans"]]
    return j


def mask_numbers(text):
    text = re.sub(r"^(  measured     ).*$", r"\1" + M, text, flags=re.M)
    return re.sub(r" *\d+(?:\.\d+)?", " " + M, text)  # the spaces too: %8.1f pads by the value


def mask_peak_json(j):
    if isinstance(j, dict):
        return {k: (M if k == "measured" else mask_peak_json(v)) for k, v in j.items()}
    if isinstance(j, list):
        return [mask_peak_json(v) for v in j]
    return M if isinstance(j, (int, float)) and not isinstance(j, bool) else j


def trace_counts(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = collections.Counter(
        row[0] for row in db.execute(
            'SELECT COALESCE(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id '
            'WHERE e."end" IS NOT NULL'))
    kernels = collections.Counter(
        row[0] for row in db.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.shortName = s.id"))
    return ranges, kernels


def unified(a, b, what):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"old/{what}", f"new/{what}", n=1))


def main():
    row = Path(sys.argv[1])
    tuned = "--tuned-conv" in sys.argv
    json_stdout = "--json-stdout" in sys.argv
    peak = "--peak" in sys.argv
    old, new = row / "old", row / "new"
    failed, notes, diffs = [], [], []

    def read(side, name):
        p = side / name
        return p.read_text(errors="replace") if p.exists() else None

    rc_old, rc_new = read(old, "rc"), read(new, "rc")
    if rc_old != rc_new:
        failed.append(f"exit {str(rc_old).strip()} vs {str(rc_new).strip()}")
    elif (rc_new or "").strip() != "0":
        failed.append(f"both exit {str(rc_new).strip()}")

    text_name = "stderr" if json_stdout else "stdout"  # with --json -, the text report is on stderr
    mask = mask_numbers if peak else lambda t: mask_text(t, tuned)
    a, b = mask(read(old, text_name) or ""), mask(read(new, text_name) or "")
    if a != b:
        failed.append("text")
        diffs.append(unified(a, b, text_name))
    if not json_stdout:
        a, b = mask_stderr(read(old, "stderr") or ""), mask_stderr(read(new, "stderr") or "")
        if a != b:
            notes.append("stderr")
            diffs.append(unified(a, b, "stderr"))

    json_name = "stdout" if json_stdout else "p.json" if peak else "r.json"
    mask_j = mask_peak_json if peak else lambda j: mask_json(j, tuned)
    ja, jb = read(old, json_name), read(new, json_name)
    try:
        a = json.dumps(mask_j(json.loads(ja)), indent=1, sort_keys=True)
        b = json.dumps(mask_j(json.loads(jb)), indent=1, sort_keys=True)
        if a != b:
            failed.append("json")
            diffs.append(unified(a, b, json_name))
    except (TypeError, ValueError):  # absent (None) or not JSON: the run did not get that far
        failed.append(f"no JSON report in {json_name}")

    sidecars = sorted(p.name for p in old.glob("*.layers.json"))
    if sidecars != sorted(p.name for p in new.glob("*.layers.json")):
        failed.append("sidecar names")
    for name in sidecars:
        if (new / name).exists() and (old / name).read_bytes() != (new / name).read_bytes():
            failed.append(name)
            diffs.append(unified((old / name).read_text(), (new / name).read_text(), name))

    if (old / "t.sqlite").exists() or (new / "t.sqlite").exists():
        if not ((old / "t.sqlite").exists() and (new / "t.sqlite").exists()):
            failed.append("trace missing")
        elif not tuned:
            (ra, ka), (rb, kb) = trace_counts(old / "t.sqlite"), trace_counts(new / "t.sqlite")
            if ra != rb:
                failed.append("trace ranges")
                diffs.append(unified(json.dumps(ra, indent=1, sort_keys=True), json.dumps(rb, indent=1, sort_keys=True),
                                     "NVTX ranges"))
            if ka != kb:
                failed.append("trace kernels")
                diffs.append(unified(json.dumps(ka, indent=1, sort_keys=True), json.dumps(kb, indent=1, sort_keys=True),
                                     "kernels"))

    (row / "diff.txt").write_text("".join(diffs))
    checked = f"text, json, {len(sidecars)} sidecar(s)" + (", trace" if (old / "t.sqlite").exists() and not tuned else "")
    status = "OK" if not failed else "FAIL: " + ", ".join(failed)
    print(f"{row.name}: {status} ({checked})" + (f"; note: {', '.join(notes)} differ, see diff.txt" if notes else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
PY

# 1. The suites, in the background.
suite() {  # suite NAME BINARY [gtest args...]
  local name=$1
  shift
  (timeout -k 5 300 "$@" >"$R/suites/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/suites/rc.txt") &
}
for p in fp32 tf32 bf16; do
  suite gpt2_layers_$p "$T/test_gpt2_layers" --gtest_filter="*/$p"
  suite resnet50_layers_$p "$T/test_resnet50_layers" --gtest_filter="*/$p"
done
suite gpt2_layers_rest "$T/test_gpt2_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
suite resnet50_layers_rest "$T/test_resnet50_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
suite gpt2_reference "$T/test_gpt2_reference"
suite resnet50_reference "$T/test_resnet50_reference"
suite layer_costs "$T/test_layer_costs"
suite bench_report "$T/test_bench_report"

# 2. The rows: row NAME [--tuned-conv] [--json-stdout] [--peak] -- [VAR=value...] bench|peak ARGS...
row() {
  local name=$1 flags=()
  shift
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done
  shift
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  local side bin pids=()
  for side in old new; do  # side by side: correctness only, nothing here is a timing
    bin=$OLD
    [[ $side == new ]] && bin=$NEW
    mkdir -p "$R/rows/$name/$side"
    (cd "$R/rows/$name/$side" && env "${envs[@]}" timeout -k 5 120 "$bin" "$@" >stdout 2>stderr; echo $? >rc) &
    pids+=($!)
  done
  wait "${pids[@]}"  # these two only: the suites run on
  python3 "$R/compare.py" "$R/rows/$name" "${flags[@]}" | tee -a "$SUMMARY"
  ((PIPESTATUS[0] == 0)) || status=1
  pack
}
ROWS=(--warmup 1 --iters 3 --nvtx layer --trace t.sqlite --json r.json)
TUNE_OFF=LAPTIME_CONV_TUNE=off
for p in bf16 tf32 fp32; do
  row gpt2_${p}_eager -- bench gpt2 --precision $p "${ROWS[@]}"
  row gpt2_${p}_graph -- bench gpt2 --precision $p --graph "${ROWS[@]}"
  row resnet50_${p}_b32_eager -- $TUNE_OFF bench resnet50 --precision $p --batch 32 "${ROWS[@]}"
  row resnet50_${p}_b32_graph -- $TUNE_OFF bench resnet50 --precision $p --batch 32 --graph "${ROWS[@]}"
done
row gpt2_bf16_timed_gemm -- LAPTIME_GPT2_GEMM=timed bench gpt2 --precision bf16 "${ROWS[@]}"
row resnet50_bf16_b32_tuned --tuned-conv -- bench resnet50 --precision bf16 --batch 32 "${ROWS[@]}"
row resnet50_bf16_b32_cudnnstem -- $TUNE_OFF bench resnet50 --precision bf16 --batch 32 --stem cudnn "${ROWS[@]}"
for pit in sync pageable alloc; do
  row gpt2_pitfall_$pit -- bench gpt2 --batch 1 --seq 64 --pitfall $pit --warmup 1 --iters 2 --nvtx layer \
    --trace t.sqlite --json r.json
done
row gpt2_json_stdout --json-stdout -- bench gpt2 --batch 1 --seq 64 --warmup 1 --iters 2 --json -
FP8=LAPTIME_FP8_GEMM=fp8
row gpt2_fp8_eager --tuned-conv -- $FP8 bench gpt2 --precision fp8 "${ROWS[@]}"
row resnet50_fp8_b32_graph --tuned-conv -- $FP8 $TUNE_OFF bench resnet50 --precision fp8 --batch 32 --graph "${ROWS[@]}"
row peak --peak -- peak --force --cache p.json
echo "rows done at ${SECONDS}s" >>"$SUMMARY"

# The suites' verdicts.
wait
sort "$R/suites/rc.txt" >>"$SUMMARY"
grep -q 'rc=[^0]' "$R/suites/rc.txt" && status=1
for f in "$R"/suites/*.log; do
  echo "  ${f##*/}: $(grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$f" | tr '\n' ' ')" >>"$SUMMARY"
done
grep -hE '^\[  FAILED  \] [A-Za-z]' "$R"/suites/*.log | sort -u | head -20 >>"$SUMMARY"
echo "done at ${SECONDS}s, exit $status" >>"$SUMMARY"
pack
cat "$SUMMARY"
exit "$status"
