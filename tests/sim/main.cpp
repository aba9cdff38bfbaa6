// Catch2 runner for the simulator tests: kernel errors become cudasim::KernelError exceptions, and
// several worker threads run the blocks of a grid even on a small machine.
#define CATCH_CONFIG_RUNNER
// Catch's own SIGSEGV handler would replace cudasim's, which names the kernel, block, thread and
// buffer of a bad access. Keep cudasim's.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "cudasim/runtime.h"
#include "cudasim/control.h"

// An unexpected kernel error fails the test with the simulator's message.
CATCH_TRANSLATE_EXCEPTION(const cudasim::KernelError& e) {
  return std::string("cudasim::KernelError (kind ") + e.kind + ", code " + std::to_string(e.code) + "):\n" + e.message;
}

int main(int argc, char** argv) {
  cudasim::set_error_mode(cudasim::ErrorMode::Throw);
  // The tests assert the course's errors: an uninitialized read stops the kernel, as in the puzzles.
  cudasim::options().undefined_values_are_errors = true;
  // The worker pool is created at the first launch; 4 workers make blocks of one grid run
  // concurrently (per-block isolation of shared memory, atomics from several OS threads).
  if (!std::getenv("CUDASIM_WORKERS")) cudasim::options().workers = 4;
  return Catch::Session().run(argc, argv);
}
