#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# shellcheck disable=SC2317  # the parts run through "part_$part", which shellcheck cannot follow
# The traces the tests and the docs read, captured on a GPU machine with Nsight Systems (and
# PyTorch, Nsight Compute where said), from the carried build (scripts/dev/device-call.sh pack):
#
#   scripts/dev/captures.sh PART [ARGS...]
#
#   pitfalls [-- BENCH_ARGS]  `laptime bench gpt2` under nsys, clean and with each pitfall:
#               bench_gpt2_clean, pitfall_sync_blocking (--pitfall sync on the created stream),
#               pitfall_sync_blocking_default_stream (the same on the legacy stream), pitfall_pageable;
#               each NAME.sqlite shrunk to the tables laptime reads (tests/fixtures/lesson/
#               shrink_capture.py), nsys stats' three CSVs, the bench's log and `laptime analyze`;
#               then the laps side by side (the bench's median, the analyzer's lap and its estimate
#               without the syncs). Default BENCH_ARGS: gpt2 --warmup 2 --iters 5 at B8 T1024, where
#               the GPU bounds the clean lap (tests/test_trace_pitfalls.cpp compares the two). For
#               tests/fixtures/nsys/.
#   processes   sync_gpt2 / sync_resnet50 (--pitfall sync: the verdict must name the syncs),
#               two_gpt2 (two `laptime bench` processes in one capture: two ranks of one job),
#               gpt2_resnet50 (two programs); each exported, nsys stats' CSVs, analyzed. tests/fixtures/nsys/.
#   overlap     two loops at the same time on one GPU (2000 iterations each, against ~0.4 s of
#               start): two_gpt2_overlap, gpt2_resnet50_overlap; analyze (the shared-GPU note)
#               against tests/fixtures/process_reference.py over the same SQLite, and a diff of the
#               two ranks (--pid-before/--pid-after). The exports (~100 MB) stay on the device.
#   graph       laptime's own CUPTI capture of `bench resnet50 -b 32 --graph --trace` (tests/
#               fixtures/graph/capture.sh, trimmed of the setup's tuning graphs, under 2 MB, with
#               its layer costs) and the node-level nsys capture of the same run; the files put in
#               tests/fixtures/graph of this copy, reference.py rerun, analyzed and checked
#               (GPU-bound, a per-layer table, the roofline, test_trace_graph), and GPT-2 B1 eager
#               and --graph through CUPTI with their diff. CASES=all re-captures every case of
#               capture.sh (nsys default and node-level graph traces, PyTorch's, graph_cases.cu).
#               fixtures/ and reports/ come back.
#   compiled    tests/fixtures/compiled/capture.sh: a torch.compile(mode="reduce-overhead") ResNet-50
#               loop (default and node-level graph traces), trimmed and shrunk, its independent
#               reference (reference.py) and `laptime analyze` of each; fixtures/ comes back: copy it
#               into tests/fixtures/compiled/, then ctest -R 'Compiled|compiled'.
#   ncu         tests/fixtures/ncu/capture.sh: the Nsight Compute CSVs and .ncu-rep of the fixtures.
#   ncu-sidecars  the layer costs of the shapes ncu/capture.sh profiled (fixtures/: commit them
#               under tests/fixtures/ncu/, then run its ncu_layers.py), test_ncu with the real ncu,
#               and docs/PROFILING.md section 13's walk-through run as printed (walk/: `laptime
#               kernels --command` under ncu, its time against the estimate, the report read with
#               `laptime peak`'s ceilings: walk/peak_h200.json is tests/fixtures/ncu/peak_h200.json).
#   diff [--iters N] [--warmup N]  docs/PROFILING.md section 10: GPT-2 and ResNet-50 in bf16 captured
#               twice (A, A2: the calibration, whose intervals are the noise floor), with --graph
#               (--cuda-graph-trace=node), and PyTorch eager at --nvtx layer; the diffs A vs A2,
#               eager vs graph, torch vs laptime as text, JSON and SVG (defaults: 30 iterations, 5
#               warm-up; diffs pass --skip-warmup N on both sides: PyTorch marks no warm-up).
#   kineto      tests/fixtures/kineto/capture_h200.py: the lesson's GPT-2 and ResNet-50 loops in PyTorch
#               under torch.profiler (steps, no_steps, graph, item; KINETO_MODELS, KINETO_SHAPES), each
#               inside its own nsys run, so that both profilers see the same steps (an NVTX range per
#               step, named as the profiler names it); each Kineto trace and each export analyzed and
#               compared (lap, busy, kernels and GPU time per step), `laptime diff` export -> Kineto.
#               A trace taken under nsys that holds no GPU work (CUPTI has one subscriber) is
#               captured again without it. traces/ and reports/ come back (the item pair's exports
#               shrunk and scrubbed); the other exports stay on the device.
#
# Everything lands under $RESULTS/PART (default /tmp/captures/PART), the log in summary.txt, packed
# after each capture into $OUT/captures-PART.tgz (the summary beside it as captures-PART.txt).
# BUILD names the build (build); NCU_DIR and NSYS_DIR the tools (the device image's Nsight
# Compute 2025.3.1 and the nsys inside it, with .nsys-deps/*.deb's libraries when carried).
# Exit 1 when a capture or a check failed.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
part=${1:-}
shift || true
case $part in
  pitfalls | processes | overlap | graph | compiled | ncu | ncu-sidecars | diff | kineto) ;;
  *) sed -n '4,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac
B=$(realpath -m "${BUILD:-build}")
L=$B/bench/laptime
R=${RESULTS:-/tmp/captures}/$part
mkdir -p "$R"
R=$(cd "$R" && pwd)
S=$R/summary.txt
: >"$S"
export LAPTIME_SOURCE_DIR=$REPO PYTHONUNBUFFERED=1
# shellcheck source=scripts/dev/device-call.sh
source "$REPO/scripts/dev/device-call.sh" --env "$B/lib"  # LD_LIBRARY_PATH, NCU_DIR, NSYS_DIR, both on PATH
[[ -x $L ]] || { echo "captures: no $L: carry the build (scripts/dev/device-call.sh pack)." >&2; exit 2; }
if [[ $part == ncu* ]]; then
  command -v ncu >/dev/null || { echo "captures: no ncu (NCU_DIR=$NCU_DIR)." >&2; exit 2; }
else
  command -v nsys >/dev/null || { echo "captures: no nsys (NSYS_DIR=$NSYS_DIR)." >&2; exit 2; }
fi
status=0
pack() { [[ -n ${OUT:-} ]] && { tar czf "$OUT/captures-$part.tgz" -C "$R" . 2>/dev/null; cp "$S" "$OUT/captures-$part.txt"; }; true; }
pass() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; status=1; }
# stats NAME DIR: nsys stats' three reports of DIR/NAME.sqlite as CSV beside it.
stats() {
  nsys stats --force-export=false -q --format csv --report nvtx_sum,cuda_api_sum,cuda_gpu_kern_sum \
    -o "$2/$1" "$2/$1.sqlite" >/dev/null 2>&1
}
# scrub_trace FILE: FILE without the capturing machine's environment, host and paths (`laptime
# scrub`), in place: every trace that may be committed goes through it.
scrub_trace() {
  "$L" scrub "$1" "$1.scrubbed" >/dev/null && mv "$1.scrubbed" "$1" || fail "scrub $1"
}
# nsys_capture NAME DIR [NSYS OPTIONS --] COMMAND...: DIR/NAME.sqlite (the export), the
# command's output in DIR/NAME.log; the .nsys-rep deleted. NSYS_TRACE: --trace (cuda,nvtx,osrt).
nsys_capture() {
  local name=$1 dir=$2 extra=()
  shift 2
  if [[ " $* " == *" -- "* ]]; then
    while [[ $1 != -- ]]; do extra+=("$1"); shift; done
    shift
  fi
  nsys profile --trace="${NSYS_TRACE:-cuda,nvtx,osrt}" --sample=none --cpuctxsw=none --force-overwrite=true "${extra[@]}" \
    -o "$dir/$name" "$@" >"$dir/$name.log" 2>&1 &&
    nsys export --type sqlite --force-overwrite=true -o "$dir/$name.sqlite" "$dir/$name.nsys-rep" >>"$dir/$name.log" 2>&1
  local rc=$?
  rm -f "$dir/$name.nsys-rep"
  [[ $rc == 0 ]] && pass "capture $name" || fail "capture $name (log: $dir/$name.log)"
  pack
  return "$rc"
}

# --- pitfalls -----------------------------------------------------------------------------------
part_pitfalls() {
  local args=(gpt2 --warmup 2 --iters 5) name
  [[ ${1:-} == -- ]] && { shift; args=("$@"); }
  for name in bench_gpt2_clean pitfall_sync_blocking pitfall_sync_blocking_default_stream pitfall_pageable; do
    local extra=()
    case $name in
      pitfall_sync_blocking) extra=(--pitfall sync) ;;
      pitfall_sync_blocking_default_stream) extra=(--pitfall sync --stream default) ;;
      pitfall_pageable) extra=(--pitfall pageable) ;;
    esac
    echo "== $name: laptime bench ${args[*]} ${extra[*]}"
    NSYS_TRACE=cuda,nvtx nsys_capture "$name" "$R" -- "$L" bench "${args[@]}" "${extra[@]}" || continue
    stats "$name" "$R"
    python3 tests/fixtures/lesson/shrink_capture.py "$R/$name.sqlite" "$R/$name.sqlite"
    scrub_trace "$R/$name.sqlite"
    "$L" analyze "$R/$name.sqlite" --json "$R/$name.analyze.json" >"$R/$name.analyze.txt" 2>&1 || true
  done
  echo
  printf '%-38s %12s %12s %14s %16s\n' case "bench lap" "analyze lap" "without syncs" "host wait/iter"
  local lap alap without wait
  for name in bench_gpt2_clean pitfall_sync_blocking pitfall_sync_blocking_default_stream pitfall_pageable; do
    lap=$(sed -n 's/^lap time: \([0-9.]*\) ms.*/\1/p' "$R/$name.log" 2>/dev/null || true)
    read -r alap without wait < <(python3 - "$R/$name.analyze.json" <<'PY' 2>/dev/null || echo "- - -"
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
}

# --- processes ----------------------------------------------------------------------------------
part_processes() {
  local n two=(-b 1 -t 128 -w 3 -n 30)
  nsys_capture sync_gpt2 "$R" -- "$L" bench gpt2 -b 8 -w 2 -n 8 --pitfall sync
  nsys_capture sync_resnet50 "$R" -- "$L" bench resnet50 -b 32 -w 2 -n 8 --pitfall sync
  nsys_capture two_gpt2 "$R" -- bash -c "$L bench gpt2 ${two[*]} & $L bench gpt2 ${two[*]} & wait"
  nsys_capture gpt2_resnet50 "$R" -- bash -c "$L bench gpt2 ${two[*]} & $L bench resnet50 -b 8 -w 3 -n 30 & wait"
  for n in sync_gpt2 sync_resnet50 two_gpt2 gpt2_resnet50; do
    [[ -f $R/$n.sqlite ]] || continue
    stats "$n" "$R"
    scrub_trace "$R/$n.sqlite"
    "$L" analyze "$R/$n.sqlite" >"$R/$n.analyze.txt" 2>&1
    echo "$n analyze rc=$? ($(du -h "$R/$n.sqlite" | cut -f1))"
  done
}

# --- overlap ------------------------------------------------------------------------------------
part_overlap() {
  local W n pids
  W=$(mktemp -d -t overlap.XXXXXX)  # the exports stay here, on the device
  trap 'rm -rf "$W"' EXIT
  for n in two_gpt2_overlap gpt2_resnet50_overlap; do
    local second="$L bench gpt2 -b 1 -t 128 -w 3 -n 2000"
    [[ $n == gpt2_resnet50_overlap ]] && second="$L bench resnet50 -b 8 -w 3 -n 2000"
    NSYS_TRACE=cuda,nvtx nsys_capture "$n" "$W" -- bash -c "$L bench gpt2 -b 1 -t 128 -w 3 -n 2000 & $second & wait" || continue
    cp "$W/$n.log" "$R/"
    grep "^lap time" "$W/$n.log" | sed "s/^/$n bench: /"
    "$L" analyze "$W/$n.sqlite" --json "$R/$n.analyze.json" >"$R/$n.analyze.txt" 2>&1
    echo "$n: analyze rc=$?"
    python3 tests/fixtures/process_reference.py "$W/$n.sqlite" >"$R/$n.reference.json" 2>>"$R/$n.log"
    echo "$n: reference rc=$?"
    python3 - "$R/$n.analyze.json" "$R/$n.reference.json" <<'PY'
import json, sys
a, ref = (json.load(open(p)) for p in sys.argv[1:])
procs = a.get("processes") or [a]
print("  notes:", a.get("notes") if "processes" in a else "(one process)")
for p in procs:
    pid = str(p.get("pid"))
    r = ref["processes"].get(pid, {})
    shared = [n for n in p["notes"] if n.startswith("Other processes")]
    print("  %s %s: lap %.4f ms (reference %.4f), busy median %.2f%% (%.2f), steady %d (%d), other in idle %s ns of %s;"
          " verdict %s; %s" % (pid, p.get("process"), p["time_ms"]["lap"], r.get("lap_ms", -1),
                               p["utilization"]["span_fill_pct"]["median"], r.get("busy_pct_median", -1),
                               p["steady_iterations"], r.get("steady", -1), r.get("other_processes_in_idle_ns"),
                               r.get("idle_ns"), p["verdict"]["bound"], shared[0] if shared else "no shared-GPU note"))
PY
  done
  # The two ranks against each other, one capture on both sides; without --pid it must refuse.
  [[ -f $R/two_gpt2_overlap.analyze.json ]] || return 0
  read -r -a pids < <(python3 -c "import json, sys; print(' '.join(str(p['pid']) for p in json.load(open(sys.argv[1])).get('processes', [])))" \
    "$R/two_gpt2_overlap.analyze.json")
  if ((${#pids[@]} == 2)); then
    "$L" diff "$W/two_gpt2_overlap.sqlite" "$W/two_gpt2_overlap.sqlite" --pid-before "${pids[0]}" --pid-after "${pids[1]}" \
      >"$R/two_gpt2_overlap.diff.txt" 2>&1
    echo "two_gpt2_overlap diff ${pids[0]} -> ${pids[1]}: rc=$? $(grep '^Verdict' "$R/two_gpt2_overlap.diff.txt")"
  fi
  "$L" diff "$W/two_gpt2_overlap.sqlite" "$W/two_gpt2_overlap.sqlite" >"$R/two_gpt2_overlap.refused.txt" 2>&1
  echo "two_gpt2_overlap diff without --pid: rc=$? $(tail -1 "$R/two_gpt2_overlap.refused.txt")"
}

# --- graph --------------------------------------------------------------------------------------
part_graph() {
  local tests=$B/tests/test_trace_graph fx=$REPO/tests/fixtures/graph cases mode size r
  [[ -x $tests ]] || { fail "no $tests: carry it (device-call.sh pack packs it)"; return; }
  local work=$R/capture
  mkdir -p "$work" "$R/fixtures" "$R/reports"
  echo "1. captures"
  cases=${CASES:-laptime_resnet50_graph_cupti laptime_resnet50_graph_node}
  [[ $cases == all ]] && cases=
  local t0=$SECONDS
  CASES=$cases "$fx/capture.sh" "$work" "$B" nsys >"$R/reports/capture.log" 2>&1
  echo "  capture.sh (${cases:-every case}): $((SECONDS - t0)) s"
  pack
  local cupti=$work/laptime_resnet50_graph_cupti
  [[ -s $cupti.sqlite ]] && pass "CUPTI capture written" || fail "no CUPTI capture (see reports/capture.log)"
  size=$(stat -c %s "$cupti.sqlite" 2>/dev/null || echo 0)
  ((size > 0 && size < 2 * 1024 * 1024)) && pass "trimmed to $size bytes (under 2 MB)" || fail "$size bytes after trimming"
  [[ -s $cupti.layers.json ]] && pass "layer costs beside it" || fail "no $cupti.layers.json"

  echo "2. fixtures and the reference"
  for f in "$work"/*.sqlite "$work"/*.nsys-rep "$work"/*.layers.json "$work"/*.log "$work"/*.tables.txt "$work"/*.csv; do
    [[ -f $f ]] && cp "$f" "$fx/" && cp "$f" "$R/fixtures/"
  done
  rm -rf "$work"
  python3 "$fx/reference.py" && pass "reference.py over the new captures" || fail "reference.py"
  cp "$fx/reference.expected.json" "$R/fixtures/"
  python3 "$fx/reference.py" --print laptime_resnet50_graph_cupti | python3 -c 'if True:
    import json, sys
    d = json.load(sys.stdin)
    print("  reference: GPU lap %.3f ms, %d steady, %.0f ops per iteration, %d layers" % (
        d["gpu_lap_ms"], d["steady"], d["ops_per_iteration"], len(d["layer_ms_per_iteration"])))'

  echo "3. analyze the CUPTI capture"
  r=$R/reports/resnet50_graph_cupti.analyze.txt
  "$L" analyze "$fx/laptime_resnet50_graph_cupti.sqlite" --peak "$REPO/tests/fixtures/peak_example.json" \
    --json "$R/reports/resnet50_graph_cupti.analyze.json" >"$r" 2>&1 \
    && pass "analyze exits 0" || fail "analyze (see reports/resnet50_graph_cupti.analyze.txt)"
  grep -q '^Verdict: GPU-bound' "$r" && pass "verdict GPU-bound" || fail "verdict: $(grep '^Verdict' "$r")"
  grep -qE '^    layer1\.\*\.conv[0-9]' "$r" && pass "per-layer table of the replayed graph" || fail "no layer rows"
  grep -q '^Roofline per layer' "$r" && pass "roofline table" || fail "no roofline table"
  "$tests" --gtest_filter='GraphCapture.*:Graph/Capture.*' >"$R/reports/test_trace_graph.txt" 2>&1 \
    && pass "test_trace_graph" || fail "test_trace_graph (see reports/test_trace_graph.txt)"
  grep -q 'SKIPPED' "$R/reports/test_trace_graph.txt" && fail "a test skipped: $(grep -m1 SKIPPED "$R/reports/test_trace_graph.txt")"
  pack

  echo "4. GPT-2 B1 eager and --graph through CUPTI"
  local tmp
  tmp=$(mktemp -d -t graph.XXXXXX)
  for mode in eager graph; do
    local flag=()
    [[ $mode == graph ]] && flag=(--graph)
    "$L" bench gpt2 -b 1 "${flag[@]}" --warmup 2 --iters 20 --trace "$tmp/gpt2_b1_$mode.sqlite" \
      >"$R/reports/gpt2_b1_${mode}_cupti.bench.txt" 2>&1 || fail "bench gpt2 -b 1 $mode"
    "$L" analyze "$tmp/gpt2_b1_$mode.sqlite" >"$R/reports/gpt2_b1_${mode}_cupti.analyze.txt" 2>&1 \
      || fail "analyze gpt2 $mode"
  done
  "$L" diff "$tmp/gpt2_b1_eager.sqlite" "$tmp/gpt2_b1_graph.sqlite" >"$R/reports/gpt2_b1_cupti.diff.txt" 2>&1
  [[ $? -le 1 ]] && pass "diff eager graph" || fail "diff eager graph"
  grep -q '^Verdict: GPU-bound' "$R/reports/gpt2_b1_graph_cupti.analyze.txt" && pass "GPT-2 B1 graph GPU-bound" \
    || fail "GPT-2 B1 graph: $(grep '^Verdict' "$R/reports/gpt2_b1_graph_cupti.analyze.txt")"
  rm -rf "$tmp"
  ls -la "$R/fixtures" "$R/reports"
}

# --- compiled -----------------------------------------------------------------------------------
part_compiled() {
  mkdir -p "$R/fixtures"
  timeout -k 5 560 tests/fixtures/compiled/capture.sh "$R/fixtures" "$(command -v nsys)" "$L" && pass "compiled/capture.sh" ||
    fail "compiled/capture.sh"
  grep -q '^Verdict: GPU-bound' "$R/fixtures/torch_compiled.analyze.txt" 2>/dev/null && pass "torch.compile loop GPU-bound" ||
    fail "torch.compile loop: $(grep '^Verdict' "$R/fixtures/torch_compiled.analyze.txt" 2>/dev/null)"
}

# --- ncu, ncu-sidecars --------------------------------------------------------------------------
part_ncu() {
  timeout -k 5 560 tests/fixtures/ncu/capture.sh "$R" "$B" "$(command -v ncu)" && pass "ncu/capture.sh" ||
    fail "ncu/capture.sh"
}

part_ncu_sidecars() {
  local fx=$REPO/tests/fixtures/ncu f
  mkdir -p "$R/fixtures" "$R/walk"
  echo "1. the sidecars, at the shapes and variants of the committed reports"
  (cd "$R/fixtures" &&
    { timeout -k 5 120 "$L" bench gpt2 -b 1 -t 256 -w 0 -n 1 --json laptime_gpt2.json >gpt2.log 2>&1 || echo "gpt2 sidecar: rc=$?"
      timeout -k 5 120 "$L" bench resnet50 -b 8 -w 0 -n 1 --json laptime_resnet50.json >resnet50.log 2>&1 ||
        echo "resnet50 sidecar: rc=$?"
      timeout -k 5 120 "$L" bench resnet50 -b 8 -w 0 -n 1 --stem cudnn --json laptime_resnet50_stem_cudnn.json \
        >resnet50_stem_cudnn.log 2>&1 || echo "resnet50 cudnn-stem sidecar: rc=$?"
      for f in laptime_gpt2 laptime_resnet50; do
        cmp "$f.layers.json" "$fx/$f.layers.json" >>cmp.txt 2>&1 && echo "$f: same" >>cmp.txt
      done
      cat cmp.txt; })
  pack
  echo "2. the conversion test with the real ncu"
  timeout -k 5 60 "$B/tests/test_ncu" >"$R/test_ncu.log" 2>&1
  echo "test_ncu rc=$?"; tail -3 "$R/test_ncu.log"
  echo "3. the walk-through: the printed command, run as printed, then read"
  (cd "$R/walk" && PATH=$(dirname "$L"):$PATH &&
    { laptime kernels --command gpt2 -b 1 -t 256 --binary "$L" | tee command.txt
      local cmd start
      cmd=$(grep -m1 '^  ncu ' command.txt | sed 's/^  //')
      start=$SECONDS
      timeout -k 5 300 bash -c "$cmd" >ncu.log 2>&1
      echo "rc=$? $((SECONDS - start)) s" | tee time.txt
      timeout -k 5 120 laptime peak --cache peak_h200.json >peak.txt 2>&1 || echo "peak: rc=$?"
      laptime kernels gpt2_b1_t256.ncu-rep --peak peak_h200.json --json gpt2.json --svg gpt2.svg >gpt2.txt 2>&1
      echo "kernels rc=$?"; head -12 gpt2.txt
      laptime kernels "$fx/laptime_resnet50_stem_cudnn.csv" "$fx/laptime_resnet50_stem_fused.csv" >stem_ab.txt 2>&1
      echo "stem A/B rc=$?"; })
}

# --- diff ---------------------------------------------------------------------------------------
part_diff() {
  local iters=30 warmup=5 model have_torch=0
  while (($#)); do
    case $1 in
      --iters) iters=${2:?--iters needs a number}; shift 2 ;;
      --warmup) warmup=${2:?--warmup needs a number}; shift 2 ;;
      *) echo "captures.sh diff: unknown argument '$1'" >&2; return 2 ;;
    esac
  done
  mkdir -p "$R/captures" "$R/diffs"
  python3 -c "import torch" 2>/dev/null && have_torch=1
  diff_pair() {  # diff_pair NAME BEFORE AFTER [OPTIONS]: text, JSON and SVG
    local name=$1 before=$R/captures/$2.sqlite after=$R/captures/$3.sqlite
    shift 3
    [[ -f $before && -f $after ]] || { echo "  skip  diff $name (a capture is missing)"; return; }
    "$L" diff "$before" "$after" --skip-warmup "$warmup" "$@" --json "$R/diffs/$name.json" --svg "$R/diffs/$name.svg" \
      >"$R/diffs/$name.txt" 2>&1 && pass "diff $name: $(grep -m1 '^Verdict' "$R/diffs/$name.txt")" ||
      fail "diff $name (see diffs/$name.txt)"
  }
  for model in gpt2 resnet50; do
    local bench=("$L" bench "$model" --precision bf16 --warmup "$warmup" --iters "$iters" --nvtx layer)
    nsys_capture "${model}_A" "$R/captures" -- "${bench[@]}"
    nsys_capture "${model}_A2" "$R/captures" -- "${bench[@]}"
    nsys_capture "${model}_graph" "$R/captures" --cuda-graph-trace=node -- "${bench[@]}" --graph
    if ((have_torch)); then
      nsys_capture "${model}_torch" "$R/captures" -- python3 bench/torch_baseline.py "$model" --precision bf16 \
        --warmup "$warmup" --iters "$iters" --nvtx layer
    else
      echo "  skip  capture ${model}_torch (no torch)"
    fi
    diff_pair "${model}_A_vs_A2" "${model}_A" "${model}_A2"
    noise_floor "$R/diffs/${model}_A_vs_A2.json"
    diff_pair "${model}_A_vs_A2_by_block" "${model}_A" "${model}_A2" --by block
    diff_pair "${model}_eager_vs_graph" "${model}_A" "${model}_graph"
    diff_pair "${model}_torch_vs_laptime" "${model}_torch" "${model}_A"
    if [[ -f $R/captures/${model}_A.sqlite ]]; then  # where steady state starts, as analyze reports it
      "$L" analyze "$R/captures/${model}_A.sqlite" >"$R/diffs/${model}_A_analyze.txt" 2>&1
      echo "  analyze ${model}_A: $(grep -m1 '^Steady state' "$R/diffs/${model}_A_analyze.txt")"
    fi
    pack
  done
}

# noise_floor JSON: the calibration diff's smallest detectable change: the half-width of each row's
# 95% interval relative to its median (the iteration, the median layer, the widest layer), and
# whether anything was labelled FASTER or SLOWER (nothing may be).
noise_floor() {
  [[ -f $1 ]] || return 0
  python3 - "$1" <<'PY' | sed 's/^/  noise floor: /'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
def half(r):
    lo, hi = r.get("ci_pct", [0, 0])
    return max(abs(lo), abs(hi))
rows = [r for r in d["rows"] if "ci_pct" in r]
layers = [r for r in rows if not r["whole_iteration"]]
flagged = [f'{r["name"]} {r["label"]}' for r in rows if r["label"] in ("FASTER", "SLOWER")]
print(f'iteration: ±{half(rows[0]):.2f}%', end="")
if layers:
    worst = max(layers, key=half)
    print(f'; layers: median ±{statistics.median(map(half, layers)):.2f}%, widest ±{half(worst):.2f}% ({worst["name"]})', end="")
print("; flagged: " + (", ".join(flagged) if flagged else "none"))
PY
}

# --- kineto -------------------------------------------------------------------------------------
part_kineto() {
  local W T=$R/traces P=$R/reports f n model shape
  W=$(mktemp -d -t kineto.XXXXXX)  # the exports stay here, on the device
  trap 'rm -rf "$W"' EXIT
  mkdir -p "$T" "$P"
  for model in ${KINETO_MODELS:-gpt2 resnet50}; do
    for shape in ${KINETO_SHAPES:-item steps no_steps graph}; do
      n=${model}_$shape f=$T/${model}_$shape.pt.trace.json.gz
      nsys_capture "$n" "$W" -- python3 tests/fixtures/kineto/capture_h200.py "$T" --models "$model" --shapes "$shape" \
        || continue
      cp "$W/$n.log" "$P/$n.capture.log"
      if ! python3 -c 'import gzip, json, sys
sys.exit(not any(str(e.get("cat", "")).lower() == "kernel" for e in json.load(gzip.open(sys.argv[1]))["traceEvents"]))' "$f"; then
        echo "  $n: the trace taken under nsys holds no GPU work (CUPTI has one subscriber): captured again without nsys"
        mkdir -p "$R/under_nsys" && mv "$f" "$R/under_nsys/"
        python3 tests/fixtures/kineto/capture_h200.py "$T" --models "$model" --shapes "$shape" >>"$P/$n.capture.log" 2>&1 \
          || { fail "capture_h200.py $n without nsys"; continue; }
      fi
      "$L" analyze "$f" --json "$P/$n.kineto.json" >"$P/$n.kineto.txt" 2>&1 || fail "analyze $n (Kineto)"
      "$L" analyze "$W/$n.sqlite" --json "$P/$n.nsys.json" >"$P/$n.nsys.txt" 2>&1 || fail "analyze $n (nsys)"
      "$L" diff "$W/$n.sqlite" "$f" --json "$P/$n.diff.json" >"$P/$n.diff.txt" 2>&1 || fail "diff $n (nsys -> Kineto)"
      if [[ $shape == item ]]; then  # the smallest export of each model, shrunk and scrubbed: a pair a test can hold
        python3 tests/fixtures/lesson/shrink_capture.py "$W/$n.sqlite" "$P/$n.sqlite" && scrub_trace "$P/$n.sqlite"
      fi
      rm -f "$W/$n.sqlite"
      pack
    done
  done
  pack
  echo
  python3 - "$P" <<'PY'
import glob, json, os, sys
def figures(path):
    j = json.load(open(path))
    n = max(j["steady_iterations"], 1)
    ops = sum(c["count"] for c in j["kernel_mix"]["categories"]) / n  # kernels and copies, as the text's ops/iter
    return (j["steady_iterations"], j["time_ms"]["lap"], j["verdict"]["busy_pct"], ops,
            j["kernel_mix"]["gpu_time_ns"] / n / 1e6, j["verdict"]["bound"])
print("%-18s %-7s %6s %9s %7s %8s %9s  %s" % ("trace", "from", "steady", "lap ms", "busy %", "ops/it", "gpu ms/it", "verdict"))
for k in sorted(glob.glob(sys.argv[1] + "/*.kineto.json")):
    n = os.path.basename(k)[: -len(".kineto.json")]
    rows = {"kineto": figures(k)}
    if os.path.exists(k.replace(".kineto.", ".nsys.")):
        rows["nsys"] = figures(k.replace(".kineto.", ".nsys."))
    for src, r in rows.items():
        print("%-18s %-7s %6d %9.3f %7.1f %8.1f %9.3f  %s" % ((n, src) + r))
    if len(rows) == 2:
        d = 100 * (rows["kineto"][1] / rows["nsys"][1] - 1)
        print("%-18s lap Kineto vs nsys %+.2f%% %s" % (n, d, "(within 2%)" if abs(d) <= 2 else "(MORE THAN 2%)"))
PY
}

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git log -1 --format='%h %s' | cut -c1-100
  echo "captures.sh $part $*: $(date -u)"; } 2>&1 | tee -a "$S"
"part_${part//-/_}" "$@" 2>&1 | tee -a "$S"  # a subshell: what failed is read back from its FAIL lines
grep -q '^  FAIL ' "$S" && status=1
echo "done at ${SECONDS}s, exit $status" | tee -a "$S"
pack
exit "$status"
