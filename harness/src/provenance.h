// Who wrote a device buffer, for the output channel of a graded run (harness/channel.h). The CPU
// simulator records the last writer of every byte (cudasim::last_writers); a GPU cannot say.
#pragma once

#include <cstddef>

#include "harness/channel.h"

namespace harness {
namespace provenance {
// Fills *out for [device, device + bytes); out->known stays 0 when the backend cannot tell.
void observe(const void* device, size_t bytes, channel::Provenance* out);
}  // namespace provenance
}  // namespace harness
