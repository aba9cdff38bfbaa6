#include "harness/harness.h"
void p14_simple(const int* in, int* out, int n, int tpb);
static std::vector<int> inclusive(const std::vector<int>& a) {
  std::vector<int> r(a.size()); long long s = 0;
  for (size_t i = 0; i < a.size(); ++i) r[i] = int(s += a[i]);
  return r;
}
int run_simple(const harness::Case& c) {
  auto in = c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, -9, 9);
  harness::DeviceArray<int> d_in(in), d_out(c.n);
  p14_simple(d_in.get(), d_out.get(), int(c.n), c.tpb);
  harness::check_kernels("p14_simple");
  return harness::finish(c, {{"SIZE", c.n}, {"TPB", c.tpb}}, in, d_out.download(), inclusive(in));
}
