#!/usr/bin/env bash
# Are two laptime binaries' reports byte-identical on every committed fixture?
#
#   scripts/dev/byte-identical.sh OLD_BIN NEW_BIN        (e.g. ../main-build/bench/laptime build/bench/laptime)
#
# Runs `analyze` (text, --json, --svg, --perfetto; --peak and --roofline-svg where the trace has a
# layer-costs sidecar; a few option variants) on every trace under tests/fixtures, and `diff`
# (text, --json, --svg) on the pairs the tests compare plus the real captures side by side, with
# both binaries. Standard output, standard error, the exit status and every file written are
# compared; an error sentence is a report like any other. Exit 0 when all are equal, 1 on the
# first difference (a short list of what differs and the start of the first diff), 2 on bad usage.
#
# Each run happens in a folder of its own, with its outputs named relative to it, so the two
# binaries print the same paths; the fixtures are read where they are, from this checkout.
# LAPTIME_CACHE_DIR points at an empty folder, so no peak cache of this machine leaks into a
# report. Runs go in parallel (BYTE_IDENTICAL_JOBS, default 8: a run mostly waits for the CUDA
# libraries to map, not for a core). KEEP=1 keeps the work folder even when all is equal.
set -euo pipefail
if [[ $# -ne 2 || ! -x $1 || ! -x $2 ]]; then
  echo "usage: $0 OLD_BIN NEW_BIN (two executable laptime binaries)" >&2
  exit 2
fi
old=$(readlink -f "$1") new=$(readlink -f "$2")
fx=$(cd "$(dirname "$0")/../../tests/fixtures" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/byte-identical.XXXXXX")
mkdir -p "$work/cache"
jobs=$work/jobs
: >"$jobs"
runs=0

# run CASE ARGS...: one run of each binary, in $work/{old,new}/CASE. Arguments naming a fixture
# use $fx; outputs are bare names (a.json), so they land in the case folder.
run() {
  local case=$1
  shift
  local side bin
  for side in old new; do
    bin=$old
    [[ $side == new ]] && bin=$new
    mkdir -p "$work/$side/$case"
    printf 'cd %q && %q' "$work/$side/$case" "$bin" >>"$jobs"
    printf ' %q' "$@" >>"$jobs"
    printf ' >stdout 2>stderr; echo $? >rc\n' >>"$jobs"
  done
  runs=$((runs + 1))
}

# --- analyze: every trace, all outputs in one run -------------------------------------------
# One run writes text, JSON, Perfetto and SVG; a failure half-way (no iteration to draw) is
# compared as it stands, with what was written before it.
while IFS= read -r f; do
  rel=${f#"$fx"/}
  case=analyze/${rel//\//_}
  run "$case" analyze "$f" --json a.json --svg a.svg --perfetto a.perfetto.json
  # The roofline: the layer costs beside the trace and the example ceilings.
  if [[ -f ${f%.sqlite}.layers.json ]]; then
    run "$case.roofline" analyze "$f" --peak "$fx/peak_example.json" --json a.json --roofline-svg roofline.svg
  fi
done < <(find "$fx" -name '*.sqlite' | LC_ALL=C sort)

# Options and inputs the loop above does not reach.
run analyze/not_a_trace analyze "$fx/not_a_trace.txt"
run analyze/nsys-rep analyze "$fx/graph/graph_cases.nsys-rep"
run analyze/missing analyze "$fx/no_such.sqlite"
run analyze/json-stdout analyze "$fx/synthetic_trace.sqlite" --json -
run analyze/options analyze "$fx/nsys/gpt2_bf16.sqlite" --skip-warmup 2 --gap-us 3 --top 4 --json a.json
run analyze/range-glob analyze "$fx/lesson/gpt2_clean.sqlite" --range 'Forward Pass Iter *' --json a.json
run analyze/range-regex analyze "$fx/pattern_nested.sqlite" --range 're:step_[0-9]+' --json a.json
run analyze/range-none analyze "$fx/synthetic_trace.sqlite" --range no_such_range

# --- diff: the pairs the tests compare, and the real captures side by side -----------------
pair() {  # pair CASE BEFORE AFTER [OPTIONS...]: fixtures named relative to tests/fixtures
  local case=$1 before=$2 after=$3
  shift 3
  run "diff/$case" diff "$fx/$before" "$fx/$after" --json d.json --svg d.svg "$@"
}
for after in attn_slower gelu_fused graph noise slow_start; do
  pair "base_vs_$after" diff_base.sqlite "diff_$after.sqlite"
done
pair attn_slower_vs_base diff_attn_slower.sqlite diff_base.sqlite
pair fine_vs_fine_fused diff_fine.sqlite diff_fine_fused.sqlite
pair gelu_fused_vs_graph diff_gelu_fused.sqlite diff_graph.sqlite
pair base_vs_attn_slower.block diff_base.sqlite diff_attn_slower.sqlite --by block
pair base_vs_attn_slower.gate diff_base.sqlite diff_attn_slower.sqlite --fail-if-slower 5
pair base_vs_attn_slower.options diff_base.sqlite diff_attn_slower.sqlite --threshold 1 --min-change-us 0 \
  --resamples 500 --seed 9 --skip-warmup 2
pair bench_base_vs_slower diff_bench_base.json diff_bench_slower.json --fail-if-slower 5
pair bench_base_vs_base diff_bench_base.json diff_bench_base.json
pair bench_vs_trace diff_bench_base.json diff_base.sqlite
pair gpt2_bf16_self nsys/gpt2_bf16.sqlite nsys/gpt2_bf16.sqlite
pair gpt2_bf16_self.peak nsys/gpt2_bf16.sqlite nsys/gpt2_bf16.sqlite --peak "$fx/peak_example.json"
pair gpt2_vs_resnet50 nsys/gpt2_bf16.sqlite nsys/resnet50_bf16.sqlite
pair pageable_vs_sync nsys/pitfall_pageable.sqlite nsys/pitfall_sync.sqlite
pair sync_vs_per_layer nsys/pitfall_sync.sqlite nsys/pitfall_sync_per_layer.sqlite
pair bench_vs_nvtx_none nsys/bench_gpt2_clean.sqlite nsys/gpt2_nvtx_none.sqlite
pair lesson_gpt2 lesson/gpt2_clean.sqlite lesson/gpt2_max.sqlite
pair lesson_resnet50 lesson/resnet50_clean.sqlite lesson/resnet50_max.sqlite
pair lesson_threads lesson/gpt2_clean.sqlite lesson/gpt2_threads_startend.sqlite
pair graph_gpt2_eager_vs_graph graph/laptime_gpt2_b1_eager.sqlite graph/laptime_gpt2_b1_graph.sqlite
pair graph_gpt2_eager_vs_node graph/laptime_gpt2_b1_eager.sqlite graph/laptime_gpt2_b1_graph_node.sqlite
pair graph_resnet50 graph/laptime_resnet50_graph.sqlite graph/laptime_resnet50_graph_node.sqlite
pair graph_torch graph/torch_graph.sqlite graph/torch_graph_node.sqlite
pair graph_torch_outside graph/torch_graph_node.sqlite graph/torch_graph2_outside_node.sqlite
pair graph_cases graph/graph_cases.sqlite graph/graph_cases_node.sqlite
pair synthetic synthetic_trace.sqlite synthetic_one_iteration.sqlite
pair pattern pattern_two_threads.sqlite pattern_nested.sqlite
pair hostile_extreme hostile_extreme.sqlite diff_base.sqlite
pair hostile_utf8 diff_base.sqlite hostile_utf8.sqlite
pair not_a_trace diff_base.sqlite not_a_trace.txt
pair not_a_report diff_base.sqlite synthetic_trace.expected.json

# --- run both binaries, then compare --------------------------------------------------------
export LAPTIME_CACHE_DIR=$work/cache LC_ALL=C TZ=UTC
xargs -P "${BYTE_IDENTICAL_JOBS:-8}" -d '\n' -n 1 bash -c <"$jobs"
rm -rf "$work/cache"
files=$(find "$work/old" -type f | wc -l)
if differences=$(diff -rq "$work/old" "$work/new"); then
  echo "byte-identical: $runs runs of each binary, $files files ($(basename "$old") vs $(basename "$new"))"
  [[ ${KEEP:-0} == 1 ]] && echo "outputs kept in $work" || rm -rf "$work"
  exit 0
fi
n=$(wc -l <<<"$differences")
echo "NOT byte-identical: $n of $files files differ ($runs runs of each binary); outputs kept in $work"
sed -e "s|$work/||g" -e 's|^Files old/\([^ ]*\) and new/.* differ$|  \1|' \
  -e 's#^Only in \(old\|new\)/\([^:]*\): \(.*\)$#  \2/\3 (only the \1 binary wrote it)#' <<<"$differences" | head -20
[[ $n -gt 20 ]] && echo "  ... and $((n - 20)) more"
first=$(grep -m1 '^Files ' <<<"$differences" | sed 's/^Files \(.*\) and \(.*\) differ$/\1 \2/' || true)
if [[ -n $first ]]; then
  echo "first difference (old -, new +):"
  # shellcheck disable=SC2086
  diff -u $first | tail -n +3 | head -12 | cut -c1-160
fi
exit 1
