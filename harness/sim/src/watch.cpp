// Watch mode: where a value in device memory came from. The instrumentation sees loads and stores,
// not data flow, so while the harness watches (a rerun of a case whose answer was wrong), every
// checked write becomes a node that keeps the reads its thread made since its previous write, each
// with the value read and the node that had written it. watch_origin() walks back from one word:
// the write that set it, the writes its thread had read, theirs, ... down to the host's input.
// Nothing here runs unless the harness turned the watch on (g_watch_on), so the checks and the
// fast path pay one test of a global in the checked access path only.
#include "watch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "checker_state.h"
#include "cudasim/control.h"
#include "trace.h"

namespace cudasim {
namespace detail {

bool g_watch_on = false;

namespace {

constexpr int kReads = 4;             // reads kept per write: enough for a scan step or a stencil
constexpr size_t kMaxNodes = 1 << 20;  // bounds the memory of a watched rerun (about 100 MiB)

enum NodeKind : uint8_t { kWrite = 1, kHost = 2, kMemset = 3, kNever = 4 };

struct Edge {
  uint32_t node;  // index into g.nodes
  uint32_t value;  // the word as the thread read it
  uint32_t pc;     // where it read it: the index arithmetic that picked the word is on that line
  uint16_t name;   // the word as the reading kernel names it (index into g.names), which may not be
  long long index; // the writer's name: a scan's `out` is the next launch's `scanned_sums`
};

struct Node {
  uint8_t kind;
  uint8_t space;
  uint8_t nreads;
  uint8_t type;     // index into kTypes
  uint16_t name;    // index into g.names
  uint16_t more;    // reads beyond kReads
  uint32_t run;     // the block run (kernel writes; shared memory words live for one run)
  uint32_t epoch;
  uint32_t pc;
  uint32_t block[3];
  uint16_t thread[3];
  long long index;
  Edge reads[kReads];
};

struct Pending {  // a thread's reads since its previous write
  uint32_t run = 0;
  uint8_t n = 0;
  uint16_t more = 0;
  Edge e[kReads];
};

const char* const kTypes[] = {"", "int", "unsigned int", "float", "double", "long long", "unsigned long long", "char"};

struct State {
  std::vector<Node> nodes{Node{}};  // node 0: none
  std::unordered_map<uintptr_t, uint32_t> word;  // a word's last node (device: address; shared: address too, with the run)
  std::vector<Pending> pending;  // by linear thread index (checked runs: one block at a time)
  std::vector<std::string> names;
  bool full = false;
};
State g;

uint16_t intern(const std::string& s) {
  for (size_t i = 0; i < g.names.size(); ++i)
    if (g.names[i] == s) return uint16_t(i);
  g.names.push_back(s);
  return uint16_t(g.names.size() - 1);
}

uint8_t type_index(const char* t) {
  if (!t) return 0;
  for (size_t i = 1; i < sizeof kTypes / sizeof *kTypes; ++i)
    if (!std::strcmp(t, kTypes[i])) return uint8_t(i);
  return 0;
}

// A new node for the word at `a`, named as reports name it (out[3], temp[5]); 0 when full.
uint32_t new_node(Worker& w, Space sp, uintptr_t a, uint8_t kind) {
  if (g.nodes.size() >= kMaxNodes) {
    g.full = true;
    return 0;
  }
  Node n{};
  n.kind = kind;
  n.space = uint8_t(sp);
  std::string array;
  long long index = 0;
  size_t elem = 4;
  const char* type = nullptr;
  name_address(w, int(sp), a, &array, &index, &elem, &type);
  n.name = intern(array);
  n.index = index;
  n.type = type_index(type);
  g.nodes.push_back(n);
  return uint32_t(g.nodes.size() - 1);
}

// The node that last set the word `word`, or a leaf for a value no checked kernel wrote in the
// watch (the host's input, a memset).
uint32_t writer_of(Worker& w, Space sp, uintptr_t word, uint32_t run, const uint16_t* dinit) {
  auto it = g.word.find(word);
  unsigned writer = 0;  // the device word's last writer kind (shadow.cpp: 1 host, 2 memset, 3 kernel)
  if (dinit) writer = (*dinit & 0xf) ? (*dinit >> 8) & 3 : 0;
  if (it != g.word.end()) {
    const Node& n = g.nodes[it->second];
    // A shared word belongs to one block run; a device word written by the host since the kernel
    // wrote it is the host's again.
    const bool stale = sp != Space::Device ? n.run != run : (n.kind == kWrite && writer != 3);
    if (!stale) return it->second;
  }
  uint8_t kind = kNever;
  if (sp == Space::Device && writer == 1) kind = kHost;
  else if (sp == Space::Device && writer == 2) kind = kMemset;
  uint32_t id = new_node(w, sp, word, kind);
  if (id) {
    g.nodes[id].run = run;
    g.word[word] = id;
  }
  return id;
}

}  // namespace

void watch_access(Worker& w, Thread& t, Space sp, uintptr_t word, bool write, bool read, uint32_t run, uint32_t pc,
                  const uint16_t* dinit) {
  const unsigned linear = t.linear;
  if (g.pending.size() <= linear) g.pending.resize(linear + 1);
  Pending& p = g.pending[linear];
  if (p.run != run) p = Pending{}, p.run = run;
  if (read) {
    // Called before the access: the memory holds the value this read returns.
    uint32_t value;
    std::memcpy(&value, reinterpret_cast<const void*>(word), 4);
    uint32_t from = writer_of(w, sp, word, run, dinit);
    bool dup = false;
    for (int i = 0; i < p.n; ++i) dup |= p.e[i].node == from && from != 0 && p.e[i].pc == (pc & kPcMask);
    if (!dup) {
      Edge e{from, value, pc & kPcMask, 0, 0};
      if (from) {  // the word as this kernel names it, which the report shows beside the read
        std::string array;
        size_t elem = 4;
        const char* type = nullptr;
        name_address(w, int(sp), word, &array, &e.index, &elem, &type);
        e.name = intern(array);
      }
      if (p.n < kReads) p.e[p.n++] = e;
      else {
        // Keep the latest reads: the ones just before the write are those it most likely used.
        std::memmove(&p.e[0], &p.e[1], sizeof(Edge) * (kReads - 1));
        p.e[kReads - 1] = e;
        ++p.more;
      }
    }
  }
  if (write) {
    uint32_t id = new_node(w, sp, word, kWrite);
    if (!id) {
      g.word.erase(word);  // no record: the walk stops here rather than name an older write
      return;
    }
    Node& n = g.nodes[id];
    n.run = run;
    n.epoch = w.bar_epoch;
    n.pc = pc & kPcMask;
    n.block[0] = w.block.bid.x, n.block[1] = w.block.bid.y, n.block[2] = w.block.bid.z;
    n.thread[0] = uint16_t(t.view.tid.x), n.thread[1] = uint16_t(t.view.tid.y), n.thread[2] = uint16_t(t.view.tid.z);
    n.nreads = p.n;
    n.more = p.more;
    std::copy(p.e, p.e + p.n, n.reads);
    // An atomic reads and writes: its own read stays with the thread for its next write.
    if (!read) p.n = 0, p.more = 0;
    g.word[word] = id;
  }
}

}  // namespace detail

static bool g_trace_was_on = false;

void watch_begin() {
  detail::g = detail::State{};
  detail::g_watch_on = true;
  // The rerun is the harness's, not the program's: a trace (CUDASIM_TRACE) shows the first run only.
  g_trace_was_on = detail::g_trace_on;
  detail::g_trace_on = false;
}

void watch_end() {
  detail::g_trace_on = g_trace_was_on;
  detail::g_watch_on = false;
  detail::g = detail::State{};
}

int watch_origin(const void* p, OriginNode* out, int max_nodes, int max_depth) {
  using namespace detail;
  auto it = g.word.find(reinterpret_cast<uintptr_t>(p) & ~uintptr_t(3));
  if (it == g.word.end() || max_nodes <= 0) return 0;
  // Breadth first from the watched word, so that a long chain shows its nearest writes first.
  std::vector<uint32_t> order{it->second};
  std::vector<int> depth{0};
  std::vector<uint32_t> pcs;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = g.nodes[order[i]];
    if (n.kind == kWrite) pcs.push_back(n.pc);
    for (int r = 0; r < n.nreads; ++r) pcs.push_back(n.reads[r].pc);
    if (depth[i] >= max_depth) continue;
    for (int r = 0; r < n.nreads; ++r) {
      uint32_t from = n.reads[r].node;
      if (!from || std::find(order.begin(), order.end(), from) != order.end()) continue;
      if (int(order.size()) >= max_nodes) break;
      order.push_back(from);
      depth.push_back(depth[i] + 1);
    }
  }
  symbolize_sites(pcs);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = g.nodes[order[i]];
    OriginNode& o = out[i];
    o = OriginNode{};
    o.kind = n.kind == kWrite ? OriginNode::Write : n.kind == kHost ? OriginNode::Host : n.kind == kMemset ? OriginNode::Memset : OriginNode::Never;
    std::snprintf(o.array, sizeof o.array, "%s", g.names[n.name].c_str());
    o.index = n.index;
    o.shared = n.space != uint8_t(Space::Device);
    for (int d = 0; d < 3; ++d) o.block[d] = n.block[d], o.thread[d] = n.thread[d];
    if (n.kind == kWrite) std::snprintf(o.site, sizeof o.site, "%s", site_of(n.pc).c_str());
    o.epoch = n.epoch;
    o.type = kTypes[n.type];
    o.depth = depth[i];
    o.more_reads = n.more;
    for (int r = 0; r < n.nreads; ++r) {
      auto at = std::find(order.begin(), order.end(), n.reads[r].node);
      o.reads[o.nreads] = at == order.end() ? -1 : int(at - order.begin());
      std::snprintf(o.read_sites[o.nreads], sizeof o.read_sites[0], "%s", site_of(n.reads[r].pc).c_str());
      const Node& src = g.nodes[n.reads[r].node];
      const bool named = n.reads[r].node != 0;
      std::snprintf(o.read_arrays[o.nreads], sizeof o.read_arrays[0], "%s", g.names[named ? n.reads[r].name : src.name].c_str());
      o.read_index[o.nreads] = named ? n.reads[r].index : src.index;
      o.values[o.nreads++] = n.reads[r].value;
    }
  }
  return int(order.size());
}

bool watch_overflowed() { return detail::g.full; }

}  // namespace cudasim
