// The checker's half of a graded run (harness/channel.h), linked only into pNN_checker: the
// puzzle's driver and the harness, with launchers that do nothing instead of the learner's file.
//
// `grade` runs `pNN_checker --variant V --n N --tpb T --seed S` with
//   PUZZLES_CHECK_LEARNER=<path of pNN_cpu>   the learner's binary
//   PUZZLES_VERDICT_FD=<fd>                  where the verdict goes (never inherited by the learner)
//   PUZZLES_ALLOW_HOST_OUTPUT=1              optional: accept output not written by a kernel (and let the
//                                            learner's launcher copy device memory to the host: --allow-host-copies)
// The driver computes the input and the reference as usual; at finish() the checker starts the
// learner's binary on the same case (its parent is the checker, not the grader), reads the
// output it sends, waits for it, and compares. The verdict is one `RESULT {json}` line on the
// verdict descriptor; exit codes: 0 pass, 1 wrong answer, 2 usage, 3 race, 4 error,
// 5 not computed on the device, 128 + S when the learner's process died of signal S.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include "backend.h"
#include "diagnosis.h"
#include "harness/channel.h"
#include "harness/harness.h"

extern char** environ;

namespace harness {
namespace {

constexpr const char* kLearnerEnv = "PUZZLES_CHECK_LEARNER";
constexpr const char* kVerdictFdEnv = "PUZZLES_VERDICT_FD";
constexpr const char* kAllowHostEnv = "PUZZLES_ALLOW_HOST_OUTPUT";
constexpr size_t kMaxChannelBytes = size_t(1) << 30;  // far above any output a case downloads

constexpr int kNotOnDevice = 5;

struct Received {
  channel::Record record;
  std::vector<unsigned char> bytes;
};

struct State {
  bool ran = false;
  int status = 0;  // waitpid() status of the learner's process
  std::vector<Received> records;
  size_t next = 0;  // the record the next finish() receives
  std::string malformed;  // why the channel's data could not be read, or ""
  const Received* current = nullptr;
  Case last_case;  // a copy: main()'s is destroyed before the exit handler runs
  bool received = false;
  int verdict_fd = 1;
  bool has_diagnosis_record = false;
  channel::DiagnosisRecord diagnosis_record;
  const Diagnosis* diagnosis = nullptr;  // what explains the verdict, when the learner's process sent it
};
State g;

std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') r += '\\', r += ch;
    else if ((unsigned char)ch < 0x20) r += ' ';
    else r += ch;
  }
  return r + "\"";
}

// The one place a verdict is written. Appends to the verdict descriptor; the grader reads the last.
void verdict(const Case& c, const char* v, const std::string& reason) {
  std::string line = "RESULT {\"verdict\": " + json_string(v) + ", \"puzzle\": " + json_string(kPuzzle.name) +
                     ", \"variant\": " + json_string(c.variant) + ", \"n\": " + std::to_string(c.n) +
                     ", \"tpb\": " + std::to_string(c.tpb) + ", \"seed\": " + std::to_string(c.seed) +
                     ", \"checked\": true, \"reason\": " + (reason.empty() ? "null" : json_string(reason));
  // The record came from the learner's process: it goes on as a string (channel.h), with the kind
  // the checker validated against the exit code beside it.
  if (g.diagnosis)
    line += ", \"diagnosis_kind\": " + json_string(g.diagnosis->kind) + ", \"diagnosis\": " + json_string(g.diagnosis->record);
  if (g.current) {
    const channel::Provenance& p = g.current->record.provenance;
    line += ", \"launches\": " + std::to_string(p.launches);
    if (p.known)
      line += ", \"output_writers\": {\"kernel\": " + std::to_string(p.bytes_by_writer[3]) +
              ", \"host\": " + std::to_string(p.bytes_by_writer[1]) + ", \"memset\": " +
              std::to_string(p.bytes_by_writer[2]) + ", \"none\": " + std::to_string(p.bytes_by_writer[0]) + "}";
  }
  line += "}\n";
  std::fflush(stdout);
  std::fflush(stderr);
  const char* p = line.data();
  size_t left = line.size();
  while (left) {
    const ssize_t k = ::write(g.verdict_fd, p, left);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    p += k;
    left -= size_t(k);
  }
}

[[noreturn]] void end(const Case& c, const char* v, const std::string& reason, int code) {
  if (!reason.empty()) std::printf("%s: %s\n", v, reason.c_str());
  verdict(c, v, reason);
  std::fflush(stdout);
  std::_Exit(code);
}

std::string signal_text(int sig) {
  const char* name = nullptr;
  switch (sig) {
    case SIGSEGV: name = "SIGSEGV"; break;
    case SIGABRT: name = "SIGABRT"; break;
    case SIGKILL: name = "SIGKILL"; break;
    case SIGBUS: name = "SIGBUS"; break;
    case SIGFPE: name = "SIGFPE"; break;
    case SIGILL: name = "SIGILL"; break;
    case SIGTERM: name = "SIGTERM"; break;
    case SIGXCPU: name = "SIGXCPU"; break;
    case SIGPIPE: name = "SIGPIPE"; break;
    default: break;
  }
  return name ? std::string(name) : "signal " + std::to_string(sig);
}

void parse_channel(const std::vector<unsigned char>& data) {
  size_t at = 0;
  while (at < data.size()) {
    uint64_t magic = 0;
    if (data.size() - at >= sizeof magic) std::memcpy(&magic, data.data() + at, sizeof magic);
    if (magic == channel::kDiagnosisMagic) {
      if (g.has_diagnosis_record || data.size() - at < sizeof g.diagnosis_record) {
        g.malformed = "a record that is not the harness's";
        return;
      }
      std::memcpy(&g.diagnosis_record, data.data() + at, sizeof g.diagnosis_record);
      g.has_diagnosis_record = true;
      at += sizeof g.diagnosis_record;
      continue;
    }
    channel::Record r;
    if (data.size() - at < sizeof r) {
      g.malformed = "a truncated record";
      return;
    }
    std::memcpy(&r, data.data() + at, sizeof r);
    at += sizeof r;
    if (r.magic != channel::kMagic || r.element_size == 0 || r.element_size > 64 ||
        r.count > (data.size() - at) / r.element_size) {
      g.malformed = "a record that is not the harness's";
      return;
    }
    Received rec;
    rec.record = r;
    rec.bytes.assign(data.begin() + long(at), data.begin() + long(at + r.count * r.element_size));
    at += r.count * r.element_size;
    g.records.push_back(std::move(rec));
  }
}

// The diagnosis the learner's process sent, when it explains its exit code (channel.h).
const Diagnosis* explanation(int code) {
  static Diagnosis d;
  channel::DiagnosisRecord& r = g.diagnosis_record;
  if (!g.has_diagnosis_record) return nullptr;
  r.kind[sizeof r.kind - 1] = '\0';
  d.kind = r.kind;
  if (backend::diagnosis_code(d.kind.c_str()) != code) return nullptr;
  d.record.assign(r.record, std::min<size_t>(r.length, sizeof r.record));
  return &d;
}

// Starts the learner's binary on the case, collects what it sends, and waits for it.
void run_learner(const Case& c) {
  const char* learner = std::getenv(kLearnerEnv);
  if (!learner || !*learner) {
    std::fprintf(stderr,
                 "error: %s_checker is the grader's half of a graded run: it needs %s (the learner's binary) and is "
                 "started by `python3 scripts/puzzle.py grade`. To run a case yourself, use %s_cpu.\n",
                 kPuzzle.name, kLearnerEnv, kPuzzle.name);
    std::exit(2);
  }
  int pipefd[2];
  if (::pipe(pipefd) != 0) {
    std::fprintf(stderr, "error: checker: pipe() failed: %s\n", std::strerror(errno));
    std::exit(4);
  }
  ::fcntl(pipefd[0], F_SETFD, FD_CLOEXEC);
  ::fcntl(g.verdict_fd, F_SETFD, FD_CLOEXEC);  // the learner's process must not reach the verdict

  std::vector<std::string> args = {learner, "--variant", c.variant, "--n", std::to_string(c.n), "--tpb", std::to_string(c.tpb)};
  if (c.show) args.push_back("--show");
  else args.insert(args.end(), {"--seed", std::to_string(c.seed)});
  // Output computed on the host is accepted for this variant (points.json): the learner's process
  // must then also let its launcher copy device memory to the host. On the command line, which
  // nothing in the learner's process can change before main() reads it.
  const char* allow = std::getenv(kAllowHostEnv);
  if (allow && std::strcmp(allow, "1") == 0) args.push_back("--allow-host-copies");
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string s = *e;
    const std::string key = s.substr(0, s.find('='));
    if (key != kLearnerEnv && key != kVerdictFdEnv && key != kAllowHostEnv && key != channel::kOutputFdEnv) env.push_back(s);
  }
  env.push_back(std::string(channel::kOutputFdEnv) + "=" + std::to_string(pipefd[1]));
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(&e[0]);
  envp.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "error: checker: fork() failed: %s\n", std::strerror(errno));
    std::exit(4);
  }
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::execve(learner, argv.data(), envp.data());
    static const char msg[] = "error: checker: cannot start the learner's binary\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::vector<unsigned char> data;
  unsigned char buf[1 << 16];
  for (;;) {
    const ssize_t k = ::read(pipefd[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (data.size() + size_t(k) > kMaxChannelBytes) {
      g.malformed = "more data than any output";
      break;
    }
    data.insert(data.end(), buf, buf + k);
  }
  ::close(pipefd[0]);
  while (::waitpid(pid, &g.status, 0) < 0 && errno == EINTR) {
  }
  g.ran = true;
  if (g.malformed.empty()) parse_channel(data);
}

void receive(const Case& c, void* out, size_t element_size, size_t count) {
  g.last_case = c;
  g.received = true;
  if (!g.ran) {
    run_learner(c);
    if (WIFSIGNALED(g.status)) {
      const int sig = WTERMSIG(g.status);
      // 128 + signal, as a shell reports it: the grader names the crash the same way for any program.
      std::printf("the learner's program was killed by %s\n", signal_text(sig).c_str());
      verdict(c, "error", "crashed (" + signal_text(sig) + ")");
      std::fflush(stdout);
      std::_Exit(128 + sig);
    }
    const int code = WIFEXITED(g.status) ? WEXITSTATUS(g.status) : 4;
    // The simulator's verdicts: its diagnostic, printed by the learner's process, names the cause.
    if (code == 3 || code == 4) g.diagnosis = explanation(code);
    if (code == 3) {
      verdict(c, "race", "");
      std::_Exit(3);
    }
    if (code == 4) {
      verdict(c, "error", "");
      std::_Exit(4);
    }
    if (code == 127 && g.records.empty()) end(c, "error", "the learner's binary could not be started", 4);
    if (code != 0)
      end(c, "error",
          "the program exited with status " + std::to_string(code) +
              (g.records.empty() ? " before its output reached the grader" : " after sending its output"),
          4);
    if (!g.malformed.empty())
      end(c, "error", "the output channel held " + g.malformed + " (learner code writing to the grader's channel?)", 4);
  }
  if (g.next >= g.records.size())
    end(c, "error",
        g.records.empty() ? "the program ended (exit status 0) before its output reached the grader: learner code must "
                            "not end the program"
                          : "the program sent fewer outputs than the driver compares",
        4);
  const Received& r = g.records[g.next++];
  g.current = &r;
  if (r.record.n != c.n || r.record.tpb != c.tpb || r.record.seed != c.seed || r.record.element_size != element_size ||
      r.record.count != count)
    end(c, "error",
        "the output the grader received is not this case's (n=" + std::to_string(r.record.n) + ", " +
            std::to_string(r.record.count) + " elements of " + std::to_string(r.record.element_size) +
            " bytes; expected n=" + std::to_string(c.n) + ", " + std::to_string(count) + " of " + std::to_string(element_size) + ")",
        4);
  std::memcpy(out, r.bytes.data(), count * element_size);
}

// Why an output that matches the reference does not count, or "" when it does.
std::string not_on_device(const channel::Provenance& p, size_t element_size) {
  if (p.launches == 0) return "not computed on the device: the program launched no kernel";
  if (!p.known) return "not computed on the device: the output was not downloaded from a device buffer the simulator tracks";
  if (p.first_other < 0) return "";
  const uint64_t total = p.bytes_by_writer[0] + p.bytes_by_writer[1] + p.bytes_by_writer[2] + p.bytes_by_writer[3];
  const uint64_t other = total - p.bytes_by_writer[3];
  return "not computed on the device: out[" + std::to_string(uint64_t(p.first_other) / element_size) +
         "] was last written by " + channel::writer_name(channel::Writer(p.first_other_writer)) + ", not by a kernel (" +
         std::to_string(other) + " of " + std::to_string(total) + " output bytes)";
}

int conclude(const Case& c, int rc) {
  if (rc != 0) {
    verdict(c, rc == 1 ? "fail" : "error", rc == 1 ? "wrong answer" : "");
    return rc;
  }
  const char* allow = std::getenv(kAllowHostEnv);
  // One input element leaves nothing to compute: a reduction's host loop rightly launches no kernel
  // and copies it (p13 --complete). Every larger case of the sweep still needs kernel output.
  if (!(allow && std::strcmp(allow, "1") == 0) && g.current && c.n > 1) {
    const std::string why = not_on_device(g.current->record.provenance, size_t(g.current->record.element_size));
    if (!why.empty()) {
      std::printf("%s\n", why.c_str());
      std::printf("  The answer is right, but every output element must be written by a kernel: a launcher that computes "
                  "it on the host, or copies it in with cudaMemcpy or cudaMemset, does not count.\n");
      verdict(c, "not-on-device", why);
      return kNotOnDevice;
    }
  }
  verdict(c, "pass", "");
  return 0;
}

// Records the driver never received (a second, forged output) make the run an error.
void check_all_received() {
  if (!g.ran || !g.received || g.next >= g.records.size()) return;
  std::printf("error: the program sent %zu outputs; the driver compares %zu\n", g.records.size(), g.next);
  g.current = nullptr;
  verdict(g.last_case, "error", "the program sent more outputs than the driver compares (learner code writing to the grader's channel?)");
  std::fflush(stdout);
  std::_Exit(4);
}

const detail::Receiver kReceiver = {&receive, &conclude};

const bool kRegistered = [] {
  const char* fd = std::getenv(kVerdictFdEnv);
  if (fd && *fd) {
    char* end = nullptr;
    const long v = std::strtol(fd, &end, 10);
    if (!*end && v >= 0 && v < (1 << 20)) g.verdict_fd = int(v);
  }
  detail::set_receiver(&kReceiver);
  std::atexit(&check_all_received);
  return true;
}();

}  // namespace
}  // namespace harness
