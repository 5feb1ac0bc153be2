#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# Issue 20's file rules on the paths that run only with a GPU (the host suite covers the rest):
#   1. `laptime peak --cache FIFO` is refused before the measurement, in one sentence, without
#      blocking (the cache is checked as an output first; before, a FIFO cache blocked the read);
#   2. `laptime forward` reads its tokens through core/input_file and writes -o through
#      core/output_file: -o a symbolic link is replaced (its target untouched) by B*T*vocab fp32
#      logits (-o onto --calibrate is refused before the GPU: test_cli checks it);
#   3. `laptime bench --json R --trace T` with standard output closed (`>&-`): R is the JSON
#      alone (before, the temporary got descriptor 1 and the text report went into it);
#   4. the bench's --trace in WAL-free form is analyzed, and nothing appears beside it.
# About a minute on an H200 (a tiny GPT-2 forward and bench; peak is refused before it measures).
#
#   scripts/dev/harden-io-check.sh [BUILD_DIR]      (default: build)
set -euo pipefail

build=${1:-build}
laptime=$(realpath "$build/bench/laptime")
[[ -x $laptime ]] || { echo "harden-io-check: $laptime not found; build the laptime target first." >&2; exit 1; }
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
pass() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

echo "1. peak --cache FIFO"
mkfifo cache.fifo
set +e
msg=$(timeout 120 "$laptime" peak --cache cache.fifo 2>&1)
rc=$?
set -e
[[ $rc == 1 && $msg == "laptime: refusing to write the ceilings to cache.fifo: it is a FIFO (named pipe), not a regular file." ]] &&
  pass "refused: $msg" || fail "rc $rc: $msg"

echo "2. forward: -o a link"
python3 "$here/weights/convert.py" gpt2 --random --n-layer 2 --n-head 1 --n-embd 64 --vocab-size 128 --n-ctx 16 \
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
leftover=$(find . -name '.*.laptime-*.tmp' | head -3)
[[ -z $leftover ]] && pass "no temporary left" || fail "temporaries left: $leftover"

echo
[[ $failures == 0 ]] && echo "harden-io-check: all passed" || { echo "harden-io-check: $failures failed"; exit 1; }
