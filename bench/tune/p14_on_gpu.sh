#!/usr/bin/env bash
# One device call for the single-pass scan's tuning (issue 22, item 4): the sweep of
# bench/tune/p14_single_pass.cu at every power of two from 2^16 to 2^30, ncu on the shapes named
# in NCU_SHAPES at 2^28, and the puzzle's own bench of the reference solution at the same sizes.
# Writes under $OUT (default ./out). Nothing else may use the GPU meanwhile.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
NCU_SHAPES=${NCU_SHAPES:-4:256}
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; nvcc --version | tail -2; } > "$OUT/device.txt" 2>&1
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/p14_tune bench/tune/p14_single_pass.cu || exit 2
/tmp/p14_tune --sizes "${TUNE_SIZES:-16,17,18,19,20,21,22,23,24,25,26,27,28,29,30}" --runs "${RUNS:-30}" > "$OUT/tune.txt" 2>&1
for shape in ${NCU_SHAPES//,/ }; do
  ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      -k regex:scan_single_pass --launch-skip 3 --launch-count 1 \
      /tmp/p14_tune --sizes 28 --runs 1 --only "$shape" > "$OUT/ncu-${shape/:/x}.txt" 2>&1
done
sizes=$(python3 -c 'print(",".join(str(1 << k) for k in range(16, 31, 2)))')
timeout 300 python3 scripts/puzzle.py bench p14 --solution --single-pass --sizes "$sizes" --out "$OUT/bench" --no-chart > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
