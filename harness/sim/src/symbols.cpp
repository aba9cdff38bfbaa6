// The symbolizer: code addresses as "file:line" through addr2line, for the checker's stamps (offsets
// from the executable's base, many at once) and for one address of any loaded object (crashes, host calls).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#include "internal.h"

namespace cudasim {
namespace detail {

// ---- translated copies: the user's file for a path in the mirror tree ------------------------------

// cu2cpp.py writes every file it translates or copies (the `.cu.cpp` of a source, a header of the
// mirror tree, the puzzle build's generated/<target>.cu.cpp) as `#line 1 "<the user's file>"` and
// then the text, line for line. The compiler reports the user's name wherever that directive
// applies; a location it does not cover (a compiler or addr2line that falls back to the physical
// file) names the copy. Such a path is turned back here: the user's file, and the line one less
// (the directive is the copy's first line). The answer is cached per path: where() is called per
// barrier by the profiler.
static bool translated_origin(const std::string& path, std::string* origin) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;  // path -> the user's file, or "" for none
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) {
    std::string found;
    OwnCalls own;  // the simulator's file read, also from a simulated thread (host_calls.cpp)
    std::ifstream f(path);
    std::string first;
    static const std::string kHead = "#line 1 \"";
    if (f && std::getline(f, first) && first.compare(0, kHead.size(), kHead) == 0 && first.size() > kHead.size() + 1 &&
        first.back() == '"')
      found = first.substr(kHead.size(), first.size() - kHead.size() - 1);
    it = cache.emplace(path, found).first;
  }
  if (it->second.empty()) return false;
  *origin = it->second;
  return true;
}

std::string user_site(std::string file, int* line) {
  std::string origin;
  if (translated_origin(file, &origin)) {
    file = origin;
    if (*line > 1) --*line;
  }
  return file;
}

// Rewrites every "PATH:LINE" of addr2line's text whose PATH is a translated copy.
static std::string map_translated_paths(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t e = text.find('\n', pos);
    std::string l = text.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    pos = e == std::string::npos ? text.size() : e + 1;
    // "fn at PATH:LINE" (source_of's -f -p form) or "PATH:LINE" (symbolize_sites's form).
    size_t at = l.rfind(" at ");
    size_t start = at == std::string::npos ? 0 : at + 4;
    size_t colon = l.rfind(':');
    if (colon != std::string::npos && colon > start) {
      int line = std::atoi(l.c_str() + colon + 1);
      std::string file = user_site(l.substr(start, colon - start), &line);
      if (file != l.substr(start, colon - start)) l = l.substr(0, start) + file + strf(":%d", line);
    }
    out += l;
    if (e != std::string::npos) out += '\n';
  }
  return out;
}

// Runs addr2line once on the object `file`, with the options `opts`, for `offsets` (addresses in
// the object, each followed by `after`), and returns what it printed without addr2line's
// " (discriminator N)": it tells a learner nothing about the line it follows. "" when it cannot run.
static std::string addr2line(const std::string& file, const char* opts, const std::vector<uintptr_t>& offsets, const char* after) {
  std::string cmd = "addr2line -C " + std::string(opts) + " -e '" + file + "'";
  for (uintptr_t off : offsets) cmd += strf(" 0x%lx%s", (unsigned long)off, after);
  cmd += " 2>/dev/null";
  std::string out;
  OwnCalls own;  // the simulator's popen, also from a simulated thread (host_calls.cpp)
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char line[2048];
    while (fgets(line, sizeof line, f)) out += line;
    pclose(f);
  }
  for (size_t p; (p = out.find(" (discriminator ")) != std::string::npos;) {
    size_t e = out.find(')', p);
    out.erase(p, e == std::string::npos ? std::string::npos : e + 1 - p);
  }
  return out;
}

// ---- the checker's code addresses: offsets from the executable's base ----------------------------

static std::string exe_path() {
  char b[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  b[n] = 0;
  return b;
}

// "file:line" for each pc, from one addr2line call; the innermost inlined frame that is not the
// simulator's own header or a system header (that is the learner's line).
static std::map<uint32_t, std::string> g_sites;
void symbolize_sites(const std::vector<uint32_t>& pcs) {
  std::vector<uint32_t> todo;
  for (uint32_t pc : pcs)
    if (pc && !g_sites.count(pc) && std::find(todo.begin(), todo.end(), pc) == todo.end()) todo.push_back(pc);
  if (todo.empty()) return;
  std::vector<uintptr_t> offsets;
  for (uint32_t pc : todo) offsets.push_back(pc - 1);  // the call instruction, not the return address
  // `@` makes addr2line print "??:0" between addresses: a separator that keeps inlined chains apart.
  std::string outp = addr2line(exe_path(), "-i", offsets, " @");
  std::vector<std::vector<std::string>> chains(1);
  size_t pos = 0;
  while (pos < outp.size()) {
    size_t e = outp.find('\n', pos);
    if (e == std::string::npos) e = outp.size();
    std::string l = outp.substr(pos, e - pos);
    pos = e + 1;
    if (l.rfind("??:", 0) == 0) {
      chains.emplace_back();
      continue;
    }
    chains.back().push_back(l);
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    std::string best = "?";
    if (i < chains.size())
      for (const std::string& fl : chains[i]) {
        bool lib = fl.find("/cudasim/") != std::string::npos || fl.find("/include/cuda/") != std::string::npos ||
                   fl.rfind("/usr/", 0) == 0;
        if (best == "?" || !lib) best = fl;
        if (!lib) break;
      }
    if (best != "?") {
      size_t colon = best.rfind(':');
      best = where(best.substr(0, colon).c_str(), std::atoi(best.c_str() + colon + 1));
    }
    g_sites[todo[i]] = best;
  }
}
std::string site_of(uint32_t pc) {
  if (!pc) return "?";
  symbolize_sites({pc});
  return g_sites[pc];
}
const std::string& symbolized_site(uint32_t pc) { return g_sites[pc]; }

// ---- any code address: through the object that holds it ----------------------------------------------

// file:line of a code address, through addr2line when it is installed.
std::string source_of(void* pc) {
  OwnCalls own;  // popen, also from a simulated thread
  Dl_info info;
  if (!pc || !dladdr(pc, &info) || !info.dli_fname) return "";
  uintptr_t off = reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  std::string out = addr2line(info.dli_fname, "-f -i -p", {off}, "");
  if (out.empty() || out.find("??") == 0) return "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  // Make the repository's paths relative, like the other messages.
  static std::string cwd = [] {
    char b[PATH_MAX];
    return getcwd(b, sizeof b) ? std::string(b) + "/" : std::string();
  }();
  out = map_translated_paths(out);
  for (size_t p; !cwd.empty() && (p = out.find(cwd)) != std::string::npos;) out.erase(p, cwd.size());
  return out;
}

// "file:line" of source_of's text: it gives "function at file:line", then "(inlined by) ..."
// lines for the callers.
std::string line_of_source(std::string s) {
  s = s.substr(0, s.find('\n'));
  size_t at = s.rfind(" at ");
  if (at != std::string::npos) s = s.substr(at + 4);
  return s.empty() || s[0] == '?' ? "" : s;
}

std::string code_line(void* pc) { return line_of_source(source_of(pc)); }

}  // namespace detail
}  // namespace cudasim
