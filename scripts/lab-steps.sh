# shellcheck shell=bash
# The step runner the lab's GPU scripts share (scripts/lab-run.sh, scripts/lab-try-run.sh), sourced
# once R (the run's folder), S (its summary), DEST (where the results go), ARCHIVE and SUMMARY
# (their file names there) are set:
#   pack                    $R into $DEST/$ARCHIVE (nsys captures and the compile cache left out,
#                           for size) and $S copied to $DEST/$SUMMARY: after every step, so a call
#                           cut short still returns what it did
#   step NAME LIMIT CMD...  one step under `timeout LIMIT`: its output in $R/NAME.log, its exit
#                           status and seconds in the summary; returns its status
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
