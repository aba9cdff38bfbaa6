// The profiler (profile.h): warp-level memory counters in Nsight Compute's terms.
//
// A warp-level instruction is what the lanes of one warp execute together. The simulator runs
// lanes one after another, so it rebuilds them: between two block barriers, the k-th time lane L
// executes the access at code address `pc` belongs to the instance (pc, k) of L's warp. Lanes that
// skip the access (a false `if`, fewer loop trips) are inactive in that instance, as on the GPU,
// where an instruction that no lane of a warp executes is not issued either. At every barrier and
// at the end of the block the instances are complete and are costed:
//   - shared memory: 32 banks of 4-byte words. One pass (a wavefront) serves at most one word per
//     bank; lanes reading the same word share it (broadcast). 8-byte accesses are served a half-warp
//     at a time and 16-byte accesses a quarter-warp at a time, so their fewest passes are 2 and 4.
//     Bank conflicts are the passes beyond the fewest.
//   - global (device) memory: one request per instruction, and the distinct 32-byte sectors its
//     lanes touch; the fewest sectors its distinct bytes could fit in say how well it coalesces.
//   - atomics: the same, plus how many lanes hit one address (they serialise).
// docs/architecture.md, "The profiler", says what this leaves out and how it compares with ncu.
#include "profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "internal.h"

namespace cudasim {
namespace detail {

bool g_profile_on = false;

namespace {

enum Op : uint8_t { SharedLd, SharedSt, SharedAtom, GlobalLd, GlobalSt, GlobalAtom, kOps };
const char* const kOpNames[kOps] = {"shared_ld", "shared_st", "shared_atom", "global_ld", "global_st", "global_atom"};

// One warp-level instruction being assembled: which lanes took part, and what each accessed.
struct Inst {
  uint32_t mask;
  uintptr_t addr[32];
  uint8_t size[32];
};

// One access site of one warp in the current barrier interval.
struct Slot {
  uint32_t pc;
  uint8_t op;
  uint16_t count[32];       // how often each lane has executed it in this interval
  std::vector<Inst> insts;  // instance k: the k-th execution by each lane
};

struct WarpState {
  std::vector<Slot> slots;
  size_t last = 0;  // the slot used last: a lane usually repeats the access it just made
};

struct Totals {
  uint64_t inst = 0, lanes = 0;
  uint64_t wavefronts = 0, ideal = 0;        // shared
  uint64_t sectors = 0, ideal_sectors = 0;   // global
  uint64_t bytes = 0;
  uint64_t same_addr_max = 0;                // atomics: the most lanes on one address in one instruction
  uint64_t serial = 0;                       // atomics: sum over instructions of that count
  std::map<uint32_t, uint64_t> strides;       // shared: lane stride in words -> extra wavefronts at it
};

struct Collective {
  uint64_t inst = 0, lanes = 0;
};

struct State {
  FILE* f = nullptr;
  bool launch = false;  // the launch in flight is profiled
  unsigned launch_index = 0;
  std::vector<WarpState> warps;
  std::map<std::pair<uint32_t, int>, Totals> sites;  // (pc, op)
  // Barriers and warp collectives carry their file:line, not a code address.
  std::map<std::string, uint64_t> barriers;  // file:line -> warp-level barrier instructions
  std::map<std::pair<std::string, int>, Collective> collectives;  // (file:line, WarpOp)
  uint64_t blocks = 0, warps_run = 0, threads = 0, block_barriers = 0;
};
State g_pf;

struct Init {
  Init() {
    const char* path = std::getenv("CUDASIM_PROFILE");
    if (!path || !*path) return;
    g_pf.f = std::fopen(path, "w");
    if (!g_pf.f) {
      std::fprintf(stderr, "cudasim: cannot write the profile to %s (CUDASIM_PROFILE)\n", path);
      return;
    }
    g_profile_on = true;
  }
} g_init;

void cost(const Slot& s, const Inst& in) {
  Totals& t = g_pf.sites[{s.pc, s.op}];
  ++t.inst;
  t.lanes += unsigned(__builtin_popcount(in.mask));
  if (s.op <= SharedAtom) {
    SharedCost c = shared_cost(in.mask, in.addr, in.size);
    t.wavefronts += c.wavefronts;
    t.ideal += c.ideal;
    if (c.wavefronts > c.ideal) t.strides[c.stride] += c.wavefronts - c.ideal;
  } else {
    GlobalCost c = global_cost(in.mask, in.addr, in.size);
    t.sectors += c.sectors;
    t.ideal_sectors += c.ideal;
    t.bytes += c.bytes;
    if (s.op == GlobalAtom) {
      t.same_addr_max = std::max<uint64_t>(t.same_addr_max, c.same_addr);
      t.serial += c.same_addr;
    }
  }
  if (s.op == SharedAtom) {
    GlobalCost c = global_cost(in.mask, in.addr, in.size);
    t.same_addr_max = std::max<uint64_t>(t.same_addr_max, c.same_addr);
    t.serial += c.same_addr;
  }
}

// Every instance of the interval is complete: cost them and start the next interval.
void close_interval() {
  for (WarpState& ws : g_pf.warps) {
    for (Slot& s : ws.slots) {
      for (const Inst& in : s.insts) cost(s, in);
      s.insts.clear();
      std::memset(s.count, 0, sizeof s.count);
    }
    ws.last = 0;
  }
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += char(c);
    else if (c < 0x20) o += strf("\\u%04x", c);
    else o += char(c);
  }
  return o + "\"";
}

const char* warp_op_name(int op) {
  switch (WarpOp(op)) {
    case WarpOp::Sync: return "syncwarp";
    case WarpOp::ShflIdx: return "shfl";
    case WarpOp::ShflUp: return "shfl_up";
    case WarpOp::ShflDown: return "shfl_down";
    case WarpOp::ShflXor: return "shfl_xor";
    case WarpOp::Ballot: return "ballot";
    case WarpOp::Any: return "any";
    case WarpOp::All: return "all";
    case WarpOp::ReduceAdd: return "reduce_add";
    case WarpOp::ReduceMin: return "reduce_min";
    case WarpOp::ReduceMax: return "reduce_max";
    case WarpOp::Activemask: return "activemask";
  }
  return "?";
}

}  // namespace

SharedCost shared_cost(uint32_t mask, const uintptr_t* addr, const uint8_t* size) {
  unsigned width = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (mask & (1u << l)) width = std::max<unsigned>(width, size[l]);
  // Lanes served together: the whole warp for up to 4 bytes a lane, a half-warp for 8, a quarter-warp for 16.
  unsigned group = width > 8 ? 8 : width > 4 ? 16 : 32;
  SharedCost c{0, 0, 0};
  for (unsigned lo = 0; lo < 32; lo += group) {
    uint32_t words[32 * 4];
    unsigned n = 0;
    for (unsigned l = lo; l < lo + group; ++l) {
      if (!(mask & (1u << l))) continue;
      uintptr_t first = addr[l] >> 2, last = (addr[l] + std::max<unsigned>(size[l], 1) - 1) >> 2;
      for (uintptr_t wd = first; wd <= last && n < 32 * 4; ++wd) words[n++] = uint32_t(wd);
    }
    if (n == 0) continue;
    std::sort(words, words + n);
    n = unsigned(std::unique(words, words + n) - words);
    unsigned per_bank[32] = {};
    unsigned most = 0;
    for (unsigned i = 0; i < n; ++i) most = std::max(most, ++per_bank[words[i] & 31]);
    c.wavefronts += most;
    c.ideal += 1;
  }
  if (c.wavefronts > c.ideal) {
    // The most common word distance between neighbouring active lanes (lane order).
    uintptr_t gaps[31];
    unsigned ng = 0;
    int prev = -1;
    for (unsigned l = 0; l < 32; ++l) {
      if (!(mask & (1u << l))) continue;
      if (prev >= 0) gaps[ng++] = (addr[l] >> 2) > (addr[prev] >> 2) ? (addr[l] >> 2) - (addr[prev] >> 2) : (addr[prev] >> 2) - (addr[l] >> 2);
      prev = int(l);
    }
    std::sort(gaps, gaps + ng);
    unsigned best = 0;
    for (unsigned i = 0, run = 0; i < ng; ++i) {
      run = i > 0 && gaps[i] == gaps[i - 1] ? run + 1 : 1;
      if (run > best && gaps[i] > 0) best = run, c.stride = uint32_t(gaps[i]);
    }
    if (2 * best < ng) c.stride = 0;  // no distance most neighbours share
  }
  return c;
}

GlobalCost global_cost(uint32_t mask, const uintptr_t* addr, const uint8_t* size) {
  GlobalCost c{0, 0, 0, 0};
  uintptr_t sectors[32 * 2];
  std::pair<uintptr_t, uintptr_t> spans[32];
  uintptr_t starts[32];
  unsigned ns = 0, nspan = 0;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask & (1u << l))) continue;
    uintptr_t lo = addr[l], hi = addr[l] + std::max<unsigned>(size[l], 1);
    for (uintptr_t s = lo >> 5; s <= (hi - 1) >> 5 && ns < 64; ++s) sectors[ns++] = s;
    spans[nspan] = {lo, hi};
    starts[nspan++] = lo;
  }
  std::sort(sectors, sectors + ns);
  c.sectors = uint32_t(std::unique(sectors, sectors + ns) - sectors);
  // Distinct bytes: the union of the lanes' spans.
  std::sort(spans, spans + nspan);
  uintptr_t end = 0;
  for (unsigned i = 0; i < nspan; ++i) {
    uintptr_t lo = std::max(spans[i].first, end);
    if (spans[i].second > lo) c.bytes += uint32_t(spans[i].second - lo);
    end = std::max(end, spans[i].second);
  }
  c.ideal = (c.bytes + 31) / 32;
  std::sort(starts, starts + nspan);
  for (unsigned i = 0, run = 0; i < nspan; ++i) {
    run = i > 0 && starts[i] == starts[i - 1] ? run + 1 : 1;
    c.same_addr = std::max(c.same_addr, run);
  }
  return c;
}

void Profiler::launch_begin(const LaunchBegin& e) {
  g_pf.launch = profiles(e.g.schedule_index);
  if (!g_pf.launch) return;
  for (WarpState& ws : g_pf.warps) ws = WarpState();  // another kernel: other code addresses
  g_pf.sites.clear();
  g_pf.barriers.clear();
  g_pf.collectives.clear();
  g_pf.blocks = g_pf.warps_run = g_pf.threads = g_pf.block_barriers = 0;
}

void Profiler::block_begin(Worker& w, unsigned n) {
  if (!g_pf.launch) return;
  // The previous block ended with every instance costed (block_end): its slots are empty and are
  // reused, since the blocks of a launch run the same code.
  unsigned nwarps = (n + 31) / 32;
  if (g_pf.warps.size() < nwarps) g_pf.warps.resize(nwarps);
  ++g_pf.blocks;
  g_pf.warps_run += nwarps;
  g_pf.threads += n;
  (void)w;
}

void Profiler::record(const AccessEvent& a) {
  if (!g_pf.launch) return;
  Thread& t = a.t;
  unsigned lane = t.view.lane;
  WarpState& ws = g_pf.warps[t.linear / 32];
  uint8_t op = a.atomic ? 2 : a.write && !a.read ? 1 : 0;
  if (a.space == Space::Device) op = uint8_t(op + GlobalLd);
  Slot* s = nullptr;
  if (ws.last < ws.slots.size() && ws.slots[ws.last].pc == a.pc && ws.slots[ws.last].op == op) {
    s = &ws.slots[ws.last];
  } else {
    for (size_t i = 0; i < ws.slots.size(); ++i)
      if (ws.slots[i].pc == a.pc && ws.slots[i].op == op) {
        s = &ws.slots[i];
        ws.last = i;
        break;
      }
    if (!s) {
      ws.slots.emplace_back();
      s = &ws.slots.back();
      s->pc = a.pc;
      s->op = op;
      std::memset(s->count, 0, sizeof s->count);
      ws.last = ws.slots.size() - 1;
    }
  }
  unsigned k = s->count[lane];
  if (s->count[lane] < 0xffff) ++s->count[lane];
  if (k >= s->insts.size()) {
    s->insts.emplace_back();
    s->insts.back().mask = 0;
  }
  Inst& in = s->insts[k];
  in.mask |= 1u << lane;
  // Banks are numbered from the start of the block's shared memory window on the GPU; a uniform
  // shift of every address permutes banks without changing the passes, so the host address serves.
  in.addr[lane] = a.addr;
  in.size[lane] = uint8_t(std::min<size_t>(a.size, 255));
}

void Profiler::barrier(Worker& w, const char* file, int line) {
  if (!g_pf.launch) return;
  close_interval();
  ++g_pf.block_barriers;
  unsigned nwarps = unsigned((w.block.bdim.x * w.block.bdim.y * w.block.bdim.z + 31) / 32);
  g_pf.barriers[where(file, line)] += nwarps;
}

void Profiler::warp_collective(Worker&, unsigned, const WarpGroup& g) {
  if (!g_pf.launch) return;
  Collective& c = g_pf.collectives[{where(g.file, g.line), int(g.op)}];
  ++c.inst;
  c.lanes += unsigned(__builtin_popcount(g.arrived));
}

void Profiler::block_end(Worker&) {
  if (!g_pf.launch) return;
  close_interval();
}

void Profiler::launch_end(Grid& g) {
  if (!g_pf.launch) return;
  g_pf.launch = false;
  std::vector<uint32_t> pcs;
  for (auto& kv : g_pf.sites) pcs.push_back(kv.first.first);
  symbolize_sites(pcs);
  std::string o = strf("{\"launch\":%u,\"kernel\":%s,\"at\":%s,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shmem\":%zu,"
                       "\"blocks\":%llu,\"warps\":%llu,\"threads\":%llu,\"block_barriers\":%llu,\"accesses\":[",
                       g_pf.launch_index++, json_str(g.site.kernel).c_str(), json_str(where(g.site.file, g.site.line)).c_str(),
                       g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z, g.shmem, (unsigned long long)g_pf.blocks,
                       (unsigned long long)g_pf.warps_run, (unsigned long long)g_pf.threads,
                       (unsigned long long)g_pf.block_barriers);
  bool first = true;
  for (auto& kv : g_pf.sites) {
    const Totals& t = kv.second;
    o += strf("%s{\"at\":%s,\"pc\":%u,\"op\":\"%s\",\"inst\":%llu,\"lanes\":%llu", first ? "" : ",",
              json_str(site_of(kv.first.first)).c_str(), kv.first.first, kOpNames[kv.first.second],
              (unsigned long long)t.inst, (unsigned long long)t.lanes);
    if (kv.first.second <= SharedAtom) {
      // strides: the extra wavefronts by the lanes' word stride (0: no stride most lanes share).
      o += strf(",\"wavefronts\":%llu,\"ideal\":%llu,\"strides\":{", (unsigned long long)t.wavefronts, (unsigned long long)t.ideal);
      bool first_stride = true;
      for (auto& st : t.strides) {
        o += strf("%s\"%u\":%llu", first_stride ? "" : ",", st.first, (unsigned long long)st.second);
        first_stride = false;
      }
      o += "}";
    } else {
      o += strf(",\"sectors\":%llu,\"ideal_sectors\":%llu,\"bytes\":%llu", (unsigned long long)t.sectors,
                (unsigned long long)t.ideal_sectors, (unsigned long long)t.bytes);
    }
    if (kv.first.second == SharedAtom || kv.first.second == GlobalAtom)
      o += strf(",\"same_addr_max\":%llu,\"serial\":%llu", (unsigned long long)t.same_addr_max, (unsigned long long)t.serial);
    o += "}";
    first = false;
  }
  o += "],\"barriers\":[";
  first = true;
  for (auto& kv : g_pf.barriers) {
    o += strf("%s{\"at\":%s,\"inst\":%llu}", first ? "" : ",", json_str(kv.first).c_str(), (unsigned long long)kv.second);
    first = false;
  }
  o += "],\"collectives\":[";
  first = true;
  for (auto& kv : g_pf.collectives) {
    o += strf("%s{\"at\":%s,\"op\":\"%s\",\"inst\":%llu,\"lanes\":%llu}", first ? "" : ",",
              json_str(kv.first.first).c_str(), warp_op_name(kv.first.second), (unsigned long long)kv.second.inst,
              (unsigned long long)kv.second.lanes);
    first = false;
  }
  o += "]}\n";
  std::fputs(o.c_str(), g_pf.f);
  std::fflush(g_pf.f);
}

}  // namespace detail
}  // namespace cudasim
