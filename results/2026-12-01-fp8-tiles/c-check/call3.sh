#!/usr/bin/env bash
# Issue 29, call 3: every GPU suite and end-to-end check on the code as it stands (check), the
# per-layer captures against their roofs (layers), and Nsight Compute over GPT-2 fp8's block 0.
tar xJf .carry/build.tar.xz
BUDGET=300 PAR_LIMIT=280 scripts/dev/device-run.sh check > /dev/null 2>&1
BUDGET=130 scripts/dev/device-run.sh layers > /dev/null 2>&1
source scripts/dev/device-run.sh --env "$(realpath build/lib)"
N=/tmp/ncu29; mkdir -p $N; cd $N
L=$(realpath "$OLDPWD/build/bench/laptime")
export PATH=$NCU_DIR:$(dirname "$L"):$PATH
timeout -k 5 150 ncu --nvtx --nvtx-include 'laptime@forward/h.0/' --section SpeedOfLight --section MemoryWorkloadAnalysis \
  -f -o gpt2_fp8_h0 "$L" bench gpt2 -b 8 -t 1024 --precision fp8 -w 0 -n 1 --json gpt2_fp8_h0.json > ncu.log 2>&1
echo "ncu rc=$?" >> ncu.log
laptime kernels gpt2_fp8_h0.ncu-rep --peak /tmp/device-run/layers/peak.json --json kernels.json > kernels.txt 2>&1
echo "kernels rc=$?" >> kernels.txt
tar czf $OUT/ncu29.tgz -C $N --exclude '*.ncu-rep' . ; cp kernels.txt $OUT/
cut -c1-220 $OUT/device-run-check.txt | tail -70; tail -45 $OUT/device-run-layers.txt | cut -c1-200; cat kernels.txt | cut -c1-200 | head -40
