// cg::memcpy_async and cg::wait: the group's threads copy the bytes between them (each its own
// share), and wait() is the group's barrier, after which every thread sees the whole copy, as in
// CUDA. The copy is not asynchronous on the simulator; the result is the same.
#pragma once

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class Group>
void memcpy_async(const Group& g, void* dst, const void* src, size_t bytes) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  for (size_t i = (size_t)g.thread_rank(); i < bytes; i += (size_t)g.size()) d[i] = s[i];
}
template <class Group, class T>
void memcpy_async(const Group& g, T* dst, const T* src, size_t bytes) {
  for (size_t i = (size_t)g.thread_rank(); i < bytes / sizeof(T); i += (size_t)g.size()) dst[i] = src[i];
}
template <class Group>
void wait(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) { g.sync(file, line); }
template <unsigned Stage, class Group>
void wait_prior(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) { g.sync(file, line); }

}  // namespace cooperative_groups
