// On a GPU nothing records who wrote device memory: the provenance of an output is unknown, and a
// graded run that requires device output needs the CPU simulator (grade always uses it).
#include "provenance.h"

namespace harness {
namespace provenance {

void observe(const void*, size_t, channel::Provenance* out) { *out = channel::Provenance{}; }

}  // namespace provenance
}  // namespace harness
