# cudasim_add_executable(NAME a.cu [b.cu c.cpp ...]): a CUDA program with its own main(), built
# for the CPU simulator (harness/sim/README.md, "Running your own CUDA programs").
#
# In any CMake project:
#   include(/path/to/this/repository/harness/cmake/Cudasim.cmake)
#   cudasim_add_executable(vector_add vector_add.cu)
#   target_include_directories(vector_add PRIVATE common)   # also searched for included .cuh files
#
# Every .cu source, and every file it includes from its own folder or the target's include
# directories, is translated by harness/sim/cu2cpp.py into a mirror tree under the build dir, then
# compiled as C++ with cudasim/runtime.h force-included and the memory checker's instrumentation,
# and linked with libcudasim. Other sources (.cpp) are compiled as they are, with the simulator's
# headers (cuda_runtime.h, ...) on the include path. No CUDA toolkit header is ever used.
#
# Inside this repository the file also writes <build>/cudasim-toolchain.json: the compiler, flags
# and libraries that `python3 scripts/puzzle.py sim` builds with, so that both agree.

cmake_minimum_required(VERSION 3.20)  # DEPFILE with Makefile generators
# A cache variable: the function is called from other directories, which do not see this one's.
get_filename_component(_harness ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(_CUDASIM_HARNESS ${_harness} CACHE INTERNAL "")

if(NOT TARGET cudasim)
  # Outside this repository: build the simulator library from its sources.
  find_package(Threads REQUIRED)
  add_subdirectory(${_CUDASIM_HARNESS} ${CMAKE_BINARY_DIR}/cudasim EXCLUDE_FROM_ALL)
endif()
if(NOT Python3_EXECUTABLE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()

function(cudasim_add_executable name)
  set(tree ${CMAKE_CURRENT_BINARY_DIR}/${name}.cudasim)
  set(cu "")
  set(plain "")
  foreach(src IN LISTS ARGN)
    get_filename_component(abs ${src} ABSOLUTE)
    if(abs MATCHES "\\.cu$")
      list(APPEND cu ${abs})
    else()
      list(APPEND plain ${abs})
    endif()
  endforeach()
  set(outs "")
  # The include directories, as the translator needs them to follow `#include <kernel.cuh>`.
  set(incs "$<TARGET_PROPERTY:${name},INCLUDE_DIRECTORIES>")
  foreach(abs IN LISTS cu)
    string(REGEX REPLACE "^/" "" mirrored ${abs})
    string(REPLACE ":" "" mirrored ${mirrored})
    set(out ${tree}/${mirrored}.cpp)
    string(MAKE_C_IDENTIFIER ${mirrored} id)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${Python3_EXECUTABLE} ${_CUDASIM_HARNESS}/sim/cu2cpp.py --tree ${tree} --depfile ${tree}/${id}.d
              "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>" ${abs}
      DEPENDS ${abs} ${_CUDASIM_HARNESS}/sim/cu2cpp.py
      DEPFILE ${tree}/${id}.d
      COMMENT "cu2cpp ${src}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS "-include;cudasim/runtime.h;${CUDASIM_INSTRUMENT_FLAGS}")
    list(APPEND outs ${out})
  endforeach()
  add_executable(${name} ${outs} ${plain})
  target_link_libraries(${name} PRIVATE cudasim)
  target_compile_features(${name} PRIVATE cxx_std_17)
  # A quoted include that is not next to the including file is looked up in the include
  # directories: -iquote puts their translated mirrors first.
  target_compile_options(${name} PRIVATE "$<$<BOOL:${incs}>:-iquote;${tree}$<JOIN:${incs},;-iquote;${tree}>>")
endfunction()

# The toolchain of `puzzle.py sim` (scripts/puzzlelib/sim_cmd.py), from the same facts as above.
if(TARGET cudasim AND NOT CUDASIM_TOOLCHAIN_WRITTEN)
  set(CUDASIM_TOOLCHAIN_WRITTEN ON)
  set(_libs "\"$<TARGET_FILE:cudasim>\"")
  get_target_property(_defs cudasim COMPILE_DEFINITIONS)
  if(TARGET Boost::context AND "CUDASIM_USE_BOOST_CONTEXT=1" IN_LIST _defs)
    string(APPEND _libs ", \"$<TARGET_LINKER_FILE:Boost::context>\"")
  endif()
  set(_flags "")
  foreach(f IN LISTS CUDASIM_INSTRUMENT_FLAGS)
    string(APPEND _flags "\"${f}\", ")
  endforeach()
  set(_dl "")
  foreach(l IN LISTS CMAKE_DL_LIBS)
    string(APPEND _dl ", \"-l${l}\"")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/cudasim-toolchain.json CONTENT "{
  \"cxx\": \"${CMAKE_CXX_COMPILER}\",
  \"include\": \"${_CUDASIM_HARNESS}/sim/include\",
  \"translator\": \"${_CUDASIM_HARNESS}/sim/cu2cpp.py\",
  \"compile\": [${_flags}\"-std=c++17\", \"-O2\", \"-g\"],
  \"libs\": [${_libs}, \"-pthread\"${_dl}]
}
")
endif()
