# shellcheck shell=bash
# What the lab's GPU scripts share (scripts/lab-run.sh, scripts/lab-try-run.sh), sourced from the
# repository's root with SCRIPT_NAME set (for messages). Sourcing sets the device's
# environment: LAPTIME_SOURCE_DIR, the torch environment's cuDNN and build/lib on the loader's
# path, nsys's own libraries when .nsys-deps/ is carried; NCU_DIR and NSYS (the device image's
# Nsight Compute 2025.3.1 and the nsys inside it), L (the laptime to run, which must be built).
# Then, once R (the run's folder), S (its summary), DEST (where the results go), ARCHIVE and
# SUMMARY (their file names there) are set:
#   pack                    $R into $DEST/$ARCHIVE (nsys captures and the compile cache left out,
#                           for size) and $S copied to $DEST/$SUMMARY: after every step, so a call
#                           cut short still returns what it did
#   step NAME LIMIT CMD...  one step under `timeout LIMIT`: its output in $R/NAME.log, its exit
#                           status and seconds in the summary; returns its status
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
if [[ -d .nsys-deps ]]; then # nsys's own libraries, as scripts/dev/device-run.sh unpacks them
  for f in .nsys-deps/*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
NCU_DIR=${NCU_DIR:-/opt/nvidia/nsight-compute/2025.3.1}
NSYS=${NSYS:-$NCU_DIR/host/target-linux-x64/nsys}
L=$PWD/build/bench/laptime
[[ -x $L ]] || { echo "$SCRIPT_NAME: no $L: build the laptime target first" >&2; exit 1; }

pack() {
  tar czf "$DEST/$ARCHIVE" -C "$R" --exclude='*.nsys-rep' --exclude='*.sqlite' --exclude=./cache . 2>/dev/null
  cp "$S" "$DEST/$SUMMARY"
  true
}
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $((SECONDS - t0))s" >>"$S"
  pack
  return $rc
}
