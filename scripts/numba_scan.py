#!/usr/bin/env python3
"""The p14 --complete algorithm (block scans, a scan of the block sums, a uniform add) written
for numba.cuda, run on numba's CUDA simulator to compare simulators with scripts/bench_sim.py.

Run as: NUMBA_ENABLE_CUDASIM=1 python3 scripts/numba_scan.py N TPB
Prints one JSON line: {"threads": ..., "seconds": ..., "correct": true}.
"""
import json
import os
import sys
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
from numba import cuda, int32  # noqa: E402

TPB = int(sys.argv[2]) if len(sys.argv) > 2 else 256


@cuda.jit
def block_scan(inp, out, sums, n):
    # Kogge-Stone inclusive scan of one block; the block's total goes to sums.
    shared = cuda.shared.array(TPB, int32)
    local_i = cuda.threadIdx.x
    global_i = cuda.blockIdx.x * cuda.blockDim.x + local_i
    shared[local_i] = inp[global_i] if global_i < n else 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        v = shared[local_i - offset] if local_i >= offset else 0
        cuda.syncthreads()
        shared[local_i] += v
        cuda.syncthreads()
        offset *= 2
    if global_i < n:
        out[global_i] = shared[local_i]
    if local_i == TPB - 1:
        sums[cuda.blockIdx.x] = shared[local_i]


@cuda.jit
def uniform_add(out, scanned_sums, n):
    global_i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.blockIdx.x > 0 and global_i < n:
        out[global_i] += scanned_sums[cuda.blockIdx.x - 1]


def scan(d_in, d_out, n, counter):
    blocks = (n + TPB - 1) // TPB
    d_sums = cuda.device_array(blocks, dtype=np.int32)
    block_scan[blocks, TPB](d_in, d_out, d_sums, n)
    counter[0] += blocks * TPB
    if blocks > 1:
        d_scanned = cuda.device_array(blocks, dtype=np.int32)
        scan(d_sums, d_scanned, blocks, counter)
        uniform_add[blocks, TPB](d_out, d_scanned, n)
        counter[0] += blocks * TPB


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    rng = np.random.default_rng(1)
    a = rng.integers(-9, 10, size=n).astype(np.int32)
    d_in = cuda.to_device(a)
    d_out = cuda.device_array(n, dtype=np.int32)
    counter = [0]
    t0 = time.perf_counter()
    scan(d_in, d_out, n, counter)
    out = d_out.copy_to_host()
    seconds = time.perf_counter() - t0
    correct = bool(np.array_equal(out, np.cumsum(a, dtype=np.int64).astype(np.int32)))
    print(json.dumps({"threads": counter[0], "seconds": seconds, "correct": correct, "n": n, "tpb": TPB}))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
