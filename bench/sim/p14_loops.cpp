// The floor for scripts/bench_sim.py: p14 --complete's algorithm (solutions/p14/p14.cu:
// scan_block_with_sums, a recursive scan of the block sums, add_block_offsets) written as plain
// C++ loops, the way PoCL runs an OpenCL work-group: each barrier interval of a block becomes one
// loop over the block's threads, and each per-thread variable that lives across a barrier
// becomes an array indexed by the thread. Nothing is checked and nothing switches: this is what
// the same work costs when a compiler sees all of it.
//
//   g++ -O2 -std=c++17 -pthread bench/sim/p14_loops.cpp -o p14_loops
//   ./p14_loops N TPB WORKERS [REPEAT]
//
// Prints one JSON line: launched threads (blocks x TPB summed over the launches, as cudasim's
// --stats counts them), the median seconds of REPEAT scans (kernel loops only: allocations and
// the input are prepared outside the clock, as cudasim's kernel_seconds leaves out cudaMalloc),
// and whether the result matches a sequential scan. WORKERS > 1 shares each launch's blocks
// among that many std::threads, started per launch (a few tens of microseconds per launch).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "scan_input.h"

namespace {

int g_workers = 1;

// Runs body(block) for every block of a launch, shared among g_workers threads.
template <class F>
void launch(int blocks, const F& body) {
  if (g_workers <= 1) {
    for (int b = 0; b < blocks; ++b) body(b);
    return;
  }
  std::atomic<int> next{0};
  auto work = [&] {
    for (int b; (b = next.fetch_add(1)) < blocks;) body(b);
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < g_workers; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// scan_block_with_sums: interval 0 loads a thread's pair; each Kogge-Stone step is two intervals
// (read, then add), as the two __syncthreads() split it; the last interval writes.
void scan_block_with_sums(const int* in, int* out, int* block_sums, int size, int tpb, int blocks) {
  launch(blocks, [&](int block) {
    thread_local std::vector<int> x0, x1, pairs, current;
    x0.resize(tpb);
    x1.resize(tpb);
    pairs.resize(tpb);
    current.resize(tpb);
    const int tile_start = block * 2 * tpb;
    for (int t = 0; t < tpb; ++t) {
      const int i0 = tile_start + 2 * t, i1 = i0 + 1;
      x0[t] = i0 < size ? in[i0] : 0;
      x1[t] = i1 < size ? in[i1] : 0;
      pairs[t] = x0[t] + x1[t];
    }
    for (int offset = 1; offset < tpb; offset *= 2) {
      for (int t = 0; t < tpb; ++t) current[t] = t >= offset ? pairs[t - offset] : 0;
      for (int t = 0; t < tpb; ++t) pairs[t] += current[t];
    }
    for (int t = 0; t < tpb; ++t) {
      const int i0 = tile_start + 2 * t, i1 = i0 + 1;
      const int before = pairs[t] - x0[t] - x1[t];
      if (i0 < size) out[i0] = before + x0[t];
      if (i1 < size) out[i1] = before + x0[t] + x1[t];
      if (block_sums != nullptr && t == tpb - 1) block_sums[block] = pairs[t];
    }
  });
}

// add_block_offsets has no barrier: one interval.
void add_block_offsets(int* out, const int* scanned_sums, int size, int tpb, int blocks) {
  launch(blocks, [&](int block) {
    if (block == 0) return;
    const int offset = scanned_sums[block - 1];
    const int tile_start = block * 2 * tpb;
    for (int t = 0; t < tpb; ++t) {
      const int i0 = tile_start + t, i1 = i0 + tpb;
      if (i0 < size) out[i0] += offset;
      if (i1 < size) out[i1] += offset;
    }
  });
}

// One level of the recursion: its block-sum buffers, allocated before the clock starts.
struct Level {
  int n, blocks;
  std::vector<int> sums, scanned;
};

std::vector<Level> plan(int n, int tpb) {
  std::vector<Level> levels;
  for (;;) {
    const int blocks = (n + 2 * tpb - 1) / (2 * tpb);
    levels.push_back(Level{n, blocks, std::vector<int>(blocks), std::vector<int>(blocks)});
    if (blocks == 1) return levels;
    n = blocks;
  }
}

// scan_any_size of solutions/p14/p14.cu with its launches as loops. Returns launched threads.
long long scan(const int* in, int* out, std::vector<Level>& levels, size_t k, int tpb) {
  Level& L = levels[k];
  if (L.blocks == 1) {
    scan_block_with_sums(in, out, nullptr, L.n, tpb, 1);
    return tpb;
  }
  scan_block_with_sums(in, out, L.sums.data(), L.n, tpb, L.blocks);
  long long threads = 2LL * L.blocks * tpb;
  threads += scan(L.sums.data(), L.scanned.data(), levels, k + 1, tpb);
  add_block_offsets(out, L.scanned.data(), L.n, tpb, L.blocks);
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s N TPB WORKERS [REPEAT]\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]), tpb = std::atoi(argv[2]);
  g_workers = std::max(1, std::atoi(argv[3]));
  const int repeat = argc > 4 ? std::max(1, std::atoi(argv[4])) : 5;
  const std::vector<int> in = scan_input(n), expect = inclusive_scan_of(in);
  std::vector<int> out(n, 0);
  std::vector<Level> levels = plan(n, tpb);
  std::vector<double> seconds;
  long long threads = 0;
  bool correct = true;
  for (int r = 0; r < repeat; ++r) {
    std::fill(out.begin(), out.end(), 0);
    const auto t0 = std::chrono::steady_clock::now();
    threads = scan(in.data(), out.data(), levels, 0, tpb);
    const auto t1 = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    correct = correct && out == expect;
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("{\"threads\": %lld, \"seconds\": %.6f, \"min_seconds\": %.6f, \"repeat\": %d, \"workers\": %d, \"correct\": %s}\n",
              threads, seconds[seconds.size() / 2], seconds[0], repeat, g_workers, correct ? "true" : "false");
  return correct ? 0 : 1;
}
