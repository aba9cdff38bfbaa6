# puzzles_warnings: an INTERFACE target with the project's warning flags. Link it PRIVATE to each
# target made of the project's own C++ (the simulator, the harness, the drivers and checkers, the
# tests' own code); never to a learner's file (puzzles/*/pNN.cu, solutions/*/pNN.cu and their
# translated forms, planted and fixture learner files), which keeps the compiler's defaults.
#
#   -Wall -Wextra  always, in this repository (a project that only includes Cudasim.cmake to
#                  build its own programs gets none: it did not ask for our warnings)
#   -Werror        in the test build only (-DPUZZLES_TESTS=ON; -DPUZZLES_WERROR=OFF turns it
#                  off there, e.g. for a newer compiler's new warnings), so that a learner's build
#                  never breaks on a warning
#
# nvcc (the harness's bench_gpu.cu) passes them to the host compiler.

if(NOT TARGET puzzles_warnings)
  add_library(puzzles_warnings INTERFACE)
  get_filename_component(_repo ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
  if(CMAKE_SOURCE_DIR STREQUAL _repo)
    if(DEFINED PUZZLES_WERROR)
      set(_werror ${PUZZLES_WERROR})
    else()
      set(_werror ${PUZZLES_TESTS})
    endif()
    target_compile_options(puzzles_warnings INTERFACE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra $<$<BOOL:${_werror}>:-Werror>>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra $<$<BOOL:${_werror}>:-Xcompiler=-Werror>>)
  endif()
endif()
