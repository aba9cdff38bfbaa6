// Device code cannot call host functions. nvcc refuses a kernel that calls exit() or fopen() at
// build time ("calling a __host__ function("exit") from a __global__ function("k") is not
// allowed"); the simulator compiles kernels as plain C++, so it refuses those calls when they
// happen instead, with the same words.
//
// How: the learner's CPU binaries are linked with `-Wl,--wrap=NAME` for every NAME this file
// wraps (harness/cmake/Puzzle.cmake reads the names from the HOST_CALL lines below, so the list
// lives here only). A call to NAME anywhere in the program then reaches __wrap_NAME, which lets it
// through to the C library (__real_NAME) unless the calling OS thread is running a simulated CUDA
// thread; then the thread stops with a report and the launch fails (exit 4). Calls the C library
// makes internally (printf writing to stdout, assert() ending in abort()) are not affected: --wrap
// changes only the references of the program's own object files.
//
// The wrapped set: the host functions a kernel could use to end or replace the process, reach
// files, start or signal processes, or write to a descriptor (the grader's channel included):
//   exit _exit _Exit quick_exit abort
//   fopen fopen64 freopen fdopen open open64 __open_2 __open64_2 openat creat remove unlink rename
//   write pwrite
//   system popen fork execv execve execvp execl execle execlp posix_spawn posix_spawnp
//   kill killpg raise
// Not wrapped, and so still running in a kernel on the simulator (nvcc refuses them): output to
// streams (printf is legal device code; fprintf, puts, fwrite and std::cout only print), reads,
// sockets, threads, raw syscall() and inline assembly. docs/instructors.md says what that means
// for grading.
//
// The simulator's own code also calls some of these from a simulated thread (addr2line through
// popen for a report, _exit after a crash): it marks itself with OwnCalls (internal.h), and those
// calls go through.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <vector>

#include "internal.h"

namespace cudasim {
namespace detail {

// Returns when the caller is host code (or the simulator itself); in device code it ends the
// simulated thread with the report and never returns.
static void refuse_in_device_code(const char* function, void* return_address) {
  Worker* w = tl_worker;
  if (__builtin_expect(!w || !tl_thread || !w->grid || tl_own_calls > 0, 1)) return;
  std::string msg, at;
  {
    OwnCalls own;  // symbolizing the call site runs addr2line
    // The return address follows the call instruction; one byte back is the call itself.
    at = code_line(static_cast<char*>(return_address) - 1);
    const LaunchSite& site = w->grid->site;
    msg = strf("host function called from device code%s%s: %s: calling a __host__ function(\"%s\") from a __global__ "
               "function(\"%s\") is not allowed.\n"
               "  Device code cannot call host functions; on a GPU this is a build error (nvcc refuses the file). A kernel "
               "ends with `return`, hands its results back through its output buffers, and may print with printf.",
               at.empty() ? "" : " at ", at.c_str(), describe_current_thread().c_str(), function, site.kernel);
  }
  thread_fault_ext(*w, *reinterpret_cast<Thread*>(tl_thread), Kind::host_call, msg, at, function,
                   Facts().set("function", function));
}

}  // namespace detail
}  // namespace cudasim

using cudasim::detail::refuse_in_device_code;

#define HOST_CALL_REAL(ret, name, params) extern "C" ret __real_##name params;

// A wrapper with a fixed parameter list: refuse in device code, else forward.
#define HOST_CALL(ret, name, params, args)                                     \
  HOST_CALL_REAL(ret, name, params)                                            \
  extern "C" ret __wrap_##name params {                                        \
    refuse_in_device_code(#name, __builtin_return_address(0));                 \
    return __real_##name args;                                                 \
  }

// Ending the process.
HOST_CALL(void, exit, (int status), (status))
HOST_CALL(void, _exit, (int status), (status))
HOST_CALL(void, _Exit, (int status), (status))
HOST_CALL(void, quick_exit, (int status), (status))
HOST_CALL(void, abort, (void), ())

// Files and descriptors.
HOST_CALL(FILE*, fopen, (const char* path, const char* mode), (path, mode))
HOST_CALL(FILE*, fopen64, (const char* path, const char* mode), (path, mode))
HOST_CALL(FILE*, freopen, (const char* path, const char* mode, FILE* f), (path, mode, f))
HOST_CALL(FILE*, fdopen, (int fd, const char* mode), (fd, mode))
HOST_CALL(int, __open_2, (const char* path, int flags), (path, flags))
HOST_CALL(int, __open64_2, (const char* path, int flags), (path, flags))
HOST_CALL(int, creat, (const char* path, mode_t mode), (path, mode))
HOST_CALL(int, remove, (const char* path), (path))
HOST_CALL(int, unlink, (const char* path), (path))
HOST_CALL(int, rename, (const char* from, const char* to), (from, to))
HOST_CALL(ssize_t, write, (int fd, const void* buf, size_t n), (fd, buf, n))
HOST_CALL(ssize_t, pwrite, (int fd, const void* buf, size_t n, off_t at), (fd, buf, n, at))

// open() takes a mode only when it creates a file.
static mode_t open_mode(int flags, va_list ap) {
#ifdef O_TMPFILE
  const bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
#else
  const bool tmpfile = false;
#endif
  return (flags & O_CREAT) || tmpfile ? mode_t(va_arg(ap, int)) : 0;
}

HOST_CALL_REAL(int, open, (const char* path, int flags, ...))
extern "C" int __wrap_open(const char* path, int flags, ...) {
  refuse_in_device_code("open", __builtin_return_address(0));
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return __real_open(path, flags, mode);
}

HOST_CALL_REAL(int, open64, (const char* path, int flags, ...))
extern "C" int __wrap_open64(const char* path, int flags, ...) {
  refuse_in_device_code("open64", __builtin_return_address(0));
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return __real_open64(path, flags, mode);
}

HOST_CALL_REAL(int, openat, (int dir, const char* path, int flags, ...))
extern "C" int __wrap_openat(int dir, const char* path, int flags, ...) {
  refuse_in_device_code("openat", __builtin_return_address(0));
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return __real_openat(dir, path, flags, mode);
}

// Processes.
HOST_CALL(int, system, (const char* command), (command))
HOST_CALL(FILE*, popen, (const char* command, const char* mode), (command, mode))
HOST_CALL(pid_t, fork, (void), ())
HOST_CALL(int, execv, (const char* path, char* const* argv), (path, argv))
HOST_CALL(int, execve, (const char* path, char* const* argv, char* const* envp), (path, argv, envp))
HOST_CALL(int, execvp, (const char* file, char* const* argv), (file, argv))
HOST_CALL(int, posix_spawn, (pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr, char* const* argv, char* const* envp), (pid, path, actions, attr, argv, envp))
HOST_CALL(int, posix_spawnp, (pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr, char* const* argv, char* const* envp), (pid, file, actions, attr, argv, envp))

// execl, execlp and execle take their arguments as a list ending in a null pointer (execle: then
// the environment); outside device code they run as the execv/execvp/execve they equal.
static std::vector<char*> arg_list(const char* first, va_list ap) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (argv.back()) argv.push_back(va_arg(ap, char*));
  return argv;
}

HOST_CALL_REAL(int, execl, (const char* path, const char* arg, ...))
extern "C" int __wrap_execl(const char* path, const char* arg, ...) {
  refuse_in_device_code("execl", __builtin_return_address(0));
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arg_list(arg, ap);
  va_end(ap);
  return __real_execv(path, argv.data());
}

HOST_CALL_REAL(int, execlp, (const char* file, const char* arg, ...))
extern "C" int __wrap_execlp(const char* file, const char* arg, ...) {
  refuse_in_device_code("execlp", __builtin_return_address(0));
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arg_list(arg, ap);
  va_end(ap);
  return __real_execvp(file, argv.data());
}

HOST_CALL_REAL(int, execle, (const char* path, const char* arg, ...))
extern "C" int __wrap_execle(const char* path, const char* arg, ...) {
  refuse_in_device_code("execle", __builtin_return_address(0));
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arg_list(arg, ap);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return __real_execve(path, argv.data(), envp);
}

// Signals.
HOST_CALL(int, kill, (pid_t pid, int sig), (pid, sig))
HOST_CALL(int, killpg, (pid_t group, int sig), (group, sig))
HOST_CALL(int, raise, (int sig), (sig))
