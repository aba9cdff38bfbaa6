// The symbolizer: code addresses as "file:line", for the checker's stamps (offsets from the
// executable's base, many at once) and for one address of any loaded object (crashes, host calls).
// It runs whichever of addr2line (binutils), llvm-symbolizer (LLVM, Xcode) and atos (macOS) is
// installed, or the one CUDASIM_SYMBOLIZER names, and reads their answers into one form (Frame).
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>  // _NSGetExecutablePath: macOS has no /proc
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

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

// ---- the symbolizer programs --------------------------------------------------------------------------

namespace {

// One source frame of a code address; an address inlined into callers has several, innermost first.
struct Frame {
  std::string function;  // demangled; "" when the program did not name it
  std::string file;
  int line = 0;
};
using Frames = std::vector<Frame>;

enum class Tool { addr2line, llvm_symbolizer, atos };
struct Symbolizer {
  Tool tool;
  std::string command;  // the program, as found on PATH or given
};

const char* const kToolNames[] = {"addr2line", "llvm-symbolizer", "atos"};

// `name` when it is an executable file (a path) or names one on PATH, as popen's shell would find it.
bool installed(const std::string& name) {
  auto runnable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name);
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (runnable((d.empty() ? "." : d) + "/" + name)) return true;
  return false;
}

// Which program `command` is, by its name: "aarch64-linux-gnu-addr2line" is an addr2line,
// "llvm-symbolizer-14" an llvm-symbolizer.
bool tool_of(const std::string& command, Tool* tool) {
  std::string base = command.substr(command.rfind('/') == std::string::npos ? 0 : command.rfind('/') + 1);
  for (Tool t : {Tool::llvm_symbolizer, Tool::addr2line, Tool::atos})
    if (base.find(kToolNames[int(t)]) != std::string::npos) {
      *tool = t;
      return true;
    }
  return false;
}

// The symbolizer reports use, chosen once: CUDASIM_SYMBOLIZER when it names an installed program,
// else the first installed of the platform's order (macOS's own atos first there). A choice that
// cannot be honoured is said once on stderr, so that a report without file:line is explained.
const Symbolizer* symbolizer() {
  static const Symbolizer* chosen = [] {
#if defined(__APPLE__)
    const Tool order[] = {Tool::atos, Tool::llvm_symbolizer, Tool::addr2line};
#else
    const Tool order[] = {Tool::addr2line, Tool::llvm_symbolizer, Tool::atos};
#endif
    OwnCalls own;  // the notes, also from a simulated thread
    std::string why;  // why the named one is not used
    if (const char* named = std::getenv("CUDASIM_SYMBOLIZER"); named && *named) {
      Tool t;
      if (!tool_of(named, &t))
        why = strf("CUDASIM_SYMBOLIZER=%s is none of addr2line, llvm-symbolizer and atos", named);
      else if (!installed(named))
        why = strf("CUDASIM_SYMBOLIZER=%s is not installed", named);
      else
        return new Symbolizer{t, named};
    }
    for (Tool t : order)
      if (installed(kToolNames[int(t)])) {
        if (!why.empty()) std::fprintf(stderr, "cudasim: note: %s; using %s instead.\n", why.c_str(), kToolNames[int(t)]);
        return new Symbolizer{t, kToolNames[int(t)]};
      }
    std::fprintf(stderr,
                 "cudasim: note: %s%sno symbolizer is installed (addr2line, llvm-symbolizer or atos), so reports name no "
                 "file:line. Install one: Debian/Ubuntu `apt-get install binutils`, macOS `xcode-select --install`.\n",
                 why.c_str(), why.empty() ? "" : "; ");
    return static_cast<Symbolizer*>(nullptr);
  }();
  return chosen;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string run_command(const std::string& cmd) {
  std::string out;
  OwnCalls own;  // the simulator's popen, also from a simulated thread (host_calls.cpp)
  if (FILE* f = popen((cmd + " 2>/dev/null").c_str(), "r")) {
    char line[4096];
    while (fgets(line, sizeof line, f)) out += line;
    pclose(f);
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// "file:line", "file:line:column" or "file:line (discriminator N)" as a frame's file and line;
// false for the programs' "??:0" or "??:?" (no line information).
bool parse_location(std::string loc, Frame* f) {
  size_t disc = loc.find(" (discriminator ");
  if (disc != std::string::npos) loc.erase(disc);
  size_t colon = loc.rfind(':');
  if (colon == std::string::npos) return false;
  // A column follows the line when the text before the last colon ends in ":digits".
  size_t prev = loc.rfind(':', colon - 1);
  if (prev != std::string::npos && prev + 1 < colon &&
      loc.find_first_not_of("0123456789", prev + 1) == colon) {
    loc.erase(colon);
    colon = prev;
  }
  f->file = loc.substr(0, colon);
  f->line = std::atoi(loc.c_str() + colon + 1);
  return f->line > 0 && !f->file.empty() && f->file.compare(0, 2, "??") != 0;
}

void add_frame(Frames& frames, const std::string& function, const std::string& location) {
  Frame f;
  if (!parse_location(location, &f)) return;
  f.function = function == "??" ? "" : function;
  frames.push_back(f);
}

// addr2line -a prints each address ("0x000000000000abcd") before its frames, which keeps them apart
// even where an address has no line information; -f prints a function line before each location.
std::vector<Frames> run_addr2line(const Symbolizer& s, const std::string& object, const std::vector<uintptr_t>& offsets) {
  std::string cmd = s.command + " -C -f -i -a -e " + shell_quoted(object);
  for (uintptr_t off : offsets) cmd += strf(" 0x%lx", (unsigned long)off);
  std::vector<Frames> result;
  std::vector<std::string> lines = lines_of(run_command(cmd));
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.size() > 2 && l.compare(0, 2, "0x") == 0 && l.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
      result.emplace_back();
    } else if (!result.empty() && i + 1 < lines.size()) {
      add_frame(result.back(), l, lines[i + 1]);
      ++i;
    }
  }
  return result;
}

// llvm-symbolizer prints a function line and a "file:line:column" line per frame, and an empty
// line after each address. --relative-address: the offsets count from the object's image base,
// as dladdr's do (for a Mach-O executable that base is __TEXT's address, 0x100000000).
std::vector<Frames> run_llvm_symbolizer(const Symbolizer& s, const std::string& object, const std::vector<uintptr_t>& offsets) {
  std::string cmd = s.command + " --obj=" + shell_quoted(object) +
                    " --relative-address --inlines --demangle --functions=linkage --output-style=LLVM";
  for (uintptr_t off : offsets) cmd += strf(" 0x%lx", (unsigned long)off);
  std::vector<Frames> result(1);
  std::vector<std::string> lines = lines_of(run_command(cmd));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      result.emplace_back();
    } else if (i + 1 < lines.size()) {
      add_frame(result.back(), lines[i], lines[i + 1]);
      ++i;
    }
  }
  if (result.back().empty()) result.pop_back();  // after the last address's empty line
  return result;
}

// atos prints one line per address with -d: its inlined frames, innermost first, joined by the
// delimiter, each "function (in object) (file:line)". -l places the object at an address of our
// choosing; the offsets are added to it.
std::vector<Frames> run_atos(const Symbolizer& s, const std::string& object, const std::vector<uintptr_t>& offsets) {
  const uintptr_t base = uintptr_t(1) << 32;  // the usual __TEXT address of a Mach-O executable
  const char delimiter = '\x1f';
  auto parse = [&](const std::string& line) {
    Frames frames;
    std::stringstream in(line);
    for (std::string fr; std::getline(in, fr, delimiter);) {
      size_t open = fr.rfind(" (");
      size_t in_obj = fr.find(" (in ");
      if (open == std::string::npos || fr.back() != ')' || open == in_obj) continue;
      add_frame(frames, fr.substr(0, in_obj), fr.substr(open + 2, fr.size() - open - 3));
    }
    return frames;
  };
  auto cmd_for = [&](const std::vector<uintptr_t>& offs) {
    std::string cmd = s.command + " -o " + shell_quoted(object) + strf(" -l 0x%lx", (unsigned long)base) + " -i -fullPath -d '" +
                      std::string(1, delimiter) + "'";
    for (uintptr_t off : offs) cmd += strf(" 0x%lx", (unsigned long)(base + off));
    return cmd;
  };
  std::vector<std::string> lines = lines_of(run_command(cmd_for(offsets)));
  if (lines.size() != offsets.size()) {
    // An atos that ignores -d prints a line per frame: ask for one address at a time.
    lines.clear();
    for (uintptr_t off : offsets) {
      std::string text = run_command(cmd_for({off}));
      for (char& c : text)
        if (c == '\n') c = delimiter;
      lines.push_back(text);
    }
  }
  std::vector<Frames> result;
  for (const std::string& l : lines) result.push_back(parse(l));
  return result;
}

// The frames of each offset in `object` (addresses relative to where it is loaded), from one run of
// the symbolizer; as many entries as offsets, empty where nothing is known or nothing could run.
std::vector<Frames> symbolize(const std::string& object, const std::vector<uintptr_t>& offsets) {
  std::vector<Frames> result;
  const Symbolizer* s = symbolizer();
  if (s && !object.empty() && !offsets.empty()) {
    switch (s->tool) {
      case Tool::addr2line: result = run_addr2line(*s, object, offsets); break;
      case Tool::llvm_symbolizer: result = run_llvm_symbolizer(*s, object, offsets); break;
      case Tool::atos: result = run_atos(*s, object, offsets); break;
    }
  }
  result.resize(offsets.size());
  return result;
}

}  // namespace

// ---- the checker's code addresses: offsets from the executable's base ----------------------------

static std::string exe_path() {
  char b[PATH_MAX];
#if defined(__APPLE__)
  uint32_t size = sizeof b;
  char real[PATH_MAX];
  if (_NSGetExecutablePath(b, &size) != 0 || !realpath(b, real)) return "";
  return real;
#else
  ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  b[n] = 0;
  return b;
#endif
}

// A frame in the simulator's own headers (cudasim/, cuda/ of libcu++'s stand-ins) or a system header.
static bool library_frame(const Frame& f) {
  return f.file.find("/cudasim/") != std::string::npos || f.file.find("/include/cuda/") != std::string::npos ||
         f.file.rfind("/usr/", 0) == 0 || f.file.rfind("/Library/", 0) == 0 || f.file.rfind("/Applications/", 0) == 0;
}

// A frame in the simulator's sources (this file's folder): the access front end, the scheduler.
static bool simulator_frame(const Frame& f) {
  static const std::string dir = [] {
    std::string self = __FILE__;
    size_t slash = self.rfind('/');
    return slash == std::string::npos || self[0] != '/' ? std::string() : self.substr(0, slash + 1);
  }();
  return !dir.empty() && f.file.compare(0, dir.size(), dir) == 0;
}

// "file:line" for each pc, from one symbolizer run; the innermost inlined frame that is not the
// simulator's own header or a system header (that is the learner's line).
static std::map<uint32_t, std::string> g_sites;
void symbolize_sites(const std::vector<uint32_t>& pcs) {
  std::vector<uint32_t> todo;
  for (uint32_t pc : pcs)
    if (pc && !g_sites.count(pc) && std::find(todo.begin(), todo.end(), pc) == todo.end()) todo.push_back(pc);
  if (todo.empty()) return;
  std::vector<uintptr_t> offsets;
  for (uint32_t pc : todo) offsets.push_back(pc - 1);  // the call instruction, not the return address
  std::vector<Frames> chains = symbolize(exe_path(), offsets);
  // clang gives some of the calls its instrumentation inserts no line (line 0); the instruction
  // after the call, the access itself, has the learner's line.
  std::vector<size_t> lineless;
  std::vector<uintptr_t> after;
  for (size_t i = 0; i < todo.size(); ++i)
    if (chains[i].empty()) {
      lineless.push_back(i);
      after.push_back(todo[i]);
    }
  if (!after.empty()) {
    std::vector<Frames> again = symbolize(exe_path(), after);
    for (size_t k = 0; k < lineless.size(); ++k) chains[lineless[k]] = again[k];
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    const Frame* best = nullptr;
    for (const Frame& f : chains[i]) {
      bool lib = library_frame(f);
      if (!best || !lib) best = &f;
      if (!lib) break;
    }
    g_sites[todo[i]] = best ? where(best->file.c_str(), best->line) : "?";
  }
}
std::string site_of(uint32_t pc) {
  if (!pc) return "?";
  symbolize_sites({pc});
  return g_sites[pc];
}
const std::string& symbolized_site(uint32_t pc) { return g_sites[pc]; }

// ---- any code address: through the object that holds it ----------------------------------------------

std::vector<std::string> learner_lines(const std::vector<void*>& pcs) {
  OwnCalls own;  // popen
  std::vector<std::string> lines(pcs.size());
  // One symbolizer run per object that holds some of the addresses (the learner's code is in the
  // executable, unless a program links it from a library of its own).
  std::map<std::string, std::vector<size_t>> by_object;
  std::vector<uintptr_t> offset(pcs.size());
  for (size_t i = 0; i < pcs.size(); ++i) {
    Dl_info info;
    if (!pcs[i] || !dladdr(pcs[i], &info) || !info.dli_fname) continue;
    offset[i] = reinterpret_cast<uintptr_t>(pcs[i]) - reinterpret_cast<uintptr_t>(info.dli_fbase);
    by_object[info.dli_fname].push_back(i);
  }
  for (const auto& [object, which] : by_object) {
    std::vector<uintptr_t> offsets;
    for (size_t i : which) offsets.push_back(offset[i]);
    // dladdr names the executable by the path it was started with; /proc/self/exe always finds it.
    Dl_info self;
    const bool is_exe = dladdr(reinterpret_cast<void*>(&learner_lines), &self) && self.dli_fname && object == self.dli_fname;
    const std::vector<Frames> chains = symbolize(is_exe ? exe_path() : object, offsets);
    for (size_t k = 0; k < which.size(); ++k)
      for (const Frame& f : chains[k])
        if (!library_frame(f) && !simulator_frame(f)) {
          lines[which[k]] = where(f.file.c_str(), f.line);
          break;
        }
  }
  return lines;
}

// The frames of a code address of any loaded object, innermost first: the function and its
// "file:line", then each caller it was inlined into (addr2line's -i form); none when unknown.
std::vector<SourceFrame> source_frames(void* pc) {
  OwnCalls own;  // popen, also from a simulated thread
  Dl_info info;
  std::vector<SourceFrame> frames;
  if (!pc || !dladdr(pc, &info) || !info.dli_fname) return frames;
  uintptr_t off = reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  // Make the repository's paths relative, like the other messages.
  static std::string cwd = [] {
    char b[PATH_MAX];
    return getcwd(b, sizeof b) ? std::string(b) + "/" : std::string();
  }();
  // The executable itself by its path, not by dladdr's name for it, which is argv[0]: a relative
  // path, or the instrumented build's when its uninstrumented build runs in its place (fast_build.cpp).
  static const void* exe_base = [] {
    Dl_info self;
    return dladdr(reinterpret_cast<void*>(&exe_path), &self) ? self.dli_fbase : nullptr;
  }();
  const std::string object = info.dli_fbase == exe_base && !exe_path().empty() ? exe_path() : std::string(info.dli_fname);
  const std::vector<Frames> chains = symbolize(object, {off});  // kept: the loop reads its first
  for (Frame f : chains[0]) {
    f.file = user_site(f.file, &f.line);
    if (!cwd.empty() && f.file.compare(0, cwd.size(), cwd) == 0) f.file.erase(0, cwd.size());
    frames.push_back({f.function.empty() ? std::string("??") : f.function, f.file + strf(":%d", f.line)});
  }
  return frames;
}

// "function at file:line", then a line " (inlined by) function at file:line" per caller it was
// inlined into (addr2line's -p -i form).
std::string source_text(const std::vector<SourceFrame>& frames) {
  std::string out;
  for (const SourceFrame& f : frames) {
    if (!out.empty()) out += "\n (inlined by) ";
    out += f.function + " at " + f.site;
  }
  return out;
}

// The frames as a diagnosis fact: [{"function": "k(int*)", "site": "f.cu:12"}, ...].
std::string frames_json(const std::vector<SourceFrame>& frames) {
  std::string out;
  for (const SourceFrame& f : frames)
    out += (out.empty() ? "{" : ", {") + std::string("\"function\": ") + json_quote(f.function) + ", \"site\": " + json_quote(f.site) + "}";
  return "[" + out + "]";
}

std::string source_of(void* pc) { return source_text(source_frames(pc)); }

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
