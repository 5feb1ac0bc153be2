#!/usr/bin/env bash
# Device-side driver for the fixture captures of issues 18 (CUDA Graphs) and 19 (Nsight Compute):
#   scripts/dev/capture-fixtures.sh graph|ncu|probe
# Sets up Nsight Systems from .nsys-deps/ (as h200-final.sh does), runs the committed capture
# script, and packs everything into $OUT/PART.tgz so a call cut short still returns what it did.
set -uo pipefail
part=${1:?usage: capture-fixtures.sh graph|ncu|probe}
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
if [[ -d .nsys-deps ]]; then
  for f in .nsys-deps/*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
NCU=${NCU:-/opt/nvidia/nsight-compute/2025.3.1/ncu}
R=/tmp/cap/$part
mkdir -p "$R"
pack() { [[ -n ${OUT:-} ]] && tar czf "$OUT/$part.tgz" -C "$R" . ; true; }
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/card.txt"
case $part in
  graph) timeout -k 5 560 tests/fixtures/graph/capture.sh "$R" build "$NSYS" 2>&1 | tee "$R/capture.log" ;;
  ncu) timeout -k 5 560 tests/fixtures/ncu/capture.sh "$R" build "$NCU" 2>&1 | tee "$R/capture.log" ;;
  probe)
    d=$(dirname "$NSYS")
    { du -sh "$d"; ls "$d" | head -80; "$NSYS" --version; ls "$d/reports" 2>/dev/null | head; } >"$R/nsys_dir.txt" 2>&1 ;;
esac
