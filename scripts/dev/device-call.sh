#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# shellcheck disable=SC2317  # the parts run through "part_$part", which shellcheck cannot follow
# One call on a lent GPU machine, in parts that each fit the device's 10-minute calls. The builds
# are carried, not made there: `scripts/dev/device-call.sh pack` here first (stripped binaries in
# .carry/build.tar.xz, under the 64 MiB a call carries), then on the device, from the repository
# root with .carry carried, `tar xJf .carry/build.tar.xz` before the part:
#
#   scripts/dev/device-call.sh pack [BUILD] [BUILD80]     (here)
#   tar xJf .carry/build.tar.xz && scripts/dev/device-call.sh PART [ARGS...]     (on the device)
#
#   check       correctness, in parallel (nothing here is a timing): every GPU suite of build/ (the
#               model suites split per precision), build80/'s when carried (sm_80 PTX, and its
#               `-p fp8` refusal), the end-to-end checks against PyTorch in every precision, test_ncu
#               with the real ncu, and the three checks below; SANITIZE=1 adds scripts/sanitize.sh's
#               sweep (SANITIZE=REGEX: only the runs it matches, its --only)
#   interrupt   Ctrl-C during `laptime bench`: in the steady loop, in warm-up, twice, never
#   io          the file rules on the paths only a GPU reaches (peak --cache FIFO, forward -o a link,
#               bench with standard output closed, the bench's trace left WAL-free)
#   host-build  the split laptime (host executable + liblaptime_gpu.so by dlopen) under the real nsys
#   laps        the lap table, one row at a time on an idle card: laptime in every precision at the
#               headline shapes (GPT-2 B8 T1024, ResNet-50 B256) and the small ones, PyTorch eager
#               beside them (one Python process a model), bench/compare.py's table last. ROWS
#               replaces the table: one row a line, NAME:ENV:ARGS (NAME laptime_* runs `laptime
#               bench ARGS`, torch_* `bench/torch_baseline.py ARGS`; ENV is VAR=value,... or empty)
#   compile     PyTorch torch.compile rows, bf16, GPT-2 B8 and ResNet-50 B256 (SHAPES=all adds GPT-2
#               B1 and ResNet-50 B32 and B1; SHAPES=resnet50 runs ResNet-50 B256 alone); COMPILE_MODE picks the mode (default "default";
#               max-autotune-no-cudagraphs tunes for minutes a row: Inductor's cache goes to
#               .inductor-cache/ and comes back when a row did not finish, to carry into the next call;
#               TORCH_LIMIT: seconds a row, default 300, ResNet-50's max-autotune took 266)
#   layers      `laptime peak --force`, then per-layer CUPTI captures analyzed (the roofline at each
#               layer's own ceiling) and diffed: GPT-2 B8 and ResNet-50 B256, bf16 -> PRECISION
#               (default fp8). TRACES (NAME:ARGS a line) and DIFFS ("BEFORE:AFTER ...") replace them
#   roofline    the roofline cross-checked: each layer's % of its bound recomputed from the bench's
#               own FLOPs and bytes, the range table's time and the ceilings, within 2% (MODELS,
#               PRECISION: default "gpt2 resnet50", bf16)
#   ab NAME ROUNDS BEFORE_BIN AFTER_BIN -- BENCH_ARGS...
#               two binaries' lap rows alternated (before, after, before, ...), so that clock and
#               thermal drift fall on both alike
#   analyzer    scripts/dev/analyzer-bench.sh with the device's nsys (the device's CPU, no GPU)
#   cutlass     CUTLASS's GEMMs beside cuBLASLt (~3 minutes): its suites in parallel (every sm_90a
#               kernel against the CPU reference, the tuner's launch charging, test_gpt2_layers'
#               timed-GEMM tests and test_fp8_layers, where the tuner now weighs CUTLASS), then
#               laptime_cutlass_probe alone (GPT-2's GEMM shapes, every kernel beside cuBLASLt's
#               best, checked and timed; its JSON as cutlass_probe.json), laptime_sdpa_probe
#               (cuDNN's fp8 attention beside bf16), then GPT-2 lap rows with LAPTIME_GPT2_GEMM=timed,
#               LAPTIME_CUTLASS=off against on, and the default rows beside them, the eager batch-1
#               rows among them (fp8's launch charging) (ROWS replaces them, as in laps)
#   table       docs/PERF.md's table in one call (~8 minutes): laps with every headline and small-shape
#               row beside PyTorch eager (LAPS_BUDGET, default 330 s), then compile (COMPILE_BUDGET,
#               220), then energy (ENERGY_BUDGET, 260; ENERGY=0 leaves it out), then layers
#               (LAYERS_BUDGET, 110; LAYERS=0 leaves it out); table.txt is the rows side by side
#   energy      the table's rows again, each with about 1.5 s of steady laps (its own --iters in
#               ENERGY_ROWS), so that NVML's energy counter, which steps every few tens of ms, gives
#               each its joules per forward (`energy` in its report); the torch.compile rows with the
#               Inductor cache the compile part left. ROWS replaces the laptime and eager rows, as in
#               laps (ARGS then carry --iters)
#   stream      fp8 ResNet-50's e4m3 stream (layers/resnet50/e4m3_block.h): its GPU suites beside the end-to-end
#               check (PRECISIONS, default bf16,fp8), then ResNet-50 lap rows (ROWS), torch.compile's
#               B256 row with COMPILE=1, the fp8 per-layer capture analyzed (LAYERS=0 leaves it out),
#               and with NCU=1 Nsight Compute (--set full) on one iteration's kernels in NCU_RANGES
#               (layer1.0's conv2, conv3 and downsample, layer2.1's conv3 by default). Carry a trimmed
#               build: TESTS="test_e4m3_stream test_cutlass_gemm test_fp8_layers test_layer_costs"
#               BUILD80=0 scripts/dev/device-call.sh pack
#   lab         `laptime lab` (docs/KERNELS.md, ~3 minutes): `laptime peak` into the run's folder, every
#               kernel in its default precision (attention in fp32 too), every version
#               (lab/KERNEL_PRECISION.{json,txt}); the lab's GPU and CLI tests; `laptime kernels
#               --command lab layernorm` run as printed, then `laptime kernels` on its report; nsys
#               captures of `bench gpt2` with and without `--kernel layernorm=v1` and their `laptime
#               diff`; the measured table (median, interval, GB/s, % of the roofs) in the summary
#   lab-try     a learner's own kernel file (docs/KERNELS.md "Write your own", ~6 minutes): the
#               templates of layernorm, attention and quantize run with --try beside their ladders; the
#               three wrong layernorms of kernels/lab/examples/wrong/ FAILED and never timed; the worked
#               v2 against the template; a hang, a fault, a block of 0 threads, a huge grid and a stray
#               write, each a FAILED rung in bounded time; `bench gpt2 --kernel layernorm=FILE.cu`
#               captured and diffed; ncu over the file's rung; `lab --all`; test_lab_try on the GPU.
#               Carry its suite: TESTS="test_lab_try test_lab_kernels test_lab_cli" device-call.sh pack
#   pack        here, not on the device: builds and strips what the parts run (laptime, its module,
#               the development benches, the GPU suites) into .carry/build.tar.xz. TESTS="test_a
#               test_b" packs those suites alone (TESTS="" none); BUILD80=0 leaves the sm_80 build
#               out; PROBES=0 leaves out the development benches; TESTS80 picks the sm_80 suites;
#               LAPTIME80=0 leaves out the sm_80 laptime (its suites link the library statically)
#
# Each part writes under $RESULTS/PART (default /tmp/device-call/PART): a log a step, json/ with
# every --json report, summary.txt (the machine first, then each step's status and figures).
# After every step everything is packed into $OUT/device-call-PART.tgz and the summary copied to
# $OUT/device-call-PART.txt, so a call cut short still returns what it did; steps are skipped once
# BUDGET seconds (default 540) are spent. BUILD and BUILD80 name the builds (build, build80);
# NCU_DIR and NSYS_DIR the tools (the device image's Nsight Compute 2025.3.1 and the nsys inside
# it, with the libraries of .nsys-deps/*.deb when carried). Exit 1 when a check or a step failed.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
# device_env LIB: the device image's libraries and tools, for every part here and for captures.sh
# (`source device-call.sh --env LIB`): the torch venv's cuDNN (the device has no system cuDNN), LIB
# (the build's lib/: what `pack` copies because the device lacks it, RE2), the libraries of
# .nsys-deps/*.deb when carried; NCU_DIR and NSYS_DIR, both put on PATH.
device_env() {
  export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$1:${LD_LIBRARY_PATH:-}
  if [[ -d .nsys-deps ]]; then
    for f in .nsys-deps/*.deb; do dpkg -x "$f" /tmp/dw; done
    export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
  fi
  NCU_DIR=${NCU_DIR:-/opt/nvidia/nsight-compute/2025.3.1}
  NSYS_DIR=${NSYS_DIR:-$NCU_DIR/host/target-linux-x64}
  # The one place the tools go on PATH (ahead of any other nsys or ncu, once however often this runs):
  # every part, the parts a part starts and captures.sh call plain `nsys` and `ncu`.
  local d
  for d in "$NCU_DIR" "$NSYS_DIR"; do
    [[ ":$PATH:" == *":$d:"* ]] || PATH=$d:$PATH
  done
  export PATH
}
if [[ ${1:-} == --env ]]; then device_env "${2:?--env LIB}"; return 0 2>/dev/null || exit 2; fi
# --- pack (here): what the parts run, stripped, into .carry/build.tar.xz -------------------------
part_pack() {
  set -e
  local src=${1:-build} src80=${2:-build80}
  local suites=(test_gpt2_layers test_gpt2_reference test_resnet50_layers test_resnet50_reference test_layer_costs
               test_bench_report test_fp8_layers test_fp8_reference test_trace_graph test_ncu test_host_cli
               test_lab_kernels test_lab_cli test_cutlass_gemm test_gemm_tuner test_e4m3_stream)
  # shellcheck disable=SC2206  # TESTS is a word list
  [[ -n ${TESTS+set} ]] && suites=($TESTS)
  [[ ${BUILD80:-1} == 0 ]] && src80=/nonexistent
  cmake --build "$src" -j2 --target laptime laptime_fp8_shapes laptime_cutlass_probe laptime_sdpa_probe "${suites[@]}"
  local suites80=(test_gpt2_layers test_resnet50_layers test_fp8_layers)
  # shellcheck disable=SC2206  # TESTS80 is a word list
  [[ -n ${TESTS80:-} ]] && suites80=($TESTS80)
  local laptime80=(bench/laptime bench/liblaptime_gpu.so)
  [[ ${LAPTIME80:-1} == 0 ]] && laptime80=()
  [[ -d $src80 ]] && cmake --build "$src80" -j2 --target laptime "${suites80[@]}"
  local stage
  stage=$(mktemp -d)
  copy() {  # copy FROM_BUILD TO_NAME FILES...
    local from=$1 to=$2 f
    shift 2
    for f in "$@"; do
      [[ -e $from/$f ]] || { echo "device-call pack: no $from/$f" >&2; exit 1; }
      mkdir -p "$stage/$to/$(dirname "$f")"
      cp "$from/$f" "$stage/$to/$f"
      strip --strip-unneeded "$stage/$to/$f" 2>/dev/null || true
    done
  }
  local probes=(bench/laptime_fp8_shapes bench/laptime_cutlass_probe bench/laptime_sdpa_probe)
  [[ ${PROBES:-1} == 0 ]] && probes=()
  copy "$src" build bench/laptime bench/liblaptime_gpu.so "${probes[@]}" "${suites[@]/#/tests/}"
  [[ -d $src80 ]] && copy "$src80" build80 "${laptime80[@]}" "${suites80[@]/#/tests/}"
  # The system libraries the binaries link that the device lacks (RE2: libre2-dev is not there);
  # device_env puts build/lib on LD_LIBRARY_PATH.
  mkdir -p "$stage/build/lib"
  local lib
  for lib in $(ldd "$src/bench/laptime" | awk '/libre2/ {print $3}'); do cp -L "$lib" "$stage/build/lib/"; done
  mkdir -p .carry
  # xz -9e: its 64 MiB window spans the binaries, which share most of their code (a third of -6's size).
  tar cf - -C "$stage" . | xz -9e -T1 >.carry/build.tar.xz
  rm -rf "$stage"
  ls -la .carry/build.tar.xz
}

part=${1:-}
shift || true
case $part in
  check | interrupt | io | host-build | laps | compile | energy | layers | roofline | ab | analyzer | cutlass | table | stream | lab | lab-try) ;;
  pack) part_pack "$@"; exit ;;
  *) sed -n '4,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac
B=${BUILD:-build}
B80=${BUILD80:-build80}
L=$B/bench/laptime
T=$B/tests
RESULTS_ROOT=${RESULTS:-/tmp/device-call}
R=$RESULTS_ROOT/$part
BUDGET=${BUDGET:-540}
LOOP=(--nvtx iter --warmup 5 --iters 20)
mkdir -p "$R/json"
R=$(cd "$R" && pwd)  # absolute: the checks change directory
S=$R/summary.txt
export LAPTIME_SOURCE_DIR=$REPO PYTHONUNBUFFERED=1
device_env "$(realpath -m "$B")/lib"
status=0

say() { echo "$*" >>"$S"; }
PACK_EXCLUDE=()  # what a part leaves out of its .tgz (lab: the nsys captures, for size)
pack() {
  [[ -n ${OUT:-} ]] && { tar czf "$OUT/device-call-$part.tgz" -C "$R" "${PACK_EXCLUDE[@]}" . 2>/dev/null; cp "$S" "$OUT/device-call-$part.txt"; }
  true
}
left() { echo $((BUDGET - SECONDS)); }
# step NAME LIMIT COMMAND...: COMMAND alone (its log $R/NAME.log); its status, seconds and printed
# lap in the summary. Skipped once the budget is spent; the limit shrinks to what is left.
step() {
  local name=$1 limit=$2 rc=0 t0=$SECONDS
  shift 2
  if (($(left) < 10)); then say "$name: SKIPPED (budget spent)"; return 1; fi
  ((limit > $(left))) && limit=$(left)
  timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1 || rc=$?
  say "$name: rc=$rc $((SECONDS - t0))s $(grep -m1 '^lap time' "$R/$name.log")"
  ((rc == 0)) || status=1
  pack
  return "$rc"
}
# par NAME COMMAND...: COMMAND in the background (log $R/NAME.log, status in par.txt). Correctness
# only: everything started this way shares the GPU.
par() { local name=$1; shift; (timeout -k 5 "${PAR_LIMIT:-300}" "$@" >"$R/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/par.txt") & }
gtest_line() { grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$@" | tr '\n' ' '; }
failures=0
pass() { echo "  ok    $*" | tee -a "$S"; }
fail() { echo "  FAIL  $*" | tee -a "$S"; failures=$((failures + 1)); }
need() { [[ -x $1 ]] || { echo "device-call: no $1: carry the build (scripts/dev/device-call.sh pack)." | tee -a "$S" >&2; exit 2; }; }

# --- check ------------------------------------------------------------------------------------
part_check() {
  need "$L"
  : >"$R/par.txt"
  for p in fp32 tf32 bf16; do
    par "gpt2_layers_$p" "$T/test_gpt2_layers" --gtest_filter="*/$p"
    par "resnet50_layers_$p" "$T/test_resnet50_layers" --gtest_filter="*/$p"
  done
  par gpt2_layers_rest "$T/test_gpt2_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
  par resnet50_layers_rest "$T/test_resnet50_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
  for t in test_gpt2_reference test_resnet50_reference test_layer_costs test_bench_report test_fp8_layers \
           test_fp8_reference; do
    par "${t#test_}" "$T/$t"
  done
  if [[ -x $B80/tests/test_gpt2_layers ]]; then  # the sm_80 build's PTX, JIT-compiled here: an A100's path
    par sm80_gpt2_layers "$B80/tests/test_gpt2_layers"
    par sm80_resnet50_layers "$B80/tests/test_resnet50_layers"
    par sm80_fp8_layers "$B80/tests/test_fp8_layers"
    # Must be refused (exit 1), in one sentence: rc=0 in par.txt when it was.
    par sm80_fp8_refusal bash -c 'out=$("$1" bench gpt2 -b 1 -t 64 -n 2 -p fp8 2>&1); rc=$?; echo "$out"
      ((rc == 1)) && grep -q "needs a build with sm_89" <<<"$out"' _ "$B80/bench/laptime"
  fi
  par e2e_gpt2 python3 tests/e2e/check_gpt2.py --laptime "$L"
  par e2e_resnet50 python3 tests/e2e/check_resnet50.py --laptime "$L"
  par ncu_real "$T/test_ncu" --gtest_filter='NcuRep.*'
  local c
  for c in interrupt io host-build; do
    par "$c" env -u OUT RESULTS="$R" bash "$REPO/scripts/dev/device-call.sh" "$c"
  done
  if [[ -n ${SANITIZE:-} ]]; then
    local only=()
    [[ $SANITIZE == 1 ]] || only=(--only "$SANITIZE")
    PAR_LIMIT=540 par sanitize bash scripts/sanitize.sh --build-dir "$B" --out "$R/sanitize" --jobs 6 "${only[@]}"
  fi
  wait
  sort "$R/par.txt" >>"$S"
  grep -q 'rc=[^0]' "$R/par.txt" && status=1
  for f in "$R"/*layers*.log "$R"/*reference.log "$R"/layer_costs.log "$R"/bench_report.log "$R"/ncu_real.log; do
    [[ -f $f ]] && say "  ${f##*/}: $(gtest_line "$f")"
  done
  grep -hE "^\[  FAILED  \] [A-Za-z]" "$R"/*.log | sort -u | head -20 >>"$S"
  for f in "$R"/e2e_*.log; do { echo "  ${f##*/}:"; sed -n '/^summary:/,$p' "$f" | tail -24; } >>"$S"; done
  [[ -f $R/sm80_fp8_refusal.log ]] && say "  sm_80 -p fp8 (must be refused): $(grep -m1 fp8 "$R/sm80_fp8_refusal.log" | cut -c1-200)"
  for c in interrupt io host-build; do { echo "  $c:"; grep -E '^  (ok|FAIL) ' "$R/$c/summary.txt"; } >>"$S" 2>&1; done
  [[ -f $R/sanitize/summary.txt ]] && tail -70 "$R/sanitize/summary.txt" >>"$S"
  return 0
}

# --- interrupt: Ctrl-C during `laptime bench` ----------------------------------------------------
# 1. in the steady loop: exit 130, the statistics of the iterations done ("interrupted: N of M
#    steady iterations done", "steady state over N iterations"), a valid --json with "interrupted":
#    true and N steady laps, a --trace that `laptime analyze` reads; 2. in warm-up: exit 130, no
#    steady-state statistics, still a valid --json; 3. a second Ctrl-C: exit 130 at once; 4. no
#    Ctrl-C: exit 0, no "interrupted" in the JSON; and no temporary (.NAME.laptime-PID.tmp) left.
part_interrupt() {
  need "$L"
  laptime=$(realpath "$L")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # Starts a bench in the background with line-buffered output; waits until its header is out
  # (the model is built, the loop about to start), then SETTLE seconds more.
  start_bench() {
    local out=$1 settle=$2
    shift 2
    stdbuf -oL -eL "$laptime" bench "$@" >"$out" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
      grep -q '^  weights ' "$out" 2>/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    sleep "$settle"
  }
  finish() { set +e; wait "$pid"; rc=$?; set -e; }
  no_temporaries() {
    local n
    n=$(find "$work" -name '.*.laptime-*.tmp' | wc -l)
    [[ $n == 0 ]] && pass "$1: no temporary left" || fail "$1: $n temporaries left in $work"
  }

  echo "1. Ctrl-C in the steady loop"
  start_bench "$work/steady.txt" 3 gpt2 --batch 1 --seq 128 --warmup 2 --iters 100000 \
    --json "$work/steady.json" --trace "$work/steady.sqlite"
  kill -INT "$pid"
  finish
  [[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
  if n=$(grep -oP 'interrupted: \K[0-9]+(?= of 100000 steady iterations done)' "$work/steady.txt"); then
    pass "says 'interrupted: $n of 100000 steady iterations done'"
    grep -q "steady state over $n iterations (ms): mean" "$work/steady.txt" && pass "statistics over the $n laps" \
      || fail "no 'steady state over $n iterations' line"
    python3 - "$work/steady.json" "$n" <<'PY' && pass "JSON valid: interrupted, $n steady laps, median" || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
steady = [i for i in r["iterations"] if not i["warmup"]]
assert r["interrupted"] is True, r.get("interrupted")
assert len(steady) == int(sys.argv[2]), (len(steady), sys.argv[2])
assert r["steady_ms"]["median"] > 0
PY
  else
    fail "no 'interrupted: N of 100000' line"; sed 's/^/        /' "$work/steady.txt" | tail -20
  fi
  "$laptime" analyze "$work/steady.sqlite" >"$work/analyze.txt" 2>&1 && pass "laptime analyze reads the trace" \
    || { fail "laptime analyze on the trace"; tail -5 "$work/analyze.txt"; }
  no_temporaries "steady"

  echo "2. Ctrl-C during warm-up"
  start_bench "$work/warm.txt" 2 gpt2 --batch 1 --seq 128 --warmup 100000 --iters 5 --json "$work/warm.json"
  kill -INT "$pid"
  finish
  [[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
  grep -q 'all warm-up: no steady-state statistics' "$work/warm.txt" && pass "says there are no statistics" \
    || fail "no 'no steady-state statistics' line"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["interrupted"] and "steady_ms" not in r' \
    "$work/warm.json" && pass "JSON valid, interrupted, no steady_ms" || fail "JSON"
  no_temporaries "warm-up"

  echo "3. a second Ctrl-C exits at once"
  start_bench "$work/twice.txt" 2 gpt2 --batch 1 --seq 128 --warmup 2 --iters 100000
  kill -INT "$pid"
  kill -INT "$pid" 2>/dev/null || true
  local start
  start=$(date +%s)
  finish
  [[ $rc == 130 ]] && pass "exit 130" || fail "exit $rc, expected 130"
  (($(date +%s) - start <= 5)) && pass "within 5 s" || fail "took $(($(date +%s) - start)) s"

  echo "4. no Ctrl-C"
  set +e
  "$laptime" bench gpt2 --batch 1 --seq 128 --warmup 1 --iters 3 --json "$work/plain.json" >"$work/plain.txt" 2>&1
  rc=$?
  set -e
  [[ $rc == 0 ]] && pass "exit 0" || fail "exit $rc"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "interrupted" not in r' "$work/plain.json" \
    && pass "JSON without 'interrupted'" || fail "JSON"
  no_temporaries "plain"
}

# --- io: the file rules where only a GPU run reaches them ----------------------------------------
# 1. `peak --cache FIFO` refused before the measurement, in one sentence, without blocking;
# 2. `forward -o` a symbolic link: replaced (its target untouched) by B*T*vocab fp32 logits;
# 3. `bench --json R --trace T` with standard output closed: R is the JSON alone;
# 4. the bench's trace is analyzed, and nothing (WAL, temporaries) appears beside it.
part_io() {
  need "$L"
  laptime=$(realpath "$L")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$work"
  local msg rc
  echo "1. peak --cache FIFO"
  mkfifo cache.fifo
  set +e
  msg=$(timeout 120 "$laptime" peak --cache cache.fifo 2>&1)
  rc=$?
  set -e
  [[ $rc == 1 && $msg == "laptime: refusing to write the ceilings to cache.fifo: it is a FIFO (named pipe), not a regular file." ]] &&
    pass "refused: $msg" || fail "rc $rc: $msg"

  echo "2. forward: -o a link"
  python3 "$REPO/weights/convert.py" gpt2 --random --n-layer 2 --n-head 1 --n-embd 64 --vocab-size 128 --n-ctx 16 \
    --output w.safetensors >/dev/null
  python3 -c "import struct; open('t.bin','wb').write(struct.pack('<16i', *range(16)))"
  echo "the victim's file" >victim.txt
  ln -s victim.txt logits.bin
  "$laptime" forward gpt2 --weights w.safetensors --tokens t.bin -b 1 -t 16 -o logits.bin >/dev/null 2>&1 &&
    [[ ! -L logits.bin && $(stat -c %s logits.bin) == $((16 * 128 * 4)) && $(cat victim.txt) == "the victim's file" ]] &&
    pass "-o a link: replaced by 8192 bytes of logits, target untouched" || fail "-o through a link"

  echo "3. bench with standard output closed"
  set +e
  "$laptime" bench gpt2 --weights w.safetensors -b 1 -t 16 --iters 5 --warmup 1 --json r.json --trace r.sqlite >&- 2>err.txt
  rc=$?
  set -e
  python3 -c "import json,sys; d=json.load(open('r.json')); sys.exit(0 if d['schema']=='laptime.bench/1' else 1)" &&
    ! grep -q "lap time:" r.json && pass "r.json is the JSON alone (exit $rc: $(tail -1 err.txt))" ||
    fail "r.json: $(head -c 200 r.json)"

  echo "4. analyze the bench's trace"
  "$laptime" analyze r.sqlite >a.txt 2>&1 && grep -q "Verdict" a.txt && [[ ! -e r.sqlite-wal && ! -e r.sqlite-shm ]] &&
    pass "analyzed, nothing beside it" || fail "$(tail -3 a.txt)"
  local leftover
  leftover=$(find . -name '.*.laptime-*.tmp' | head -3)
  [[ -z $leftover ]] && pass "no temporary left" || fail "temporaries left: $leftover"
}

# --- host-build: the split laptime under the real nsys ------------------------------------------
# 1. `bench gpt2` runs through the module (exit 0, a lap), and `--help` / `analyze` map no CUDA
#    library (LD_DEBUG=libs); 2. `nsys profile ... laptime bench` records the bench's kernels and
#    ranges although the CUDA libraries arrive by dlopen: `analyze RUN.nsys-rep` exports once (and
#    says so), finds the `forward` iterations and their kernels, and a second analyze reads the
#    cached RUN.sqlite; 3. test_host_cli's NsysReport.RealNsysExportMatchesTheCommittedExport.
part_host_build() {
  need "$L"
  laptime=$(realpath "$L")
  [[ -f $B/bench/liblaptime_gpu.so ]] || fail "no $B/bench/liblaptime_gpu.so"
  command -v nsys >/dev/null || { fail "nsys is not on PATH nor in NSYS_DIR=$NSYS_DIR"; return; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  local cuda_libs='lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|cupti|nvrtc)\.so' args
  echo "1. bench through the module"
  "$laptime" bench gpt2 -b 1 -t 128 -n 10 >"$work/bench.txt" 2>&1 && grep -q 'lap' "$work/bench.txt" &&
    pass "laptime bench gpt2 -b 1 -t 128 ran on the GPU" || fail "bench: $(tail -n 3 "$work/bench.txt")"
  for args in "--help" "analyze tests/fixtures/synthetic_trace.sqlite"; do
    # shellcheck disable=SC2086  # two words each
    if LD_DEBUG=libs "$laptime" $args 2>&1 >/dev/null | grep 'calling init:' | grep -qE "$cuda_libs"; then
      fail "laptime $args loaded a CUDA library"
    else
      pass "laptime $args loaded no CUDA library"
    fi
  done

  echo "2. nsys profile through dlopen, then analyze the .nsys-rep"
  # 30 timed iterations: `check` runs this beside every GPU suite, and under that contention the
  # analyzer's data-chosen warm-up (laps still settling) rightly keeps fewer of 10 than the 5 asked.
  nsys profile --trace=cuda,nvtx,osrt -o "$work/run" "$laptime" bench gpt2 -b 1 -t 128 -n 30 >"$work/nsys-profile.txt" 2>&1 &&
    [[ -f $work/run.nsys-rep ]] && pass "nsys profile wrote run.nsys-rep" || fail "nsys profile: $(tail -n 3 "$work/nsys-profile.txt")"
  "$laptime" analyze "$work/run.nsys-rep" --json "$work/run.json" >"$work/analyze.txt" 2>"$work/analyze.err" &&
    pass "analyze run.nsys-rep exit 0" || fail "analyze run.nsys-rep: $(cat "$work/analyze.err")"
  grep -q 'laptime: exporting .* with `nsys export --type sqlite` to .*run.sqlite, kept for later runs.' "$work/analyze.err" &&
    pass "said it exported once: $(head -n 1 "$work/analyze.err")" || fail "no export line: $(cat "$work/analyze.err")"
  python3 - "$work/run.json" <<'PY' && pass "the trace holds the bench's forward iterations and kernels" || fail "run.json lacks iterations or kernels"
import json, sys
j = json.load(open(sys.argv[1]))
steady = [it for it in j["iterations"] if it["steady"]]
assert j["range"] == "forward" and len(steady) >= 5 and all(it["kernels"] > 0 for it in steady), (j["range"], steady[:1])
PY
  "$laptime" analyze "$work/run.nsys-rep" >/dev/null 2>"$work/analyze2.err" &&
    grep -q 'laptime: reading .*run.sqlite, the SQLite export beside' "$work/analyze2.err" &&
    pass "second analyze read the cached export" || fail "second analyze: $(cat "$work/analyze2.err")"

  echo "3. the committed report through this nsys"
  LAPTIME_BINARY=$laptime "$T/test_host_cli" --gtest_filter='NsysReport.RealNsysExportMatchesTheCommittedExport' >"$work/gtest.txt" 2>&1 &&
    grep -q '\[       OK \]' "$work/gtest.txt" && pass "RealNsysExportMatchesTheCommittedExport" ||
    fail "RealNsysExportMatchesTheCommittedExport: $(tail -n 15 "$work/gtest.txt")"
  nsys --version >"$work/nsys-version.txt" 2>&1 || true
  cp "$work"/*.txt "$work"/*.err "$work/run.json" "$R/" 2>/dev/null || true
}

# --- laps ---------------------------------------------------------------------------------------
# The default table: laptime, then PyTorch eager at the same shapes (and its _scaled_mm fp8 for GPT-2).
LAPS_DEFAULT="laptime_gpt2_bf16_b8::gpt2 -p bf16
laptime_gpt2_fp8_b8::gpt2 -p fp8
laptime_gpt2_tf32_b8::gpt2 -p tf32
laptime_gpt2_fp32_b8::gpt2 -p fp32
laptime_gpt2_bf16_b8_graph::gpt2 -p bf16 --graph
laptime_gpt2_bf16_b8_timed:LAPTIME_GPT2_GEMM=timed:gpt2 -p bf16
laptime_gpt2_bf16_b1_graph::gpt2 -p bf16 -b 1 --graph
laptime_gpt2_fp8_b1_graph::gpt2 -p fp8 -b 1 --graph
laptime_resnet50_bf16_b256::resnet50 -p bf16
laptime_resnet50_fp8_b256::resnet50 -p fp8
laptime_resnet50_tf32_b256::resnet50 -p tf32
laptime_resnet50_fp32_b256::resnet50 -p fp32
laptime_resnet50_bf16_b256_graph::resnet50 -p bf16 --graph
laptime_resnet50_bf16_b32_graph::resnet50 -p bf16 -b 32 --graph
laptime_resnet50_fp8_b32_graph::resnet50 -p fp8 -b 32 --graph
laptime_resnet50_bf16_b1_graph::resnet50 -p bf16 -b 1 --graph
laptime_resnet50_fp8_b1_graph::resnet50 -p fp8 -b 1 --graph
torch_gpt2_bf16_b8::gpt2 --precision bf16
torch_gpt2_fp8_b8::gpt2 --precision fp8
torch_gpt2_tf32_b8::gpt2 --precision tf32
torch_gpt2_fp32_b8::gpt2 --precision fp32
torch_gpt2_bf16_b1::gpt2 --precision bf16 -b 1
torch_resnet50_bf16_b256::resnet50 --precision bf16
torch_resnet50_tf32_b256::resnet50 --precision tf32
torch_resnet50_fp32_b256::resnet50 --precision fp32
torch_resnet50_bf16_b32::resnet50 --precision bf16 -b 32
torch_resnet50_bf16_b1::resnet50 --precision bf16 -b 1"

# Several bench/torch_baseline.py rows in one Python process: python3 -c "$(torch_rows_py)" RESULTS
# NAME "ARGS" [NAME "ARGS" ...]. Each row is torch_baseline.main(ARGS + ["--json",
# RESULTS/json/NAME.json]), what `python3 bench/torch_baseline.py ARGS --json ...` runs, its report
# in RESULTS/NAME.log. Why: a PyTorch row took 18-19 s on the H200 machine, most of it importing
# torch and transformers before a ~1 s loop; here they are imported once. Each row still builds its
# own model and inputs, the previous row's freed first. A failing row does not stop the next.
torch_rows_py() {
  cat <<'PY'
import contextlib, gc, os, pathlib, shlex, sys, time, traceback
sys.path.insert(0, os.path.join(os.environ["LAPTIME_SOURCE_DIR"], "bench"))
import torch_baseline  # noqa: E402  (bench/ is not a package)

def run_row(results, name, args):
    argv = shlex.split(args) + ["--json", str(results / "json" / f"{name}.json")]
    with open(results / f"{name}.log", "w") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        try:
            return torch_baseline.main(argv)
        except BaseException:  # argparse's SystemExit included: the row failed, the next one runs
            traceback.print_exc()
            return 1
        finally:
            gc.collect()
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                torch.cuda.empty_cache()

results = pathlib.Path(sys.argv[1])
(results / "json").mkdir(parents=True, exist_ok=True)
failed = False
for name, args in zip(sys.argv[2::2], sys.argv[3::2]):
    t0 = time.monotonic()
    rc = run_row(results, name, args)
    print(f"{name} (one process): rc={rc} {time.monotonic() - t0:.0f}s", flush=True)
    failed |= rc != 0
sys.exit(1 if failed else 0)
PY
}

# torch_batch MODEL NAME "ARGS" ...: the rows in one process, then alone any that left no report.
torch_batch() {
  local model=$1
  shift
  (($#)) || return 0
  step "rows_torch_$model" 240 python3 -c "$(torch_rows_py)" "$R" "$@"
  cat "$R/rows_torch_$model.log" >>"$S"
  while (($# >= 2)); do
    if [[ ! -s $R/json/$1.json ]]; then
      # shellcheck disable=SC2086  # ARGS is a word list
      step "$1" 200 python3 bench/torch_baseline.py $2 --json "$R/json/$1.json"
    fi
    shift 2
  done
}

part_laps() {
  need "$L"
  local rows=${ROWS:-$LAPS_DEFAULT} line name rest envs args gpt2=() resnet50=()
  while IFS= read -r line; do
    [[ -z ${line// /} || $line == \#* ]] && continue
    name=${line%%:*} rest=${line#*:}
    envs=${rest%%:*} args=${rest#*:}
    case $name in
      laptime_*)
        # shellcheck disable=SC2086  # ENV and ARGS are word lists
        step "$name" 120 env ${envs//,/ } "$L" bench $args "${LOOP[@]}" --json "$R/json/$name.json" ;;
      torch_*)
        if [[ -n $envs ]]; then  # an environment of its own: a process of its own
          # shellcheck disable=SC2086
          step "$name" 200 env ${envs//,/ } python3 bench/torch_baseline.py $args "${LOOP[@]}" --json "$R/json/$name.json"
        elif [[ $args == gpt2* ]]; then gpt2+=("$name" "$args ${LOOP[*]}")
        else resnet50+=("$name" "$args ${LOOP[*]}")
        fi ;;
      *) say "$name: not a row (NAME is laptime_* or torch_*)"; status=1 ;;
    esac
  done <<<"$rows"
  torch_batch gpt2 "${gpt2[@]}"
  torch_batch resnet50 "${resnet50[@]}"
}

# --- compile ------------------------------------------------------------------------------------
part_compile() {
  local mode=${COMPILE_MODE:-default} suffix rows
  case $mode in
    default) suffix=compile ;;
    max-autotune-no-cudagraphs) suffix=maxautotune ;;
    *) suffix=${mode//-/_} ;;
  esac
  rows="gpt2_bf16_b8:gpt2
resnet50_bf16_b256:resnet50"
  [[ ${SHAPES:-} == all ]] && rows+="
gpt2_bf16_b1:gpt2 -b 1
resnet50_bf16_b32:resnet50 -b 32
resnet50_bf16_b1:resnet50 -b 1"
  [[ ${SHAPES:-} == resnet50 ]] && rows="resnet50_bf16_b256:resnet50"
  # Inductor's cache (the autotuning results per shape among it): carried into a later call, it
  # spares the shapes already tuned.
  export TORCHINDUCTOR_CACHE_DIR=$REPO/.inductor-cache
  local line name
  while IFS= read -r line; do
    name=torch_${line%%:*}_$suffix
    # shellcheck disable=SC2086  # the arguments are a word list
    step "$name" "${TORCH_LIMIT:-300}" python3 bench/torch_baseline.py ${line#*:} --precision bf16 --compile \
      --compile-mode "$mode" "${LOOP[@]}" --json "$R/json/$name.json"
    [[ -s $R/json/$name.json || -z ${OUT:-} ]] || tar czf "$OUT/inductor-cache.tgz" -C "$REPO" .inductor-cache
  done <<<"$rows"
}

# --- layers -------------------------------------------------------------------------------------
part_layers() {
  need "$L"
  local p=${PRECISION:-fp8} line name
  local traces=${TRACES:-"gpt2_bf16:gpt2 -p bf16
gpt2_$p:gpt2 -p $p
resnet50_bf16:resnet50 -p bf16
resnet50_$p:resnet50 -p $p"}
  local diffs=${DIFFS:-"gpt2_bf16:gpt2_$p resnet50_bf16:resnet50_$p"}
  step peak 60 "$L" peak --force --cache "$R/peak.json"
  while IFS= read -r line; do
    [[ -z $line ]] && continue
    name=${line%%:*}
    # shellcheck disable=SC2086  # the arguments are a word list
    step "trace_$name" 90 "$L" bench ${line#*:} --nvtx layer --warmup 3 --iters 10 --trace "$R/$name.sqlite" || continue
    step "analyze_$name" 30 "$L" analyze "$R/$name.sqlite" --peak "$R/peak.json"
    sed -n '/^Roofline per layer/,/^$/p' "$R/analyze_$name.log" | cut -c1-200 | head -30 >>"$S"
  done <<<"$traces"
  local pair
  for pair in $diffs; do
    name=diff_${pair%%:*}_vs_${pair#*:}
    step "$name" 30 "$L" diff "$R/${pair%%:*}.sqlite" "$R/${pair#*:}.sqlite" --peak "$R/peak.json"
    sed -n '/^  layer /,$p' "$R/$name.log" | head -30 >>"$S"
  done
  rm -f "$R"/*.sqlite  # large: the analyses, the diffs and the sidecars are what comes back
}

# --- roofline -------------------------------------------------------------------------------------
# For every layer of `laptime analyze --json`'s roofline, the % of its bound recomputed from the
# bench's own counts (the sidecar beside its --json: FLOPs and bytes), the layer's time from the
# analysis's range table (GPU time by innermost NVTX range over the steady iterations: an
# independent path through the trace) and `laptime peak`'s ceilings; agreement within 2%, and
# the sidecar's FLOPs (the leaves' sum) equal to the report's flops_per_forward.
roofline_check_py() {
  cat <<'PY'
import json, os, sys
bench_path, analyze_path, peak_path = sys.argv[1:4]
bench, analyze, peak = (json.load(open(p)) for p in (bench_path, analyze_path, peak_path))
sidecar = json.load(open(os.path.splitext(bench_path)[0] + ".layers.json"))
roof = analyze.get("roofline")
if roof is None:
    sys.exit(f"{analyze_path}: no roofline section (was the sidecar beside the trace?)")
layers = {l["name"]: l for l in sidecar["layers"]}
parents = {l["parent"] for l in sidecar["layers"] if l["parent"]}
leaf_flops = sum(l["flops"] for l in sidecar["layers"] if l["name"] not in parents)
failures = 0
if abs(leaf_flops - bench["flops_per_forward"]) > 1e-9 * bench["flops_per_forward"]:
    print(f"sidecar FLOPs {leaf_flops:.6g} != bench flops_per_forward {bench['flops_per_forward']:.6g}")
    failures += 1
steady = analyze["steady_iterations"]
range_ns = {r["range"]: r["time_ns"] for r in analyze["kernel_mix"]["ranges"]}
tflops = peak["tflops"][sidecar["precision"]] * 1e12
bw = peak["copy_gbps"] * 1e9
worst = 0.0
for row in roof["layers"]:
    e = layers[row["name"]]
    nbytes = e["bytes"]["weights"] + e["bytes"]["inputs"] + e["bytes"]["outputs"]
    if row["name"] not in range_ns:
        print(f"{row['name']}: not an innermost range in the analysis (nested ranges inside it?)")
        failures += 1
        continue
    seconds = range_ns[row["name"]] / steady * 1e-9
    compute = e["flops"] / nbytes >= tflops / bw
    expected = 100 * (e["flops"] / seconds / tflops if compute else nbytes / seconds / bw)
    dev = abs(row["pct_of_bound"] - expected) / expected if expected else 0.0
    worst = max(worst, dev)
    if dev > 0.02 or row["bound"] != ("compute" if compute else "memory"):
        print(f"{row['name']}: roofline {row['pct_of_bound']:.2f}% {row['bound']}, "
              f"bench FLOPs/time {expected:.2f}% {'compute' if compute else 'memory'}")
        failures += 1
print(f"{sidecar['model']}: {len(roof['layers'])} layers, worst deviation {100 * worst:.3f}%, "
      f"{failures} disagreement(s) over 2%")
sys.exit(1 if failures else 0)
PY
}

part_roofline() {
  need "$L"
  local m p=${PRECISION:-bf16}
  work=$(mktemp -d)  # the traces stay on the device
  trap 'rm -rf "$work"' EXIT
  [[ -x $T/test_layer_costs ]] && step tests 120 "$T/test_layer_costs"
  step peak 60 "$L" peak --force --cache "$R/peak.json" || return 0
  for m in ${MODELS:-gpt2 resnet50}; do
    step "bench_$m" 120 "$L" bench "$m" --precision "$p" --nvtx layer --warmup 5 --iters 20 \
      --trace "$work/$m.sqlite" --json "$work/$m.json" || continue
    cp "$work/$m.json" "$work/$m.layers.json" "$R/json/" 2>/dev/null
    step "analyze_$m" 60 "$L" analyze "$work/$m.sqlite" --peak "$R/peak.json" \
      --roofline-svg "$R/$m.roofline.svg" --json "$R/$m.analyze.json" || continue
    sed -n '/^Roofline per layer/,/^wrote/p' "$R/analyze_$m.log" >>"$S"
    step "check_$m" 30 python3 -c "$(roofline_check_py)" "$work/$m.json" "$R/$m.analyze.json" "$R/peak.json"
    cat "$R/check_$m.log" >>"$S"
  done
}

# --- ab -----------------------------------------------------------------------------------------
part_ab() {
  local name=${1:?usage: device-call.sh ab NAME ROUNDS BEFORE_BIN AFTER_BIN -- BENCH_ARGS...}
  local rounds=${2:?ROUNDS} before=${3:?BEFORE_BIN} after=${4:?AFTER_BIN} i side bin
  shift 4
  [[ ${1:-} == -- ]] && shift
  need "$before"
  need "$after"
  for ((i = 1; i <= rounds; ++i)); do
    for side in before after; do
      bin=$before
      [[ $side == after ]] && bin=$after
      step "laptime_${name}_${side}_$i" 120 "$bin" bench "$@" --nvtx iter --json "$R/json/laptime_${name}_${side}_$i.json"
    done
  done
}

# --- analyzer -----------------------------------------------------------------------------------
part_analyzer() {
  step analyzer_bench 560 bash scripts/dev/analyzer-bench.sh "$R" "$L"
  tail -12 "$R/analyzer-bench.txt" >>"$S" 2>&1
}

# --- cutlass: CUTLASS's GEMMs beside cuBLASLt ---------------------------------------------------
# The integration's A/B: the same timed build with CUTLASS's candidates withheld, then offered.
CUTLASS_ROWS="laptime_gpt2_bf16_b8_cublaslt:LAPTIME_GPT2_GEMM=timed,LAPTIME_CUTLASS=off:gpt2 -p bf16
laptime_gpt2_bf16_b8_cutlass:LAPTIME_GPT2_GEMM=timed:gpt2 -p bf16
laptime_gpt2_fp8_b8_cublaslt:LAPTIME_GPT2_GEMM=timed,LAPTIME_CUTLASS=off:gpt2 -p fp8
laptime_gpt2_fp8_b8_cutlass:LAPTIME_GPT2_GEMM=timed:gpt2 -p fp8
laptime_gpt2_bf16_b1_graph_cublaslt:LAPTIME_GPT2_GEMM=timed,LAPTIME_CUTLASS=off:gpt2 -p bf16 -b 1 --graph
laptime_gpt2_bf16_b1_graph_cutlass:LAPTIME_GPT2_GEMM=timed:gpt2 -p bf16 -b 1 --graph
laptime_gpt2_bf16_b8::gpt2 -p bf16
laptime_gpt2_fp8_b8::gpt2 -p fp8
laptime_gpt2_bf16_b1::gpt2 -p bf16 -b 1
laptime_gpt2_fp8_b1::gpt2 -p fp8 -b 1
laptime_resnet50_bf16_b1::resnet50 -p bf16 -b 1
laptime_resnet50_fp8_b1::resnet50 -p fp8 -b 1"
part_cutlass() {
  need "$B/bench/laptime_cutlass_probe"
  : >"$R/par.txt"
  par cutlass_gemm "$T/test_cutlass_gemm"
  par gemm_tuner "$T/test_gemm_tuner"
  par gpt2_timed "$T/test_gpt2_layers" --gtest_filter='*LinearTimedAlgorithm*:*WholeModelInGraph*'
  par fp8_layers "$T/test_fp8_layers"
  wait
  sort "$R/par.txt" >>"$S"
  grep -q 'rc=[^0]' "$R/par.txt" && status=1
  local f
  for f in cutlass_gemm gemm_tuner gpt2_timed fp8_layers; do say "  $f: $(gtest_line "$R/$f.log")"; done
  grep -hE -A4 "Failure$" "$R"/{cutlass_gemm,gemm_tuner,gpt2_timed,fp8_layers}.log 2>/dev/null | cut -c1-300 | head -30 >>"$S"
  # Alone on the GPU; not in json/ (bench/compare.py reads that folder's lap reports).
  step cutlass_probe 120 "$B/bench/laptime_cutlass_probe" --json "$R/cutlass_probe.json"
  cat "$R/cutlass_probe.log" >>"$S"
  if [[ -x $B/bench/laptime_sdpa_probe ]]; then  # cuDNN's fp8 attention beside its bf16 one
    step sdpa_probe 60 "$B/bench/laptime_sdpa_probe"
    cat "$R/sdpa_probe.log" >>"$S"
  fi
  ROWS=${ROWS:-$CUTLASS_ROWS} part_laps
  say "fp8 plans with CUTLASS offered (B8):"
  sed -n '/^  plans/,/^  layers/p' "$R/laptime_gpt2_fp8_b8_cutlass.log" 2>/dev/null | grep -v '^  layers' | cut -c1-400 >>"$S"
}

# --- table: docs/PERF.md's table in one call ------------------------------------------------------
TABLE_ROWS="laptime_gpt2_bf16_b8::gpt2 -p bf16
laptime_gpt2_fp8_b8::gpt2 -p fp8
laptime_gpt2_bf16_b8_graph::gpt2 -p bf16 --graph
laptime_gpt2_fp8_b8_graph::gpt2 -p fp8 --graph
laptime_gpt2_bf16_b1_graph::gpt2 -p bf16 -b 1 --graph
laptime_gpt2_fp8_b1_graph::gpt2 -p fp8 -b 1 --graph
laptime_resnet50_bf16_b256::resnet50 -p bf16
laptime_resnet50_fp8_b256::resnet50 -p fp8
laptime_resnet50_bf16_b32_graph::resnet50 -p bf16 -b 32 --graph
laptime_resnet50_fp8_b32_graph::resnet50 -p fp8 -b 32 --graph
laptime_resnet50_bf16_b1_graph::resnet50 -p bf16 -b 1 --graph
laptime_resnet50_fp8_b1_graph::resnet50 -p fp8 -b 1 --graph
laptime_resnet50_bf16_b1::resnet50 -p bf16 -b 1
laptime_resnet50_fp8_b1::resnet50 -p fp8 -b 1
torch_gpt2_bf16_b8::gpt2 --precision bf16
torch_gpt2_fp8_b8::gpt2 --precision fp8
torch_gpt2_bf16_b1::gpt2 --precision bf16 -b 1
torch_resnet50_bf16_b256::resnet50 --precision bf16
torch_resnet50_bf16_b32::resnet50 --precision bf16 -b 32
torch_resnet50_bf16_b1::resnet50 --precision bf16 -b 1"
# sub PART [VAR=value...]: another part of this script in the same call, under the same $RESULTS,
# packing its own $OUT/device-call-PART.tgz; its summary appended to this part's.
sub() {
  local name=$1
  shift
  env "$@" RESULTS="$RESULTS_ROOT" bash "$REPO/scripts/dev/device-call.sh" "$name" >/dev/null || status=1
  cat "$RESULTS_ROOT/$name/summary.txt" >>"$S" 2>/dev/null
  pack
}
part_table() {
  need "$L"
  sub laps ROWS="${ROWS:-$TABLE_ROWS}" BUDGET="${LAPS_BUDGET:-330}"
  sub compile BUDGET="${COMPILE_BUDGET:-220}" TORCH_LIMIT=150
  [[ ${ENERGY:-1} == 1 ]] && sub energy BUDGET="${ENERGY_BUDGET:-260}"
  [[ ${LAYERS:-1} == 1 ]] && sub layers BUDGET="${LAYERS_BUDGET:-110}"
  local energy=()
  compgen -G "$RESULTS_ROOT/energy/json/*.json" >/dev/null && energy=("$RESULTS_ROOT"/energy/json/*.json)
  python3 bench/compare.py "$RESULTS_ROOT"/laps/json/*.json "$RESULTS_ROOT"/compile/json/*.json "${energy[@]}" \
    >"$R/table.txt" 2>&1
  cat "$R/table.txt" >>"$S"
}

# --- energy: the table's rows with enough laps for NVML's energy counter ---------------------------
# The counter steps every few tens of ms, longer than any lap: twenty laps of a few ms hold a step
# or two, and the bench then says so instead of a figure (bench/energy.h). Each row here runs about
# 1.5 s of steady laps (--iters from the table's lap: 1500 ms / lap), 10 or more of the counter's
# blocks; the lap rows of the table stay the median of 20.
ENERGY_ROWS="laptime_gpt2_bf16_b8_energy::gpt2 -p bf16 --iters 400
laptime_gpt2_fp8_b8_energy::gpt2 -p fp8 --iters 560
laptime_gpt2_bf16_b8_graph_energy::gpt2 -p bf16 --graph --iters 400
laptime_gpt2_fp8_b8_graph_energy::gpt2 -p fp8 --graph --iters 560
laptime_gpt2_bf16_b1_graph_energy::gpt2 -p bf16 -b 1 --graph --iters 1900
laptime_gpt2_fp8_b1_graph_energy::gpt2 -p fp8 -b 1 --graph --iters 2200
laptime_resnet50_bf16_b256_energy::resnet50 -p bf16 --iters 300
laptime_resnet50_fp8_b256_energy::resnet50 -p fp8 --iters 400
laptime_resnet50_bf16_b32_graph_energy::resnet50 -p bf16 -b 32 --graph --iters 1700
laptime_resnet50_fp8_b32_graph_energy::resnet50 -p fp8 -b 32 --graph --iters 2300
laptime_resnet50_bf16_b1_graph_energy::resnet50 -p bf16 -b 1 --graph --iters 5300
laptime_resnet50_fp8_b1_graph_energy::resnet50 -p fp8 -b 1 --graph --iters 4700
torch_gpt2_bf16_b8_energy::gpt2 --precision bf16 --iters 100
torch_gpt2_fp8_b8_energy::gpt2 --precision fp8 --iters 90
torch_gpt2_bf16_b1_energy::gpt2 --precision bf16 -b 1 --iters 200
torch_resnet50_bf16_b256_energy::resnet50 --precision bf16 --iters 90
torch_resnet50_bf16_b32_energy::resnet50 --precision bf16 -b 32 --iters 230
torch_resnet50_bf16_b1_energy::resnet50 --precision bf16 -b 1 --iters 250"
part_energy() {
  need "$L"
  LOOP=(--nvtx iter --warmup 5)
  ROWS=${ROWS:-$ENERGY_ROWS} part_laps
  # torch.compile's rows: compiled again in this process, from the Inductor cache when the compile
  # part ran before on this machine.
  export TORCHINDUCTOR_CACHE_DIR=$REPO/.inductor-cache
  local line name
  while IFS= read -r line; do
    name=torch_${line%%:*}_compile_energy
    # shellcheck disable=SC2086  # the arguments are a word list
    step "$name" "${TORCH_LIMIT:-150}" python3 bench/torch_baseline.py ${line#*:} --precision bf16 --compile \
      "${LOOP[@]}" --json "$R/json/$name.json"
  done <<<"gpt2_bf16_b8:gpt2 --iters 260
resnet50_bf16_b256:resnet50 --iters 140"
}

# --- stream: fp8 ResNet-50 on the e4m3 stream ------------------------------------------------------
STREAM_ROWS="laptime_resnet50_bf16_b256::resnet50 -p bf16
laptime_resnet50_fp8_b256::resnet50 -p fp8
laptime_resnet50_fp8layers_b256:LAPTIME_RESNET_FP8=layers:resnet50 -p fp8
laptime_resnet50_fp8_b32_graph::resnet50 -p fp8 -b 32 --graph
laptime_resnet50_bf16_b32_graph::resnet50 -p bf16 -b 32 --graph
laptime_resnet50_fp8_b1_graph::resnet50 -p fp8 -b 1 --graph
laptime_resnet50_fp8_b1::resnet50 -p fp8 -b 1"
part_stream() {
  need "$L"
  : >"$R/par.txt"
  local t
  for t in test_e4m3_stream test_cutlass_gemm test_fp8_layers test_layer_costs; do par "$t" "$T/$t"; done
  step e2e_resnet50 "${E2E_LIMIT:-330}" python3 tests/e2e/check_resnet50.py --laptime "$L" \
    --precisions "${PRECISIONS:-bf16,fp8}" --batches 32,3
  grep -A20 '^summary:' "$R/e2e_resnet50.log" >>"$S"
  wait
  sort "$R/par.txt" >>"$S"
  grep -q 'rc=[^0]' "$R/par.txt" && status=1
  for t in test_e4m3_stream test_cutlass_gemm test_fp8_layers test_layer_costs; do say "  $t: $(gtest_line "$R/$t.log")"; done
  pack
  sub laps ROWS="${ROWS:-$STREAM_ROWS}" BUDGET="${LAPS_BUDGET:-240}"
  [[ ${COMPILE:-0} == 1 ]] && sub compile SHAPES=resnet50 BUDGET="${COMPILE_BUDGET:-170}" TORCH_LIMIT=160
  python3 bench/compare.py "$RESULTS_ROOT"/laps/json/*.json "$RESULTS_ROOT"/compile/json/*.json >"$R/table.txt" 2>&1
  cat "$R/table.txt" >>"$S"
  if [[ ${LAYERS:-1} == 1 ]]; then  # fp8's per-layer capture, analyzed against each layer's roof
    sub layers TRACES="resnet50_fp8:resnet50 -p fp8" DIFFS="" BUDGET="${LAYERS_BUDGET:-120}"
    awk '/^Roofline per layer/{f=1} f' "$RESULTS_ROOT/layers/analyze_resnet50_fp8.log" | head -40 >>"$S"
  fi
  if [[ ${NCU:-0} == 1 ]]; then  # Nsight Compute on the stream's memory-bound kernels, one iteration
    local inc=() r
    for r in ${NCU_RANGES:-layer1.0/layer1.0.conv2 layer1.0/layer1.0.conv3 layer1.0/layer1.0.downsample layer2.1/layer2.1.conv3}; do
      inc+=(--nvtx-include "laptime@forward/$r/")
    done
    step ncu "${NCU_LIMIT:-200}" ncu --nvtx "${inc[@]}" --set full -f -o "$R/stream_ncu" \
      "$L" bench resnet50 -p fp8 -w 0 -n 1
    ncu --import "$R/stream_ncu.ncu-rep" --page details >"$R/ncu_details.txt" 2>&1
    grep -E '^  [a-z_].*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Block Limit|Theoretical Occupancy|Compute \(SM\) Throughput|L2 Hit' \
      "$R/ncu_details.txt" | head -80 >>"$S"
  fi
}

# --- lab: every kernel's ladder checked and timed against the roofs ----------------------------------
part_lab() {
  need "$L"
  local laptime
  laptime=$(realpath "$L")
  PACK_EXCLUDE=(--exclude='*.nsys-rep' --exclude='*.sqlite')
  mkdir -p "$R/lab" "$R/ncu" "$R/captures" "$R/diff"
  # 1-2. The roofs, and the registry.
  step peak 60 "$laptime" peak --cache "$R/peak.json"
  local peak=()
  [[ -f $R/peak.json ]] && peak=(--peak "$R/peak.json")
  step list 30 "$laptime" lab --list --json "$R/lab/list.json"
  # 3. Every kernel in its default precision (attention in fp32 too), every version.
  local kernel precision
  while read -r kernel precision; do
    step "lab_${kernel}_$precision" 60 "$laptime" lab "$kernel" -p "$precision" "${peak[@]}" \
      --json "$R/lab/${kernel}_$precision.json"
    cp "$R/lab_${kernel}_$precision.log" "$R/lab/${kernel}_$precision.txt"
  done < <(python3 -c '
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    for p in k["precisions"][:1] + (["fp32"] if k["name"] == "attention" else []):
        print(k["name"], p)' "$R/lab/list.json")
  # 4. The lab's tests on the GPU (and its CLI tests with a GPU present).
  step test_lab_kernels 150 "$T/test_lab_kernels"
  step test_lab_cli 60 "$T/test_lab_cli"
  gtest_line "$R"/test_lab_*.log | sed 's/^/  /' >>"$S"
  # 5. ncu over one ladder, as `laptime kernels --command` prints it, then the report by version.
  (cd "$R/ncu" && "$laptime" kernels --command lab layernorm --binary "$laptime" >command.txt &&
    grep -m1 '^  ncu ' command.txt | sed 's/^  //' >command.sh)
  step ncu_lab_layernorm 90 bash -c "cd '$R/ncu' && bash command.sh"
  step kernels_lab_layernorm 30 "$laptime" kernels "$R/ncu/lab_layernorm.ncu-rep" "${peak[@]}" \
    --json "$R/ncu/lab_layernorm.kernels.json"
  # 6. The whole model with LayerNorm v1 against the default, captured and diffed.
  local name
  for name in gpt2_default gpt2_layernorm_v1; do
    local extra=()
    [[ $name == gpt2_layernorm_v1 ]] && extra=(--kernel layernorm=v1)
    step "capture_$name" 60 nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none \
      --force-overwrite=true -o "$R/captures/$name" "$laptime" bench gpt2 -w 5 -n 30 --json "$R/captures/$name.json" "${extra[@]}" &&
      step "export_$name" 60 nsys export --type sqlite --force-overwrite=true -o "$R/captures/$name.sqlite" \
        "$R/captures/$name.nsys-rep"
  done
  step diff_layernorm_v1 60 "$laptime" diff "$R/captures/gpt2_default.sqlite" "$R/captures/gpt2_layernorm_v1.sqlite" \
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
}

# lab-try: a learner's own kernel file (docs/KERNELS.md "Write your own"), ~6 minutes on an H200.
part_lab_try() {
  need "$L"
  local laptime
  laptime=$(realpath "$L")
  PACK_EXCLUDE=(--exclude='*.nsys-rep' --exclude='*.sqlite' --exclude=./cache)
  local peak=()
  local EX=$REPO/kernels/lab/examples
  mkdir -p "$R/lab" "$R/files" "$R/ncu" "$R/captures" "$R/diff" "$R/cache"
  export LAPTIME_CACHE_DIR=$R/cache  # the compiled files' cache: what the run made, nothing older
  # check WHAT PYTHON_EXPR FILE...: an OK or NOT OK line in the summary, from a few lines of Python
  # over the lab's JSON reports (r[0], r[1], ... in the order given).
  lab_check() {
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

  # 1. The roofs.
  step peak 60 "$laptime" peak --cache "$R/peak.json"
  [[ -f $R/peak.json ]] && peak=(--peak "$R/peak.json")

  # 2. The templates, as written, beside their ladders.
  for k in layernorm attention quantize; do
    "$laptime" lab "$k" --template "$R/files/${k}_template.cu" >/dev/null
    step "lab_${k}_template" 120 "$laptime" lab "$k" --try "$R/files/${k}_template.cu" "${peak[@]}" \
      --json "$R/lab/${k}_template.json"
    cp "$R/lab_${k}_template.log" "$R/lab/${k}_template.txt"
    lab_check "$k: the template passes its checks and is timed" \
      "rung(r[0], '${k}_template.cu')['status'] == 'passed' and rung(r[0], '${k}_template.cu')['timings']" \
      "$R/lab/${k}_template.json"
  done

  # 3. The wrong layernorms.
  step lab_layernorm_wrong 120 "$laptime" lab layernorm --versions v1 --try "$EX/wrong/layernorm_off_by_one_row.cu" \
    --try "$EX/wrong/layernorm_unwritten_tail.cu" --try "$EX/wrong/layernorm_race.cu" "${peak[@]}" \
    --json "$R/lab/layernorm_wrong.json"
  cp "$R/lab_layernorm_wrong.log" "$R/lab/layernorm_wrong.txt"
  for f in off_by_one_row unwritten_tail race; do
    lab_check "layernorm_$f.cu: FAILED, never timed" \
      "rung(r[0], 'layernorm_$f.cu')['status'] == 'FAILED' and not rung(r[0], 'layernorm_$f.cu')['timings']" \
      "$R/lab/layernorm_wrong.json"
  done
  lab_check "the ladder's v1 passed beside the wrong files" "rung(r[0], 'v1')['status'] == 'passed'" \
    "$R/lab/layernorm_wrong.json"

  # 4. The worked example: v1 (the template) to v2.
  cp "$R/files/layernorm_template.cu" "$R/files/layernorm_v1.cu"
  step lab_layernorm_v1_v2 120 "$laptime" lab layernorm --try "$R/files/layernorm_v1.cu" --try "$EX/layernorm_v2.cu" \
    "${peak[@]}" --json "$R/lab/layernorm_v1_v2.json"
  cp "$R/lab_layernorm_v1_v2.log" "$R/lab/layernorm_v1_v2.txt"
  lab_check "layernorm_v2.cu beats the template" "med(r[0], 'layernorm_v2.cu') < med(r[0], 'layernorm_v1.cu')" \
    "$R/lab/layernorm_v1_v2.json"

  # 5. What a file must not do to the lab: each a rung FAILED, the lab's exit 1, in bounded time.
  # The files are kernels/lab/examples/hostile/ (the template with one edit each; test_lab_try holds
  # them to that and runs them too).
  hostile() {  # hostile NAME WHAT_THE_DETAIL_SAYS
    cp "$EX/hostile/$1.cu" "$R/files/$1.cu"
    step "lab_hostile_$1" 90 "$laptime" lab layernorm --versions none --timeout 3 --try "$R/files/$1.cu" \
      --json "$R/lab/hostile_$1.json"
    cp "$R/lab_hostile_$1.log" "$R/lab/hostile_$1.txt"
    lab_check "$1.cu: FAILED (\"$2\")" \
      "rung(r[0], '$1.cu')['status'] == 'FAILED' and '$2' in ' '.join(c['detail'] for c in rung(r[0], '$1.cu')['checks'])" \
      "$R/lab/hostile_$1.json"
  }
  hostile hang "passed --timeout 3 s"
  hostile fault "compute-sanitizer --tool memcheck"
  hostile bad_shape "asked for a block of 0 x 1 x 1"
  hostile huge_launch "passed --timeout 3 s"
  hostile stray_write "wrote past the end"
  # The sanitizer command a fault prints, run as printed: it names the line.
  grep -o "compute-sanitizer --tool memcheck [^;]*--once[^ ]*" "$R/lab/hostile_fault.txt" | head -1 >"$R/files/sanitize.sh"
  [[ -s $R/files/sanitize.sh ]] && step sanitize_fault 120 bash "$R/files/sanitize.sh"

  # 6. Into the model, and the diff.
  capture() {
    local name=$1; shift
    step "capture_$name" 90 nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none \
      --force-overwrite=true -o "$R/captures/$name" "$laptime" bench gpt2 -w 5 -n 30 --json "$R/captures/$name.json" "$@" &&
      step "export_$name" 60 nsys export --type sqlite --force-overwrite=true -o "$R/captures/$name.sqlite" \
        "$R/captures/$name.nsys-rep"
  }
  capture gpt2_default
  capture gpt2_layernorm_v2 --kernel layernorm="$EX/layernorm_v2.cu"
  capture gpt2_layernorm_v1 --kernel layernorm="$R/files/layernorm_v1.cu"
  for v in v2 v1; do
    step "diff_layernorm_$v" 60 "$laptime" diff "$R/captures/gpt2_default.sqlite" "$R/captures/gpt2_layernorm_$v.sqlite" \
      --skip-warmup 5 --json "$R/diff/layernorm_$v.json" --svg "$R/diff/layernorm_$v.svg"
    cp "$R/diff_layernorm_$v.log" "$R/diff/layernorm_$v.txt" 2>/dev/null
    grep -m1 '^Verdict' "$R/diff/layernorm_$v.txt" | sed 's/^/  /' >>"$S"
  done
  lab_check "the bench's JSON names the file and its SHA-256" \
    "r[0]['config']['kernel_files'][0]['sha256'] == __import__('hashlib').sha256(open('$EX/layernorm_v2.cu','rb').read()).hexdigest()" \
    "$R/captures/gpt2_layernorm_v2.json"

  # 7. ncu over the file's rung, as `laptime kernels --command` prints it.
  (cd "$R/ncu" && "$laptime" kernels --command lab layernorm --try "$EX/layernorm_v2.cu" --binary "$laptime" >command.txt &&
    grep -m1 '^  ncu ' command.txt | sed 's/^  //' >command.sh)
  step ncu_lab_layernorm_try 120 bash -c "cd '$R/ncu' && bash command.sh"
  step kernels_lab_layernorm_try 30 "$laptime" kernels "$R/ncu/lab_layernorm.ncu-rep" \
    "${peak[@]}" --json "$R/ncu/lab_layernorm.kernels.json"
  grep -q "layernorm_v2.cu" "$R/kernels_lab_layernorm_try.log" && echo "  OK      ncu's report has the file's rung" >>"$S" ||
    echo "  NOT OK  ncu's report has the file's rung" >>"$S"

  # 8. Every kernel's first and production versions.
  step lab_all 300 "$laptime" lab --all "${peak[@]}" --json "$R/lab/all.json"
  cp "$R/lab_all.log" "$R/lab/all.txt"

  # 9. The suite's GPU tests.
  step test_lab_try 300 "$T/test_lab_try"
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
}

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())'
  git log -1 --format='%h %s' 2>/dev/null | cut -c1-100
  echo "device-call.sh $part $*: $(nproc) cores, $(date -u)"; } >"$S" 2>&1
case $part in
  interrupt | io | host-build)
    # The checks run as in their own script: a failed command stops them (set -e), each in a subshell.
    (set -e; "part_${part//-/_}"; exit $((failures > 0)))
    status=$?
    say "$part: $([[ $status == 0 ]] && echo "all checks passed" || echo "a check failed")" ;;
  *) "part_${part//-/_}" "$@" ;;
esac
if compgen -G "$R/json/*.json" >/dev/null; then  # every report side by side (compare.py skips the sidecars)
  python3 bench/compare.py "$R"/json/*.json >"$R/compare.txt" 2>&1 && cat "$R/compare.txt" >>"$S"
fi
say "done at ${SECONDS}s, exit $status"
pack
cat "$S"
exit "$status"
