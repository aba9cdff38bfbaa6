#!/usr/bin/env bash
# One device call for the single-pass scan (issue 22, item 4), in this order so that nothing else
# uses the GPU while something is timed:
#   1. the sweep of bench/tune/p14_single_pass.cu (ints per thread x threads per block) at every
#      power of two from 2^16 to 2^30, next to CUB and a device-to-device copy;
#   2. the choice of kChunks for 256 threads a block (the bench's block size): the best share of
#      the copy at 2^28, written into solutions/p14/p14.cu of this copy of the tree (chosen.txt);
#   3. the puzzle's own bench of that solution at the same sizes;
#   4. ncu on the chosen shape and on 4:256 at 2^28;
#   5. the sanitizers on p14 (scripts/gpu_validate.py), last, since they slow everything beside them.
# Writes under $OUT (default ./out).
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; nvcc --version | tail -2; } > "$OUT/device.txt" 2>&1
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/p14_tune bench/tune/p14_single_pass.cu || exit 2
timeout 240 /tmp/p14_tune --sizes "${TUNE_SIZES:-16,17,18,19,20,21,22,23,24,25,26,27,28,29,30}" --runs "${RUNS:-30}" > "$OUT/tune.txt" 2>&1
chunks=$(python3 - "$OUT/tune.txt" <<'PY'
import re, sys
best = max(((float(m.group(2)), int(m.group(1))) for m in re.finditer(
    r"^n=2\^28 chunks +(\d+) tpb +256 .*? ([\d.]+) % of copy", open(sys.argv[1]).read(), re.M)), default=(0, 4))
print(best[1])
PY
)
echo "kChunks=$chunks (best share of the copy at 2^28, 256 threads a block)" > "$OUT/chosen.txt"
sed -i "s/^constexpr int kChunks = [0-9]*;/constexpr int kChunks = $chunks;/" solutions/p14/p14.cu
grep -n "^constexpr int kChunks" solutions/p14/p14.cu >> "$OUT/chosen.txt"
sizes=$(python3 -c 'print(",".join(str(1 << k) for k in range(16, 31)))')
timeout 200 python3 scripts/puzzle.py bench p14 --solution --single-pass --sizes "$sizes" --out "$OUT/bench" --no-chart > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
for shape in "$chunks:256" 4:256; do
  timeout 60 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      -k regex:scan_single_pass --launch-skip 3 --launch-count 1 \
      /tmp/p14_tune --sizes 28 --runs 1 --only "$shape" > "$OUT/ncu-${shape/:/x}.txt" 2>&1
done
timeout 150 python3 scripts/gpu_validate.py --puzzle p14 --out "$OUT/validate" > "$OUT/validate.log" 2>&1
echo "validate rc=$?" >> "$OUT/validate.log"
