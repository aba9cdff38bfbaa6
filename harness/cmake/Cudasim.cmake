# cudasim_add_executable(NAME a.cu [b.cu c.cpp ...]): a CUDA program with its own main(), built
# for the CPU simulator (harness/sim/README.md, "Running your own CUDA programs", has a complete
# example project).
#
# In any CMake project (CMake 3.20 or newer, with C++ among the project's languages):
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
# The harness's own CMakeLists.txt includes this file too (this repository's build, or the
# add_subdirectory below in another project's build); whichever copy runs in the harness's
# directory writes <build>/cudasim-toolchain.json: the compiler, flags and libraries that
# `python3 scripts/puzzle.py sim` builds with, so that both agree.

cmake_minimum_required(VERSION 3.20)  # DEPFILE with Makefile generators, cmake_language(DEFER)
get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "CXX" IN_LIST _languages)
  message(FATAL_ERROR "cudasim: include Cudasim.cmake after a project() that enables C++, e.g. project(demo LANGUAGES CXX)")
endif()
# Cache variables: the function is called from other directories, which do not see this one's.
get_filename_component(_harness ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(_CUDASIM_HARNESS ${_harness} CACHE INTERNAL "")

if(NOT TARGET cudasim)
  # Outside this repository: build the simulator library from its sources. Its CMakeLists.txt
  # includes this file again, which then finds the target and writes the toolchain file there.
  find_package(Threads REQUIRED)
  add_subdirectory(${_CUDASIM_HARNESS} ${CMAKE_BINARY_DIR}/cudasim EXCLUDE_FROM_ALL)
  # The simulator's sources are C++17 whatever the including project asks for.
  target_compile_features(cudasim PUBLIC cxx_std_17)
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    # A project without a build type compiles without optimisation: the simulator would run
    # kernels several times slower. This repository's build uses RelWithDebInfo.
    target_compile_options(cudasim PRIVATE -O2 -g)
  endif()
endif()
if(NOT Python3_EXECUTABLE AND NOT _CUDASIM_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()
if(Python3_EXECUTABLE)
  set(_CUDASIM_PYTHON ${Python3_EXECUTABLE} CACHE INTERNAL "")
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
  # The include directories, as the translator needs them to follow `#include <kernel.cuh>`,
  # without the mirrors of them that _cudasim_mirror_includes adds (the translator would translate
  # its own output again).
  string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" tree_re "${tree}")
  string(REPLACE "," "$<COMMA>" tree_re "${tree_re}")
  set(incs "$<FILTER:$<TARGET_PROPERTY:${name},INCLUDE_DIRECTORIES>,EXCLUDE,^${tree_re}/>")
  set(outs "")
  foreach(abs IN LISTS cu)
    string(REGEX REPLACE "^/" "" mirrored ${abs})
    string(REPLACE ":" "" mirrored ${mirrored})
    set(out ${tree}/${mirrored}.cpp)
    string(MAKE_C_IDENTIFIER ${mirrored} id)
    # The build log names the file as the user wrote it: relative to the project when inside it.
    file(RELATIVE_PATH shown ${CMAKE_SOURCE_DIR} ${abs})
    if(shown MATCHES "^\\.\\./")
      set(shown ${abs})
    endif()
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${_CUDASIM_PYTHON} ${_CUDASIM_HARNESS}/sim/cu2cpp.py --tree ${tree} --depfile ${tree}/${id}.d
              "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>" ${abs}
      DEPENDS ${abs} ${_CUDASIM_HARNESS}/sim/cu2cpp.py
      DEPFILE ${tree}/${id}.d
      COMMENT "cu2cpp ${shown} (translating for the CPU simulator)"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    # -g: the simulator's reports name source lines through the debug info (addr2line); DWARF 4
    # because binutils' addr2line misreads `#line`-mapped files in GCC 12's DWARF 5.
    # CUDASIM_LEARNER_FILE: the simulator's control API and internal headers refuse to be included.
    set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS
                                "-include;cudasim/runtime.h;-DCUDASIM_LEARNER_FILE;-g;-gdwarf-4;${CUDASIM_INSTRUMENT_FLAGS}")
    list(APPEND outs ${out})
  endforeach()
  add_executable(${name} ${outs} ${plain})
  target_link_libraries(${name} PRIVATE cudasim)
  target_compile_features(${name} PRIVATE cxx_std_17)
  # A quoted include that is not next to the including file is looked up in the include
  # directories: -iquote puts their translated mirrors first (those of linked libraries too).
  target_compile_options(${name} PRIVATE "$<$<BOOL:${incs}>:-iquote;${tree}$<JOIN:${incs},;-iquote;${tree}>>")
  # An angle-bracket include is looked up in the -I directories only, in order, and compile
  # options come after them on the command line: the mirrors must be include directories placed
  # before the originals. The target's include directories are known only once the directory's
  # CMakeLists.txt has run (target_include_directories usually follows this call).
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _cudasim_mirror_includes [[${name}]] [[${tree}]])")
  _cudasim_fast_build(${name} "${outs}" "${plain}")
endfunction()

# The uninstrumented build NAME.fast next to NAME (harness/sim/src/fast_build.cpp): the same
# sources compiled without the memory checker's calls, which NAME starts in its place when a run
# needs none (CUDASIM_CHECKS=0, no trace, no profile). Linux only: NAME finds it through
# /proc/self/exe. Built with NAME (a dependency), so that it is never older than the program.
function(_cudasim_fast_build name outs plain)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    return()
  endif()
  set(copies "")
  foreach(out IN LISTS outs)
    # A copy beside the translated file (its quoted includes resolve the same way): compile
    # options are a property of the source file, and this one gets other options.
    string(REGEX REPLACE "\\.cpp$" ".fast.cpp" copy ${out})
    add_custom_command(OUTPUT ${copy} COMMAND ${CMAKE_COMMAND} -E copy ${out} ${copy} DEPENDS ${out} VERBATIM)
    set_source_files_properties(${copy} PROPERTIES COMPILE_OPTIONS
                                "-include;cudasim/runtime.h;-DCUDASIM_LEARNER_FILE;-DCUDASIM_UNINSTRUMENTED;-g;-gdwarf-4;${CUDASIM_UNINSTRUMENTED_FLAGS}")
    list(APPEND copies ${copy})
  endforeach()
  add_executable(${name}_cudasim_fast ${copies} ${plain})
  set_target_properties(${name}_cudasim_fast PROPERTIES OUTPUT_NAME ${name}.fast)
  add_dependencies(${name} ${name}_cudasim_fast)
  # What the project sets on NAME after this call (include directories, libraries, definitions,
  # where it lands) is copied once the directory's CMakeLists.txt has run.
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _cudasim_fast_build_like [[${name}]])")
endfunction()

function(_cudasim_fast_build_like name)
  set(fast ${name}_cudasim_fast)
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES LINK_LIBRARIES LINK_OPTIONS
               LINK_DIRECTORIES CXX_STANDARD RUNTIME_OUTPUT_DIRECTORY)
    get_target_property(value ${name} ${prop})
    if(NOT value STREQUAL "value-NOTFOUND")
      set_property(TARGET ${fast} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
endfunction()

# Puts tree/<dir> before every absolute include directory <dir> of the target.
function(_cudasim_mirror_includes name tree)
  get_target_property(dirs ${name} INCLUDE_DIRECTORIES)
  set(mirrors "")
  foreach(d IN LISTS dirs)
    if(IS_ABSOLUTE "${d}" AND NOT d MATCHES "\\$<")
      string(REGEX REPLACE "^/" "" m "${d}")
      string(REPLACE ":" "" m "${m}")
      list(APPEND mirrors ${tree}/${m})
    endif()
  endforeach()
  if(mirrors)
    target_include_directories(${name} BEFORE PRIVATE ${mirrors})
  endif()
endfunction()

# The toolchain of `puzzle.py sim` (scripts/puzzlelib/sim_cmd.py), from the same facts as above.
# Written once per build, from the harness's directory, where Boost::context is visible: a global
# property, because this file runs in two directory scopes when another project includes it.
get_property(_written GLOBAL PROPERTY CUDASIM_TOOLCHAIN_WRITTEN)
if(TARGET cudasim AND NOT _written AND CMAKE_CURRENT_SOURCE_DIR STREQUAL _CUDASIM_HARNESS)
  set_property(GLOBAL PROPERTY CUDASIM_TOOLCHAIN_WRITTEN ON)
  set(_libs "\"$<TARGET_FILE:cudasim>\"")
  get_target_property(_defs cudasim COMPILE_DEFINITIONS)
  if(TARGET Boost::context AND "CUDASIM_USE_BOOST_CONTEXT=1" IN_LIST _defs)
    string(APPEND _libs ", \"$<TARGET_LINKER_FILE:Boost::context>\"")
  endif()
  set(_flags "")
  set(_instrument "")
  foreach(f IN LISTS CUDASIM_INSTRUMENT_FLAGS)
    string(APPEND _flags "\"${f}\", ")
    if(f IN_LIST CUDASIM_UNINSTRUMENTED_FLAGS)
      continue()  # the uninstrumented build keeps it
    endif()
    if(_instrument)
      string(APPEND _instrument ", ")
    endif()
    string(APPEND _instrument "\"${f}\"")
  endforeach()
  # An uninstrumented build next to the program (harness/sim/src/fast_build.cpp) on Linux.
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set(_fast_build true)
  else()
    set(_fast_build false)
  endif()
  set(_dl "")
  foreach(l IN LISTS CMAKE_DL_LIBS)
    string(APPEND _dl ", \"-l${l}\"")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/cudasim-toolchain.json CONTENT "{
  \"cxx\": \"${CMAKE_CXX_COMPILER}\",
  \"include\": \"${_CUDASIM_HARNESS}/sim/include\",
  \"translator\": \"${_CUDASIM_HARNESS}/sim/cu2cpp.py\",
  \"compile\": [${_flags}\"-std=c++17\", \"-O2\", \"-g\"],
  \"instrument\": [${_instrument}],
  \"fast_build\": ${_fast_build},
  \"libs\": [${_libs}, \"-pthread\"${_dl}]
}
")
endif()
