#include <cstdio>
#include <cstring>
#include <vector>
#include <string>

#include "backend.h"
#include "cudasim/control.h"

namespace harness {
namespace backend {

std::string describe() {
  const cudasim::Options& o = cudasim::options();
  std::string s = std::string("CPU simulator (") + cudasim::fiber_backend() + " fibers; thread schedules: ";
  for (int i = 0; i < o.schedule_count; ++i) s += std::string(i ? ", " : "") + cudasim::schedule_name(o.schedules[i]);
  return s + ")";
}

bool set_schedules(const char* list) { return cudasim::set_schedules(list); }
void set_seed(unsigned long long seed) { cudasim::options().seed = seed; }
void strict_undefined_values() { cudasim::options().undefined_values_are_errors = true; }
void check_every_block() { cudasim::options().sample = 0; }
static void (*g_fatal)(int, const Diagnosis&) = nullptr;

static void forward_fatal(const cudasim::DiagnosisView& v) {
  Diagnosis d;
  d.kind = v.kind;
  d.record = v.record ? v.record : "";
  g_fatal(v.code, d);
}

void on_fatal(void (*hook)(int, const Diagnosis&)) {
  g_fatal = hook;
  cudasim::set_fatal_hook(hook ? &forward_fatal : nullptr);
}

int diagnosis_code(const char* kind) { return cudasim::diagnosis_code(kind); }

bool forbid_device_to_host_copies(bool on) {
  const bool was = cudasim::device_to_host_copies_forbidden();
  cudasim::set_device_to_host_copies_forbidden(on);
  return was;
}

bool watch_supported() { return cudasim::options().checks; }

static cudasim::Options g_saved_options;

void watch_begin() {
  // One schedule, the checked one: the same run as the first schedule of the case that failed.
  g_saved_options = cudasim::options();
  cudasim::options().schedule_count = 1;
  cudasim::options().schedules[0] = cudasim::Schedule::Forward;
  cudasim::watch_begin();
}

void watch_end() {
  cudasim::watch_end();
  cudasim::options() = g_saved_options;
}

static std::string json_str(const char* s) {
  std::string r = "\"";
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') r += '\\', r += *s;
    else if ((unsigned char)*s < 0x20) r += ' ';
    else r += *s;
  }
  return r + "\"";
}

// The 4-byte word a thread read, as its type prints it; a word of unknown type (shared memory)
// as the output's element type, the likeliest in a puzzle that scans or reduces it.
static std::string word_text(uint32_t bits, const char* type, bool is_float) {
  char buf[64];
  const std::string t = type ? type : "";
  if (t == "float" || (t.empty() && is_float)) {
    float f;
    std::memcpy(&f, &bits, 4);
    std::snprintf(buf, sizeof buf, "%.7g", double(f));
  } else if (t == "unsigned int" || t == "unsigned long long") {
    std::snprintf(buf, sizeof buf, "%u", bits);
  } else {
    std::snprintf(buf, sizeof buf, "%d", int32_t(bits));
  }
  return buf;
}

static std::string dims(const unsigned* v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
}

std::string watch_origin_json(const void* device, bool is_float) {
  constexpr int kMaxNodes = 24, kMaxDepth = 6;
  std::vector<cudasim::OriginNode> nodes(kMaxNodes);
  const int n = cudasim::watch_origin(device, nodes.data(), kMaxNodes, kMaxDepth);
  if (n <= 0) return "";
  static const char* const kKinds[] = {"unwritten", "write", "input", "memset"};
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    const cudasim::OriginNode& o = nodes[i];
    s += std::string(i ? ", " : "") + "{\"kind\": \"" + kKinds[o.kind & 3] + "\", \"array\": " + json_str(o.array) +
         ", \"index\": " + std::to_string(o.index) + ", \"space\": \"" + (o.shared ? "shared" : "device") + "\"";
    if (o.kind == cudasim::OriginNode::Write)
      s += ", \"block\": " + dims(o.block) + ", \"thread\": " + dims(o.thread) + ", \"site\": " + json_str(o.site) +
           ", \"barrier\": " + std::to_string(o.epoch);
    s += ", \"depth\": " + std::to_string(o.depth) + ", \"reads\": [";
    for (int r = 0; r < o.nreads; ++r) {
      const char* type = o.reads[r] >= 0 ? nodes[o.reads[r]].type : "";
      s += std::string(r ? ", " : "") + "{\"node\": " + (o.reads[r] >= 0 ? std::to_string(o.reads[r]) : "null") +
           ", \"value\": " + json_str(word_text(o.values[r], type, is_float).c_str()) +
           ", \"site\": " + json_str(o.read_sites[r]) + ", \"array\": " + json_str(o.read_arrays[r]) +
           ", \"index\": " + std::to_string(o.read_index[r]) + "}";
    }
    s += "], \"more_reads\": " + std::to_string(o.more_reads) + "}";
  }
  s += "]";
  if (cudasim::watch_overflowed()) s += ", \"truncated\": true";
  return s;
}

std::string stats_json() {
  cudasim::Stats s = cudasim::stats();
  const cudasim::Options& o = cudasim::options();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"threads\": %llu, \"kernel_seconds\": %.6f, \"launches\": %llu, \"switches\": %llu, \"schedules\": %d, "
                "\"workers\": %d, \"fibers\": \"%s\", \"build\": \"%s\"}",
                (unsigned long long)s.threads, s.kernel_seconds, (unsigned long long)s.launches, (unsigned long long)s.switches,
                o.schedule_count, o.workers, cudasim::fiber_backend(), s.uninstrumented ? "uninstrumented" : "instrumented");
  return buf;
}

}  // namespace backend
}  // namespace harness
