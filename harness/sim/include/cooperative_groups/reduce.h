// cg::reduce, cg::inclusive_scan, cg::exclusive_scan and their operators, for the groups of
// <cooperative_groups.h>: built from the group's shuffles, so they meet the same checks.
#pragma once

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { T operator()(const T& a, const T& b) const { return b < a ? b : a; } };     // the smaller
template <class T> struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };  // the larger
template <class T> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

namespace details {
template <class G> struct is_tile : std::false_type {};
template <unsigned N, class P> struct is_tile<thread_block_tile<N, P>> : std::true_type {};
}  // namespace details

// Every thread of the group gets op applied over the group's values. A tile uses a butterfly of
// shfl_xor; a coalesced group (any set of lanes) gathers the values in rank order.
template <class Group, class T, class Op>
auto reduce(const Group& g, T&& value, Op&& op, const char* file = __builtin_FILE(), int line = __builtin_LINE())
    -> std::decay_t<decltype(op(value, value))> {
  using V = std::decay_t<decltype(op(value, value))>;
  static_assert(details::is_tile<Group>::value || std::is_same<Group, coalesced_group>::value,
                "cudasim: cg::reduce takes a thread_block_tile or a coalesced_group (as in CUDA)");
  V v = value;
  if constexpr (details::is_tile<Group>::value) {
    for (unsigned o = (unsigned)g.size() / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o, file, line));
    return v;
  } else {
    V acc = g.shfl(v, 0u, file, line);
    for (unsigned r = 1; r < g.size(); ++r) acc = op(acc, g.shfl(v, r, file, line));
    return acc;
  }
}

// Thread i gets op over the values of threads 0..i (inclusive) or 0..i-1 (exclusive; thread 0
// gets a value-initialized T).
template <class Group, class T, class Op = plus<std::decay_t<T>>>
std::decay_t<T> inclusive_scan(const Group& g, T&& value, Op&& op = Op(), const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
  using V = std::decay_t<T>;
  V v = value;
  unsigned rank = (unsigned)g.thread_rank();
  for (unsigned d = 1; d < g.size(); d *= 2) {
    V other = g.shfl_up(v, d, file, line);
    if (rank >= d) v = op(other, v);
  }
  return v;
}
template <class Group, class T, class Op = plus<std::decay_t<T>>>
std::decay_t<T> exclusive_scan(const Group& g, T&& value, Op&& op = Op(), const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
  using V = std::decay_t<T>;
  V inc = inclusive_scan(g, value, op, file, line);
  V prev = g.shfl_up(inc, 1u, file, line);
  return g.thread_rank() == 0 ? V() : prev;
}

}  // namespace cooperative_groups
