#!/usr/bin/env bash
# laptime analyze and diff against `nsys stats` (and a plain SQL pass over the same rows) on
# traces grown from a committed H200 capture, side by side on one machine:
#
#   scripts/dev/analyzer-bench.sh [OUTDIR] [LAPTIME] [NSYS]
#
# OUTDIR defaults to $OUT (the device run) or /tmp/analyzer-bench; LAPTIME to build/bench/laptime
# (or build/laptime); NSYS to `nsys` on PATH, else the newest /opt/nvidia/nsight-systems/*/bin/nsys
# or /usr/local/cuda/bin/nsys. Grows tests/fixtures/lesson/gpt2_max.sqlite (PyTorch GPT-2, the
# lesson's loop with its pitfalls: 238 kernels, 12 distinct names per iteration) to 10^6 and
# 5*10^6 kernels (tests/fixtures/grow_trace.py), and a 10^6 one with a range per op as PyTorch's
# emit_nvtx writes them, then times, one after the other:
#   - laptime analyze FILE (text report to /dev/null);
#   - laptime diff FILE FILE, and its time over analyze's (on the range-per-op trace also --by block:
#     every op a layer of its own);
#   - nsys stats --report nvtx_sum,cuda_gpu_kern_sum,cuda_api_sum, and nsys_stats nvtx_gpu_proj_sum;
#   - a plain SQL pass: the three reports' sums in one SELECT each (python's sqlite3).
# Each timing is wall seconds and the peak resident set (the child's ru_maxrss), printed as the
# a table and written to OUTDIR/analyzer-bench.txt (ANALYZER_BENCH_SIZES="..." and
# ANALYZER_BENCH_EMIT=N change the sizes, for a quick try on a laptop); the generated traces are deleted. About
# 3-4 minutes on the H200 host (16 cores; everything here is single-threaded).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-${OUT:-/tmp/analyzer-bench}}
laptime=${2:-}
nsys=${3:-}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/analyzer-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ -z $laptime ]]; then
  for c in "$here/build/bench/laptime" "$here/build/laptime" "$here/build-host/bench/laptime"; do
    [[ -x $c ]] && laptime=$c && break
  done
fi
[[ -x ${laptime:-} ]] || { echo "analyzer-bench: no laptime binary (pass it as the second argument)"; exit 1; }
if [[ -z $nsys ]]; then
  nsys=$(command -v nsys || true)
  [[ -z $nsys ]] && nsys=$(ls -d /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | sort -V | tail -1)
  [[ -z $nsys && -x /usr/local/cuda/bin/nsys ]] && nsys=/usr/local/cuda/bin/nsys
fi
report=$out/analyzer-bench.txt
: >"$report"
say() { echo "$*" | tee -a "$report"; }
say "laptime: $laptime ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
say "nsys:    ${nsys:-none} $([[ -n $nsys ]] && "$nsys" --version 2>/dev/null | head -1)"
say "cpu:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"

# measure NAME CMD...: wall seconds and peak RSS of CMD (stdout to a log), "s GB" on one line.
measure() {
  local name=$1; shift
  python3 - "$work/$name.log" "$@" <<'EOF'
import resource, subprocess, sys, time
log, cmd = sys.argv[1], sys.argv[2:]
t = time.time()
with open(log, "wb") as f:
    rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
wall = time.time() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6  # KB -> GB
print("%.2f s, %.2f GB%s" % (wall, rss, "" if rc == 0 else " (exit %d)" % rc))
EOF
}

cat >"$work/sql_pass.py" <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = [
  # nvtx_sum: ranges by name
  "SELECT COALESCE(e.text, s.value) AS n, COUNT(*), SUM(e.\"end\" - e.start), MIN(e.\"end\" - e.start), "
  "MAX(e.\"end\" - e.start) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
  "WHERE e.eventType IN (59, 60) AND e.\"end\" IS NOT NULL GROUP BY n",
  # cuda_gpu_kern_sum: kernels by name
  "SELECT shortName, COUNT(*), SUM(\"end\" - start), MIN(\"end\" - start), MAX(\"end\" - start) "
  "FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY shortName",
  # cuda_api_sum: API calls by name
  "SELECT nameId, COUNT(*), SUM(\"end\" - start), MIN(\"end\" - start), MAX(\"end\" - start) "
  "FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY nameId",
]
print(sum(len(db.execute(x).fetchall()) for x in q), "rows")
EOF

declare -A row
# ratio "A s, ..." "B s, ...": A / B, as "2.05x".
ratio() { python3 -c 'import sys; a, b = (float(x.split()[0]) for x in sys.argv[1:]); print("%.2fx" % (a / b if b else 0))' "$1" "$2"; }
run_case() {  # run_case LABEL FILE
  local label=$1 f=$2
  local mb=$(( $(stat -c %s "$f") / 1000000 ))
  row[$label.file]="$mb MB"
  row[$label.analyze]=$(measure "$label.analyze" "$laptime" analyze "$f")
  say "  $label analyze: ${row[$label.analyze]}"
  row[$label.diff]=$(measure "$label.diff" "$laptime" diff "$f" "$f")
  say "  $label diff:    ${row[$label.diff]} ($(ratio "${row[$label.diff]}" "${row[$label.analyze]}") analyze's time)"
  if [[ $label == emit ]]; then  # every op a layer of its own: the shape diff once handled quadratically
    row[$label.block]=$(measure "$label.block" "$laptime" diff "$f" "$f" --by block)
    say "  $label diff --by block: ${row[$label.block]}"
  fi
  row[$label.sql]=$(measure "$label.sql" python3 "$work/sql_pass.py" "$f")
  say "  $label SQL:     ${row[$label.sql]}"
  if [[ -n $nsys ]]; then
    row[$label.stats3]=$(measure "$label.stats3" "$nsys" stats --force-export=false -q --format csv \
      --report nvtx_sum,cuda_gpu_kern_sum,cuda_api_sum -o "$work/$label" "$f")
    say "  $label nsys stats (3 reports): ${row[$label.stats3]}"
    row[$label.proj]=$(measure "$label.proj" "$nsys" stats --force-export=false -q --format csv \
      --report nvtx_gpu_proj_sum -o "$work/$label" "$f")
    say "  $label nsys stats nvtx_gpu_proj_sum: ${row[$label.proj]}"
    rm -f "$work/$label"_*.csv
  else
    row[$label.stats3]="(no nsys)"; row[$label.proj]="(no nsys)"
  fi
}

src=$here/tests/fixtures/lesson/gpt2_max.sqlite
sizes=${ANALYZER_BENCH_SIZES:-1000000 5000000}
emit=${ANALYZER_BENCH_EMIT:-1000000}
for n in $sizes; do
  f=$work/grown_$n.sqlite
  say "$(python3 "$here/tests/fixtures/grow_trace.py" "$src" "$f" --kernels $n)"
  run_case "$n" "$f"
  rm -f "$f"
done
f=$work/grown_emit_$emit.sqlite
say "$(python3 "$here/tests/fixtures/grow_trace.py" "$src" "$f" --kernels $emit --emit-nvtx)"
run_case emit "$f"
rm -f "$f"

say ""
say "| kernels (file) | laptime analyze | laptime diff (x analyze) | \`nsys stats\` nvtx_sum+cuda_gpu_kern_sum+cuda_api_sum | \`nsys stats\` nvtx_gpu_proj_sum | plain SQL pass |"
say "|---|--:|--:|--:|--:|--:|"
for label in $sizes emit; do
  name=$label
  [[ $label == 1000000 ]] && name="10^6"
  [[ $label == 5000000 ]] && name="5·10^6"
  [[ $label == emit ]] && name="$emit, a range per op"
  say "| $name (${row[$label.file]}) | ${row[$label.analyze]} | ${row[$label.diff]} ($(ratio "${row[$label.diff]}" "${row[$label.analyze]}")) | ${row[$label.stats3]} | ${row[$label.proj]} | ${row[$label.sql]} |"
done
say ""
say "laptime diff --by block on the $emit-kernel trace with a range per op (every op a layer): ${row[emit.block]}"
# The logs' last lines: the reports' verdicts, nsys's complaints if any.
for l in "$work"/*.log; do echo "== $(basename "$l")"; tail -3 "$l"; done >"$out/analyzer-bench-logs.txt" 2>&1
