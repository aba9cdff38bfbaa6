// The input of bench_sim.py's side-by-side rows, in one place: p14_loops.cpp and p14_opencl.cpp
// scan the same ints, as the puzzle's driver does (small values, so sums do not overflow), and
// compare with the same sequential inclusive scan.
#pragma once

#include <vector>

inline std::vector<int> scan_input(int n) {
  std::vector<int> in(n);
  unsigned s = 1;
  for (int i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    in[i] = int((s >> 16) % 19) - 9;
  }
  return in;
}

inline std::vector<int> inclusive_scan_of(const std::vector<int>& in) {
  std::vector<int> out(in.size());
  long long run = 0;
  for (size_t i = 0; i < in.size(); ++i) out[i] = int(run += in[i]);
  return out;
}
