// The simulator's shadow state: the only place the harness asks cudasim who wrote device memory.
#include <vector>

#include "cudasim/control.h"
#include "provenance.h"

namespace harness {
namespace provenance {

void observe(const void* device, size_t bytes, channel::Provenance* out) {
  *out = channel::Provenance{};
  out->launches = cudasim::stats().launches;
  std::vector<cudasim::Writer> writers(bytes);
  if (bytes == 0 || !cudasim::last_writers(device, bytes, writers.data())) return;
  out->known = 1;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned w = unsigned(writers[i]);
    if (w > unsigned(channel::Writer::Kernel)) w = unsigned(channel::Writer::None);
    ++out->bytes_by_writer[w];
    if (w != unsigned(channel::Writer::Kernel) && out->first_other < 0) {
      out->first_other = int64_t(i);
      out->first_other_writer = uint8_t(w);
    }
  }
}

}  // namespace provenance
}  // namespace harness
