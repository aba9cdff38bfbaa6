// Host-only code in its own file, compiled as plain C++.
#include "histogram.h"

void histogram_reference(const unsigned char* data, int n, unsigned int* bins) {
  for (int b = 0; b < NUM_BINS; ++b) bins[b] = 0;
  for (int i = 0; i < n; ++i) ++bins[data[i] % NUM_BINS];
}
