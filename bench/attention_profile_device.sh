#!/usr/bin/env bash
# bench/attention_profile_device.sh — the profile of issue 26 in one device command: the kernel
# timeline of the served GQA8 calls (bench/attention_profile.py --mode timeline: graph-replayed call,
# stage one alone, each kernel's duration and the gaps between them, traced with CUPTI), then ncu on
# each case's kernels launched once (warp-state stall reasons, scheduler, memory workload, occupancy,
# launch statistics, speed of light, source counters), printed as details, raw CSV and a per-opcode
# stall table (bench/attention_profile_ncu.py), and the served 8 x 0 cubin's SASS size.
# The cubins come in $CARRY/code_objects (default .carry-attention); everything goes to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-attention}
out=${OUT:-/tmp/attention-profile-out}
mkdir -p "$out/profile"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
status=0
step() { echo "== $*"; "$@" || { echo "!! FAILED ($?): $*"; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
command -v ncu nsys cuobjdump; ncu --version | tail -n 1
step timeout ${TIMELINE_S:-60} python3 bench/attention_profile.py --objects "$carry/code_objects" --mode timeline \
  --out "$out/attention_profile_timeline_h200.json" --trace "$out/profile/trace.json.gz" > "$out/profile/timeline.txt" 2>&1
cut -c1-400 "$out/profile/timeline.txt" | tail -n 30
sections=(--section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section Occupancy --section LaunchStats --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
          --section SourceCounters)
step timeout ${NCU_S:-150} ncu --clock-control none --cache-control none -k regex:netra -c ${NCU_COUNT:-8} "${sections[@]}" \
  -f -o "$out/profile/attention" python3 bench/attention_profile.py --objects "$carry/code_objects" --mode ncu > "$out/profile/ncu_run.txt" 2>&1
tail -n 12 "$out/profile/ncu_run.txt"
if [ -f "$out/profile/attention.ncu-rep" ]; then
  ncu -i "$out/profile/attention.ncu-rep" --page details > "$out/profile/details.txt" 2>&1
  ncu -i "$out/profile/attention.ncu-rep" --page raw --csv > "$out/profile/raw.csv" 2>&1
  ncu -i "$out/profile/attention.ncu-rep" --page source --csv --print-source sass > "$out/profile/source.csv" 2>&1
  step timeout 30 python3 bench/attention_profile_ncu.py --raw "$out/profile/raw.csv" --source "$out/profile/source.csv" \
    --manifest "$out/profile/ncu_run.txt" --out "$out/attention_profile_ncu_h200.json" > "$out/profile/summary.txt" 2>&1
  cut -c1-300 "$out/profile/summary.txt" | head -n 120
  gzip -f "$out/profile/source.csv" "$out/profile/raw.csv"
fi
cuobjdump -sass "$carry/code_objects/attention-gqa8-sm90a-0-1-1-8-0-64-512.cubin" > "$out/profile/sass_8x0.txt" 2>&1 && \
  grep -cE "^\s+/\*[0-9a-f]{4,}\*/" "$out/profile/sass_8x0.txt"
gzip -f "$out/profile/sass_8x0.txt"
tar -C "$out" -czf "$out/profile.tgz" profile && rm -rf "$out/profile"
ls -la "$out"
exit $status
