#!/usr/bin/env bash
# Issue 20 item 4 on the H200, the case extra-captures.sh's two-process captures missed: two loops
# running at the same time on one GPU. There each program spent ~0.4 s starting and its 33
# iterations took 30 ms, so the loops never overlapped (tests/fixtures/nsys/two_gpt2.sqlite). Here
# each process loops 2000 times (about 2 s, against 0.4 s of start) and nsys records the whole run
# (a first try recording one second from 2 s in with --delay/--duration got no NVTX ranges at all):
#   two_gpt2_overlap     two `laptime bench gpt2 -b 1 -t 128` (two ranks of one job, the same names);
#   gpt2_resnet50_overlap GPT-2 beside ResNet-50 B8 (two programs at different rates).
# For each: laptime analyze (text and --json: one section per process, the shared-GPU note with
# how much of each process's idle time the other's kernels filled), tests/fixtures/process_reference.py
# over the same SQLite (each process's lap, busy and other_processes_in_idle_ns computed from the
# tables alone), a comparison of the two in compare.txt, diff of the two ranks (--pid-before /
# --pid-after), and each bench's own printed lap for the whole run. The SQLite exports (~50-100 MB)
# stay on the device; everything else is packed into $OUT/overlap.tgz, the summary in $OUT/overlap.txt.
# Usage: OUT=DIR bash scripts/dev/overlap-captures.sh BUILD   (nsys and python3 on PATH; about 90 s)
set -uo pipefail
B=${1:?usage: overlap-captures.sh BUILD}
L=$B/bench/laptime
W=/tmp/overlap
R=$W/out
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
cap() {
  local name=$1; shift
  nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
    -o "$W/$name" "$@" >"$R/$name.log" 2>&1
  echo "$name: profile rc=$?" >>"$S"
  nsys export --type sqlite --force-overwrite=true -o "$W/$name.sqlite" "$W/$name.nsys-rep" >>"$R/$name.log" 2>&1
  echo "$name: export rc=$? $(du -h "$W/$name.sqlite" | cut -f1)" >>"$S"
  grep "^lap time" "$R/$name.log" | sed "s/^/$name bench: /" >>"$S"
  "$L" analyze "$W/$name.sqlite" --json "$R/$name.analyze.json" >"$R/$name.analyze.txt" 2>&1
  echo "$name: analyze rc=$?" >>"$S"
  python3 tests/fixtures/process_reference.py "$W/$name.sqlite" >"$R/$name.reference.json" 2>>"$R/$name.log"
  echo "$name: reference rc=$?" >>"$S"
  python3 - "$R/$name.analyze.json" "$R/$name.reference.json" >>"$S" <<'EOF'
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
                               p["utilization"]["busy_pct"]["median"], r.get("busy_pct_median", -1),
                               p["steady_iterations"], r.get("steady", -1), r.get("other_processes_in_idle_ns"),
                               r.get("idle_ns"), p["verdict"]["bound"], shared[0] if shared else "no shared-GPU note"))
EOF
}
cap two_gpt2_overlap bash -c "$L bench gpt2 -b 1 -t 128 -w 3 -n 2000 & $L bench gpt2 -b 1 -t 128 -w 3 -n 2000 & wait"
cap gpt2_resnet50_overlap bash -c "$L bench gpt2 -b 1 -t 128 -w 3 -n 2000 & $L bench resnet50 -b 8 -w 3 -n 2000 & wait"
# The two ranks against each other, one capture on both sides.
pids=$(python3 -c "import json; print(' '.join(str(p['pid']) for p in json.load(open('$R/two_gpt2_overlap.analyze.json')).get('processes', [])))")
set -- $pids
if [[ $# -eq 2 ]]; then
  "$L" diff "$W/two_gpt2_overlap.sqlite" "$W/two_gpt2_overlap.sqlite" --pid-before "$1" --pid-after "$2" \
    >"$R/two_gpt2_overlap.diff.txt" 2>&1
  echo "two_gpt2_overlap diff $1 -> $2: rc=$? $(grep '^Verdict' "$R/two_gpt2_overlap.diff.txt")" >>"$S"
fi
"$L" diff "$W/two_gpt2_overlap.sqlite" "$W/two_gpt2_overlap.sqlite" >"$R/two_gpt2_overlap.refused.txt" 2>&1
echo "two_gpt2_overlap diff without --pid: rc=$? $(tail -1 "$R/two_gpt2_overlap.refused.txt")" >>"$S"
cat "$S"
if [[ -n ${OUT:-} ]]; then
  tar czf "$OUT/overlap.tgz" -C "$R" .
  cp "$S" "$OUT/overlap.txt"
fi
