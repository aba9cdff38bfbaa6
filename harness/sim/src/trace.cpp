// The trace (trace.h): the events of one block, written as JSON lines for scripts/puzzlelib/trace.py.
//
// Events, one object a line, with "e" naming the kind:
//   launch  kernel, site, grid, block, shmem, traced (whether the traced block exists in this grid)
//   block   b (linear index), threads
//   acc     t (thread), k ("r", "w" or "rw"), atomic, sp (0 static shared, 1 dynamic shared, 2 device),
//           arr, i (element index), el (element bytes), ty (element type or ""), n (bytes), pc,
//           v (bytes read, hex, little-endian), nv (bytes written, hex: read back once the store is done)
//   bar     site: a __syncthreads() released, the interval ends
//   warp    op, warp, mask, lanes (those that met), width, bytes, site, param/val/res (per lane, null if absent)
//   cbar    t, arr (the barrier's variable), phase, done (this arrival completed the phase), site, init
//   hazard  kind, ta, pca, tb, pcb (the earlier and the current access), sp, arr, i, cross
//   uninit  t, pc, sp, arr, i
//   end     arrays: the block's shared arrays (name, elem, count, site, dyn)
//   error   kind, msg: the launch failed (divergence, deadlock, out of bounds, ...); for the traced
//           block it follows an `end` (its arrays as they stood) and a `stop`:
//   stop    threads: where each thread of the block was when the launch stopped, [t, state, what, site]
//           with state "barrier", "warp", "cbar", "exited", "faulted" or "running"
//   sites   pcs: {"pc": "file:line"} for every code address above
//   truncated  the block made more events than a trace can show; the rest were dropped
//
// The value a thread wrote is read back from memory at the next event (every store completes
// before the simulator's next hook runs: fibers of a block run one at a time, on one worker).
// Each event is written (and flushed) as soon as it is complete, not at the end of the block: a
// launch that the watchdog ends (a runaway thread) exits the process without returning here,
// and its trace must still hold every step up to the stop.
#include "trace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "internal.h"

namespace cudasim {
namespace detail {

bool g_trace_on = false;

namespace {
constexpr size_t kMaxEvents = 200000;

struct Ev {
  std::string text;
  uintptr_t addr = 0;  // an access whose written bytes are read back at the next event
  size_t size = 0;
  bool open = false;
};

struct TraceState {
  FILE* f = nullptr;
  long block = 0;
  bool launch = false;      // the current launch is traced (its checked run)
  Worker* w = nullptr;      // the worker running the traced block, while it runs
  std::vector<Ev> evs;
  long pending = -1;        // index in evs of the access whose written value is not read yet
  size_t written = 0;       // evs[0, written) are in the file
  size_t count = 0;         // events of the block so far, written or not
  bool truncated = false;
  std::set<uint32_t> pcs;
  std::vector<std::string> deferred;  // findings about the access being handled (Tracer::hazard)
};
TraceState g_tr;

struct Init {
  Init() {
    const char* path = std::getenv("CUDASIM_TRACE");
    if (!path || !*path) return;
    if (const char* b = std::getenv("CUDASIM_TRACE_BLOCK")) g_tr.block = std::atol(b);
    g_tr.f = std::fopen(path, "w");
    if (!g_tr.f) {
      std::fprintf(stderr, "cudasim: cannot write the trace to %s (CUDASIM_TRACE)\n", path);
      return;
    }
    g_trace_on = true;
  }
} g_init;

std::string json_str(const char* s) {
  std::string o = "\"";
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') o += '\\', o += char(c);
    else if (c == '\n') o += "\\n";
    else if (c < 0x20) o += strf("\\u%04x", c);
    else o += char(c);
  }
  return o + "\"";
}
std::string json_str(const std::string& s) { return json_str(s.c_str()); }

std::string hex_bytes(uintptr_t a, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string o;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(a);
  for (size_t i = 0; i < std::min<size_t>(n, 64); ++i) o += d[p[i] >> 4], o += d[p[i] & 15];
  return o;
}

// The previous access's store has completed: read what it wrote.
void settle() {
  if (g_tr.pending < 0) return;
  Ev& e = g_tr.evs[size_t(g_tr.pending)];
  e.text += ",\"nv\":\"" + hex_bytes(e.addr, e.size) + "\"}";
  e.open = false;
  g_tr.pending = -1;
}

bool tracing(const Worker& w) { return g_trace_on && g_tr.w == &w; }

void write_line(const std::string& s) {
  OwnCalls own;  // may run on a simulated thread (an error inside the block)
  std::fputs(s.c_str(), g_tr.f);
  std::fputc('\n', g_tr.f);
}

// Writes the complete events in order, up to the first one still open; once all are written,
// none is kept (a block that spins makes many).
void write_complete() {
  size_t from = g_tr.written;
  while (g_tr.written < g_tr.evs.size() && !g_tr.evs[g_tr.written].open) write_line(g_tr.evs[g_tr.written++].text);
  if (g_tr.written == from) return;
  if (g_tr.written == g_tr.evs.size()) {
    g_tr.evs.clear();
    g_tr.written = 0;
  }
  OwnCalls own;
  std::fflush(g_tr.f);
}

// `after_store`: the event comes from a later hook, so the pending access's store has completed.
// A hazard or an uninitialized read is reported inside the hook of the access it concerns,
// before that access's own store: reading back then would record the old value.
// `store_addr`, `store_size`: the event is a store whose written bytes are read back at the next event.
void add(std::string text, bool after_store = true, uintptr_t store_addr = 0, size_t store_size = 0) {
  if (after_store) settle();
  if (g_tr.count >= kMaxEvents) {
    g_tr.truncated = true;
    return;
  }
  ++g_tr.count;
  g_tr.evs.push_back(Ev{std::move(text), store_addr, store_size, store_size != 0});
  if (store_size) g_tr.pending = long(g_tr.evs.size() - 1);
  write_complete();
}

void flush_block() {
  settle();
  write_complete();
  g_tr.evs.clear();
  g_tr.written = 0;
  if (g_tr.truncated) write_line("{\"e\":\"truncated\"}");
  g_tr.truncated = false;
  OwnCalls own;
  std::fflush(g_tr.f);
}

std::string site(const char* file, int line) { return json_str(file ? where(file, line) : std::string("?")); }

std::string named(Worker& w, int space, uintptr_t a) {
  std::string arr;
  long long index = 0;
  size_t elem = 1;
  const char* type = nullptr;
  name_address(w, space, a, &arr, &index, &elem, &type);
  return strf("\"sp\":%d,\"arr\":%s,\"i\":%lld,\"el\":%zu,\"ty\":%s", space, json_str(arr).c_str(), index, elem,
              json_str(type ? type : "").c_str());
}
}  // namespace

void Tracer::launch_begin(const LaunchBegin& e) {
  const Grid& g = e.g;
  if (!g_trace_on) return;
  g_tr.launch = g.checking;
  if (!g.checking) return;
  g_tr.pcs.clear();
  unsigned long long blocks = (unsigned long long)g.grid.x * g.grid.y * g.grid.z;
  write_line(strf("{\"e\":\"launch\",\"kernel\":%s,\"site\":%s,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shmem\":%zu,"
                  "\"traced\":%s}",
                  json_str(g.site.kernel).c_str(), site(g.site.file, g.site.line).c_str(), g.grid.x, g.grid.y, g.grid.z,
                  g.block.x, g.block.y, g.block.z, g.shmem, g_tr.block >= 0 && (unsigned long long)g_tr.block < blocks ? "true" : "false"));
}

void Tracer::launch_end(Grid& g) {
  if (!g_trace_on || !g_tr.launch || !g.checking) return;
  if (g_tr.w) flush_block();  // the block stopped early (an error)
  g_tr.w = nullptr;
  g_tr.launch = false;
  std::vector<uint32_t> pcs(g_tr.pcs.begin(), g_tr.pcs.end());
  symbolize_sites(pcs);
  std::string m;
  for (uint32_t pc : pcs) m += strf("%s\"%u\":%s", m.empty() ? "" : ",", pc, json_str(site_of(pc)).c_str());
  write_line("{\"e\":\"sites\",\"pcs\":{" + m + "}}");
  OwnCalls own;
  std::fflush(g_tr.f);
}

void Tracer::block_begin(Worker& w, unsigned) {
  if (!g_trace_on || !g_tr.launch || (long)w.block_linear != g_tr.block) return;
  g_tr.w = &w;
  g_tr.evs.clear();
  g_tr.written = 0;
  g_tr.count = 0;
  g_tr.pending = -1;
  g_tr.truncated = false;
  const dim3 b = w.block.bdim;
  add(strf("{\"e\":\"block\",\"b\":%u,\"threads\":%u}", w.block_linear, b.x * b.y * b.z));
}

// The block's shared arrays, in declaration order, as an `end` event.
static std::string end_event(Worker& w) {
  std::string arrays;
  for (auto it = w.shared_arrays.rbegin(); it != w.shared_arrays.rend(); ++it) {  // in declaration order
    const SharedArray& s = *it;
    size_t elem = s.elem ? s.elem : 1;
    arrays += strf("%s{\"name\":%s,\"elem\":%zu,\"count\":%zu,\"site\":%s,\"dyn\":false}", arrays.empty() ? "" : ",",
                   json_str(s.name).c_str(), elem, s.bytes / elem, site(s.file, s.line).c_str());
  }
  if (w.dyn_name && w.dyn_bytes) {
    size_t elem = w.dyn_elem ? w.dyn_elem : 1;
    arrays += strf("%s{\"name\":%s,\"elem\":%zu,\"count\":%zu,\"site\":\"\",\"dyn\":true}", arrays.empty() ? "" : ",",
                   json_str(w.dyn_name).c_str(), elem, w.dyn_bytes / elem);
  }
  return "{\"e\":\"end\",\"arrays\":[" + arrays + "]}";
}

void Tracer::block_end(Worker& w) {
  if (!tracing(w)) return;
  settle();
  add(end_event(w));
  flush_block();
  g_tr.w = nullptr;
}

// Where each thread of the block was when its launch stopped, as a `stop` event.
static std::string stop_event(Worker& w) {
  static const char* states[] = {"running", "barrier", "warp", "cbar", "exited", "faulted"};
  const dim3 b = w.block.bdim;
  const unsigned n = std::min<unsigned>(b.x * b.y * b.z, unsigned(w.threads.size()));
  std::string list;
  for (unsigned i = 0; i < n; ++i) {
    const Thread& t = w.threads[i];
    const bool waits = t.st == St::AtBarrier || t.st == St::AtWarp || t.st == St::AtCBar;
    const WaitSite at = wait_site(w, t);
    list += strf("%s[%u,\"%s\",%s,%s]", i ? "," : "", i, states[int(t.st)], json_str(waits && at.what ? at.what : "").c_str(),
                 waits && at.file ? site(at.file, at.line).c_str() : "\"\"");
  }
  return "{\"e\":\"stop\",\"threads\":[" + list + "]}";
}

void Tracer::barrier(Worker& w, const char* file, int line) {
  if (!tracing(w)) return;
  add("{\"e\":\"bar\",\"site\":" + site(file, line) + "}");
}

void Tracer::record(const AccessEvent& acc) {
  Worker& w = acc.w;
  if (!tracing(w)) return;
  const Thread& t = acc.t;
  const int space = int(acc.space);
  const uintptr_t a = acc.addr;
  const size_t size = acc.size;
  const bool write = acc.write, read = acc.read, atomic = acc.atomic;
  const uint32_t pc = acc.pc;
  g_tr.pcs.insert(pc);
  std::string s = strf("{\"e\":\"acc\",\"t\":%u,\"k\":\"%s\",\"atomic\":%s,%s,\"n\":%zu,\"pc\":%u", t.linear,
                       read && write ? "rw" : write ? "w" : "r", atomic ? "true" : "false", named(w, space, a).c_str(), size, pc);
  if (read) s += ",\"v\":\"" + hex_bytes(a, size) + "\"";
  if (!write) s += "}";
  add(std::move(s), true, write ? a : 0, write ? size : 0);
  // Raised inside this access's hook, before its store: they must not read the written value back.
  for (std::string& d : g_tr.deferred) add(std::move(d), false);
  g_tr.deferred.clear();
}

// The checker raises hazards and uninitialized reads while it handles an access, before the tracer
// (after it in the fan-out) has recorded that access: they wait in `deferred` and follow it.
void Tracer::hazard(Worker& w, const char* kind, unsigned ta, uint32_t pca, unsigned tb, uint32_t pcb, Space space, uintptr_t a,
                    bool cross) {
  if (!tracing(w)) return;
  g_tr.pcs.insert(pca);
  g_tr.pcs.insert(pcb);
  g_tr.deferred.push_back(strf("{\"e\":\"hazard\",\"kind\":%s,\"ta\":%u,\"pca\":%u,\"tb\":%u,\"pcb\":%u,\"cross\":%s,%s}", json_str(kind).c_str(), ta,
           pca, tb, pcb, cross ? "true" : "false", named(w, int(space), a).c_str()));
}

void Tracer::uninit(Worker& w, unsigned thread, uint32_t pc, Space space, uintptr_t a) {
  if (!tracing(w)) return;
  g_tr.pcs.insert(pc);
  g_tr.deferred.push_back(strf("{\"e\":\"uninit\",\"t\":%u,\"pc\":%u,%s}", thread, pc, named(w, int(space), a).c_str()));
}

static const char* warp_op_name(WarpOp op) {
  static const char* names[] = {"__syncwarp",      "__shfl_sync",  "__shfl_up_sync", "__shfl_down_sync",
                                "__shfl_xor_sync", "__ballot_sync", "__any_sync",     "__all_sync",
                                "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__activemask"};
  return names[int(op)];
}

void Tracer::warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g) {
  if (!tracing(w)) return;
  std::string param, val, res;
  for (unsigned l = 0; l < 32; ++l) {
    bool in = g.arrived & (1u << l);
    const Thread& t = w.threads[warp_index * 32 + l];
    const char* sep = l ? "," : "";
    param += in ? strf("%s%d", sep, g.param[l]) : strf("%snull", sep);
    val += in ? strf("%s%llu", sep, (unsigned long long)g.value[l]) : strf("%snull", sep);
    res += in ? strf("%s%llu", sep, (unsigned long long)t.warp_result) : strf("%snull", sep);
  }
  add(strf("{\"e\":\"warp\",\"op\":\"%s\",\"warp\":%u,\"mask\":%u,\"lanes\":%u,\"width\":%d,\"bytes\":%d,\"site\":%s,"
           "\"param\":[%s],\"val\":[%s],\"res\":[%s]}",
           warp_op_name(g.op), warp_index, g.mask, g.arrived, g.width, g.value_bytes, site(g.file, g.line).c_str(),
           param.c_str(), val.c_str(), res.c_str()));
}

void Tracer::cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t phase, bool completes, const char* file, int line) {
  if (!tracing(w)) return;
  add(strf("{\"e\":\"cbar\",\"t\":%u,\"phase\":%llu,\"done\":%s,\"site\":%s,\"init\":%s,%s}", t.linear, (unsigned long long)phase,
           completes ? "true" : "false", site(file, line).c_str(), site(b->init_file, b->init_line).c_str(),
           named(w, 0, reinterpret_cast<uintptr_t>(b)).c_str()));
}

void trace_error(const Grid& g, const char* kind, const std::string& message) {
  if (!g_trace_on || !g_tr.launch || !g.checking) return;
  if (g_tr.w) {
    add(end_event(*g_tr.w));
    add(stop_event(*g_tr.w));
    add("{\"e\":\"error\",\"kind\":" + json_str(kind) + ",\"msg\":" + json_str(message) + "}");
    flush_block();
  } else {
    write_line("{\"e\":\"error\",\"kind\":" + json_str(kind) + ",\"msg\":" + json_str(message) + "}");
  }
}

}  // namespace detail
}  // namespace cudasim
