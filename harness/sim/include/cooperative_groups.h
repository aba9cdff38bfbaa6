// Cooperative groups on the CPU simulator: thread blocks, warp tiles and coalesced groups, built
// on the same barrier and warp primitives as __syncthreads() and the *_sync intrinsics, so they
// have the same semantics and diagnostics: a block.sync() that only some threads reach is barrier
// divergence, a tile.shfl_down() that a lane of the tile never reaches is a deadlock, and the
// memory checker orders accesses across tile.sync() like across __syncwarp().
//
// Grid-wide synchronization and multi-device groups are refused at compile time: blocks of one
// launch cannot wait for each other on the simulator (nor, without a cooperative launch, on a GPU).
// labeled_partition and binary_partition split a tile or coalesced group into coalesced groups by
// exchanging the labels with shuffles, so they are warp collectives of the parent's lanes.
#pragma once

#include "cudasim/runtime.h"

namespace cooperative_groups {
namespace details {
#define CUDASIM_CG_SITE const char* file = __builtin_FILE(), int line = __builtin_LINE()

inline unsigned block_threads() {
  const dim3& d = ::cudasim::detail::cur_block("cooperative_groups").bdim;
  return d.x * d.y * d.z;
}
inline unsigned block_rank() {
  const uint3& t = ::cudasim::detail::cur_thread("cooperative_groups").tid;
  const dim3& d = ::cudasim::detail::cur_block("cooperative_groups").bdim;
  return t.x + d.x * (t.y + d.y * t.z);
}
inline unsigned lane() { return block_rank() & 31u; }
// The lanes of this thread's warp that exist (the last warp of a block may be partial).
inline unsigned warp_lanes() {
  unsigned base = block_rank() & ~31u, n = block_threads() - base;
  return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}
// The lanes of the aligned tile of `size` lanes (a power of two up to 32) holding this thread.
inline unsigned tile_mask(unsigned size) {
  unsigned m = size >= 32 ? 0xffffffffu : ((1u << size) - 1) << (lane() & ~(size - 1));
  return m & warp_lanes();
}
// The lane holding rank r of a group with lane mask m.
inline int lane_of_rank(unsigned m, unsigned r) {
  for (int l = 0; l < 32; ++l)
    if ((m >> l) & 1u) {
      if (r == 0) return l;
      --r;
    }
  return -1;
}

// Values of any trivially copyable type cross lanes 8 bytes at a time, as CUDA allows.
template <class T>
T shuffle(::cudasim::detail::WarpOp op, unsigned mask, const T& v, int param, int width, const char* file, int line) {
  static_assert(std::is_trivially_copyable<T>::value, "cooperative_groups: shuffles take a trivially copyable value");
  if constexpr (sizeof(T) <= 8) {
    return ::cudasim::detail::shfl(op, mask, v, param, width, file, line);
  } else {
    unsigned char in[sizeof(T)], out[sizeof(T)];
    std::memcpy(in, &v, sizeof(T));
    for (size_t o = 0; o < sizeof(T); o += 8) {
      uint64_t chunk = 0;
      size_t n = sizeof(T) - o < 8 ? sizeof(T) - o : 8;
      std::memcpy(&chunk, in + o, n);
      chunk = ::cudasim::detail::warp_collective(op, mask, chunk, param, width, 8, false, file, line);
      std::memcpy(out + o, &chunk, n);
    }
    T r;
    std::memcpy(&r, out, sizeof(T));
    return r;
  }
}
template <class T>
struct dependent_false : std::false_type {};
struct group_access;
}  // namespace details

// A group of threads of one block: the whole block, a tile of a warp, or the lanes that reached
// coalesced_threads() together. The derived classes below give the same operations directly.
class thread_group {
 public:
  enum class kind : unsigned char { block, tile, coalesced };
  void sync(CUDASIM_CG_SITE) const {
    if (kind_ == kind::block) ::cudasim::detail::syncthreads(file, line);
    else ::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Sync, mask_, 0, 0, 32, 0, false, file, line);
  }
  unsigned long long thread_rank() const {
    if (kind_ == kind::block) return details::block_rank();
    if (kind_ == kind::tile) return details::lane() & (size_ - 1);
    return (unsigned)__builtin_popcount(mask_ & ((1u << details::lane()) - 1));
  }
  unsigned long long size() const { return kind_ == kind::block ? details::block_threads() : size_; }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return true; }

 protected:
  thread_group(kind k, unsigned size, unsigned mask) : kind_(k), size_(size), mask_(mask) {}
  kind kind_;
  unsigned size_;  // tile: the tile size; coalesced: the member count
  unsigned mask_;  // warp lanes of a tile or coalesced group
  friend thread_group tiled_partition(const thread_group& parent, unsigned tile_size);
  friend struct details::group_access;
};

class thread_block : public thread_group {
 public:
  void sync(CUDASIM_CG_SITE) const { ::cudasim::detail::syncthreads(file, line); }
  unsigned long long thread_rank() const { return details::block_rank(); }
  unsigned long long size() const { return details::block_threads(); }
  unsigned long long num_threads() const { return details::block_threads(); }
  dim3 group_index() const { return dim3(::cudasim::detail::cur_block("cooperative_groups").bid); }
  dim3 thread_index() const { return dim3(::cudasim::detail::cur_thread("cooperative_groups").tid); }
  dim3 group_dim() const { return ::cudasim::detail::cur_block("cooperative_groups").bdim; }
  dim3 dim_threads() const { return group_dim(); }

 private:
  thread_block() : thread_group(kind::block, 0, 0) {}
  friend thread_block this_thread_block();
};
inline thread_block this_thread_block() { return thread_block(); }

// What a kernel declares in shared memory (`__shared__ cg::block_tile_memory<256> mem;`) and passes
// to this_thread_block(mem), so that GPUs below compute capability 8.0 have scratch space for tiles
// larger than a warp. The simulated device is sm_90, which needs none (as on a real sm_90), so it
// holds nothing; tiles are still at most 32 threads here (thread_block_tile says so).
template <unsigned int MaxBlockSize = 1024>
struct block_tile_memory {
  static_assert(MaxBlockSize >= 1 && MaxBlockSize <= 1024, "cudasim: block_tile_memory<MaxBlockSize> takes 1 to 1024 threads");
};
template <unsigned int MaxBlockSize>
thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) {
  return this_thread_block();
}

// A tile of Size consecutive threads (a power of two, at most a warp), from tiled_partition<Size>.
template <unsigned Size, class Parent = void>
class thread_block_tile : public thread_group {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                "cudasim: thread_block_tile<N> needs N to be a power of two from 1 to 32 (tiles larger than a warp, "
                "64 to 512 threads, are not supported by the CPU simulator: use a tile of 32 and combine the warps' "
                "results through shared memory and __syncthreads())");

 public:
  static constexpr unsigned long long num_threads() { return Size; }
  static constexpr unsigned long long size() { return Size; }
  unsigned long long thread_rank() const { return details::lane() & (Size - 1); }
  unsigned long long meta_group_rank() const { return details::block_rank() / Size; }
  unsigned long long meta_group_size() const { return (details::block_threads() + Size - 1) / Size; }
  void sync(CUDASIM_CG_SITE) const {
    ::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Sync, mask_, 0, 0, 32, 0, false, file, line);
  }
  template <class T>
  T shfl(T v, int src, CUDASIM_CG_SITE) const {
    return details::shuffle(::cudasim::detail::WarpOp::ShflIdx, mask_, v, src, (int)Size, file, line);
  }
  template <class T>
  T shfl_down(T v, unsigned delta, CUDASIM_CG_SITE) const {
    return details::shuffle(::cudasim::detail::WarpOp::ShflDown, mask_, v, (int)delta, (int)Size, file, line);
  }
  template <class T>
  T shfl_up(T v, unsigned delta, CUDASIM_CG_SITE) const {
    return details::shuffle(::cudasim::detail::WarpOp::ShflUp, mask_, v, (int)delta, (int)Size, file, line);
  }
  template <class T>
  T shfl_xor(T v, unsigned lane_mask, CUDASIM_CG_SITE) const {
    return details::shuffle(::cudasim::detail::WarpOp::ShflXor, mask_, v, (int)lane_mask, (int)Size, file, line);
  }
  // Bit i is the predicate of the tile's thread i.
  unsigned ballot(int pred, CUDASIM_CG_SITE) const {
    unsigned b = __ballot_sync(mask_, pred, file, line);
    return Size == 32 ? b : (b >> (details::lane() & ~(Size - 1))) & ((1u << Size) - 1);
  }
  int any(int pred, CUDASIM_CG_SITE) const { return __any_sync(mask_, pred, file, line); }
  int all(int pred, CUDASIM_CG_SITE) const { return __all_sync(mask_, pred, file, line); }

  thread_block_tile() : thread_group(kind::tile, Size, details::tile_mask(Size)) {}
  // tiled_partition<N>(block) and tiled_partition<N>(tile) give the same tile.
  template <class P>
  thread_block_tile(const thread_block_tile<Size, P>&) : thread_block_tile() {}
};

template <unsigned Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
  return thread_block_tile<Size, Parent>();
}
// The run-time form: a thread_group of tile_size threads (a power of two, at most 32).
inline thread_group tiled_partition(const thread_group& parent, unsigned tile_size) {
  (void)parent;
  if (tile_size == 0 || tile_size > 32 || (tile_size & (tile_size - 1)))
    ::cudasim::detail::device_misuse("tiled_partition(group, n) with n not a power of two from 1 to 32", nullptr, 0);
  return thread_group(thread_group::kind::tile, tile_size, details::tile_mask(tile_size));
}

// The lanes of the warp that called coalesced_threads() together (their __activemask()).
class coalesced_group : public thread_group {
 public:
  unsigned long long thread_rank() const { return (unsigned)__builtin_popcount(mask_ & ((1u << details::lane()) - 1)); }
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned long long meta_group_rank() const { return 0; }
  unsigned long long meta_group_size() const { return 1; }
  void sync(CUDASIM_CG_SITE) const {
    ::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Sync, mask_, 0, 0, 32, 0, false, file, line);
  }
  template <class T>
  T shfl(T v, unsigned rank, CUDASIM_CG_SITE) const {
    return details::shuffle(::cudasim::detail::WarpOp::ShflIdx, mask_, v, details::lane_of_rank(mask_, rank % size_), 32, file, line);
  }
  // By rank within the group: shfl_down(v, d) reads rank + d (its own value past the end).
  template <class T>
  T shfl_down(T v, unsigned delta, CUDASIM_CG_SITE) const {
    unsigned r = (unsigned)thread_rank() + delta;
    return details::shuffle(::cudasim::detail::WarpOp::ShflIdx, mask_, v,
                            details::lane_of_rank(mask_, r < size_ ? r : (unsigned)thread_rank()), 32, file, line);
  }
  template <class T>
  T shfl_up(T v, unsigned delta, CUDASIM_CG_SITE) const {
    unsigned r = (unsigned)thread_rank();
    return details::shuffle(::cudasim::detail::WarpOp::ShflIdx, mask_, v, details::lane_of_rank(mask_, r >= delta ? r - delta : r), 32,
                            file, line);
  }
  // Bit i is the predicate of the group's thread of rank i.
  unsigned ballot(int pred, CUDASIM_CG_SITE) const {
    unsigned b = __ballot_sync(mask_, pred, file, line), out = 0;
    for (unsigned r = 0; r < size_; ++r)
      if ((b >> details::lane_of_rank(mask_, r)) & 1u) out |= 1u << r;
    return out;
  }
  int any(int pred, CUDASIM_CG_SITE) const { return __any_sync(mask_, pred, file, line); }
  int all(int pred, CUDASIM_CG_SITE) const { return __all_sync(mask_, pred, file, line); }

 private:
  explicit coalesced_group(unsigned mask) : thread_group(kind::coalesced, (unsigned)__builtin_popcount(mask), mask) {}
  friend coalesced_group coalesced_threads(const char*, int);
  friend struct details::group_access;
};
inline coalesced_group coalesced_threads(CUDASIM_CG_SITE) { return coalesced_group(__activemask(file, line)); }

namespace details {
struct group_access {
  static unsigned mask(const thread_group& g) { return g.mask_; }
  static coalesced_group coalesced(unsigned mask) { return coalesced_group(mask); }
};
// The lanes of the parent (lane mask `parent`) whose label equals this lane's: a ballot finds the
// lanes that take part (as in __syncwarp, lanes that returned are not waited for and join no
// group), then every lane takes each participant's label in turn with a shuffle.
inline coalesced_group partition_by_label(unsigned parent, unsigned long long label, const char* file, int line) {
  unsigned present = __ballot_sync(parent, 1, file, line), same = 0;
  for (int l = 0; l < 32; ++l)
    if ((present >> l) & 1u) {
      unsigned long long theirs = shuffle(::cudasim::detail::WarpOp::ShflIdx, parent, label, l, 32, file, line);
      if (theirs == label) same |= 1u << l;
    }
  return group_access::coalesced(same);
}
template <class Label>
unsigned long long label_bits(Label label) {
  static_assert(std::is_integral<Label>::value || std::is_pointer<Label>::value || std::is_enum<Label>::value,
                "cudasim: labeled_partition takes an integral label (as in CUDA)");
  if constexpr (std::is_pointer<Label>::value) return (unsigned long long)(uintptr_t)label;
  else return (unsigned long long)label;
}
}  // namespace details

// The threads of the tile or coalesced group g with the same label, as a coalesced group: its
// size, thread_rank (in lane order), sync, shuffles and votes cover those threads only.
template <class Label>
coalesced_group labeled_partition(const coalesced_group& g, Label label, CUDASIM_CG_SITE) {
  return details::partition_by_label(details::group_access::mask(g), details::label_bits(label), file, line);
}
template <unsigned Size, class Parent, class Label>
coalesced_group labeled_partition(const thread_block_tile<Size, Parent>& g, Label label, CUDASIM_CG_SITE) {
  return details::partition_by_label(details::group_access::mask(g), details::label_bits(label), file, line);
}
// labeled_partition with a label of 0 or 1.
inline coalesced_group binary_partition(const coalesced_group& g, bool pred, CUDASIM_CG_SITE) {
  return labeled_partition(g, (unsigned)pred, file, line);
}
template <unsigned Size, class Parent>
coalesced_group binary_partition(const thread_block_tile<Size, Parent>& g, bool pred, CUDASIM_CG_SITE) {
  return labeled_partition(g, (unsigned)pred, file, line);
}

template <class Group>
void sync(const Group& g, CUDASIM_CG_SITE) { g.sync(file, line); }
template <class Group>
unsigned long long thread_rank(const Group& g) { return g.thread_rank(); }
template <class Group>
unsigned long long group_size(const Group& g) { return g.size(); }

// The grid as a group: ranks and sizes work; sync() needs a cooperative launch, which the
// simulator does not have.
class grid_group {
 public:
  unsigned long long thread_rank() const {
    return block_rank() * details::block_threads() + details::block_rank();
  }
  unsigned long long block_rank() const {
    const auto& b = ::cudasim::detail::cur_block("this_grid()");
    return b.bid.x + b.gdim.x * (b.bid.y + (unsigned long long)b.gdim.y * b.bid.z);
  }
  unsigned long long num_blocks() const {
    const auto& b = ::cudasim::detail::cur_block("this_grid()");
    return (unsigned long long)b.gdim.x * b.gdim.y * b.gdim.z;
  }
  unsigned long long size() const { return num_blocks() * details::block_threads(); }
  unsigned long long num_threads() const { return size(); }
  dim3 group_dim() const { return ::cudasim::detail::cur_block("this_grid()").gdim; }
  bool is_valid() const { return false; }  // not launched with cudaLaunchCooperativeKernel
  // this_grid().sync() and cg::sync(grid) (which calls this one) stop the build with this message.
  template <class T = void>
  void sync(const char* = nullptr, int = 0) const {
    static_assert(details::dependent_false<T>::value,
                  "cudasim: grid-wide synchronization (this_grid().sync(), cg::sync(grid)) is not supported by the CPU "
                  "simulator. On a GPU it needs a cooperative launch (cudaLaunchCooperativeKernel), which keeps every block "
                  "of the grid resident at once; the simulator runs a launch's blocks a few at a time, so they cannot all "
                  "wait for each other. Split the kernel in two launches at the sync point: the end of a kernel is the "
                  "barrier between blocks, and the second kernel reads what the first wrote.");
  }
};
inline grid_group this_grid() { return grid_group(); }
template <class T = void>
void this_multi_grid() {
  static_assert(details::dependent_false<T>::value, "cudasim: multi-device cooperative groups are not supported by the CPU simulator");
}

#undef CUDASIM_CG_SITE
}  // namespace cooperative_groups

#include "cooperative_groups/reduce.h"
#include "cooperative_groups/memcpy_async.h"
