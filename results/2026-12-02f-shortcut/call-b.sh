#!/usr/bin/env bash
# Call B of results/2026-12-02f-shortcut: the PERF.md table at 4582bd5+ (the folded shortcut):
# every row beside PyTorch eager and torch.compile, one row at a time, the --json reports packed.
# Same carry as call A.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; B=/tmp/b; mkdir -p $B && t0=$SECONDS
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 330 bash scripts/dev/table-run.sh >$B/table-run.log 2>&1
echo "table rc=$? $((SECONDS - t0))s" >$B/rc.txt
cp /tmp/device-run/table.txt $B/rc.txt "$R/" 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
ls -la "$R"
