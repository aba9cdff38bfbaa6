# add_puzzle_checker(pNN): pNN_checker, the grader's half of a graded run (harness/channel.h):
# the puzzle's driver and the harness on the CPU simulator, with launchers that do nothing
# (checker_launchers.py) instead of the learner's pNN.cu. `grade` builds it next to pNN_cpu and
# runs each case through it, so the verdict comes from a process that never runs learner code.
# Not part of `all`: only `grade` needs it.

set(_PUZZLE_CHECKER_DIR ${CMAKE_CURRENT_LIST_DIR})

function(add_puzzle_checker puzzle)
  get_property(table GLOBAL PROPERTY PUZZLE_TABLE_${puzzle})
  set(driver ${CMAKE_SOURCE_DIR}/puzzles/${puzzle}/driver.cpp)
  set(script ${_PUZZLE_CHECKER_DIR}/checker_launchers.py)
  set(launchers ${CMAKE_BINARY_DIR}/generated/${puzzle}_checker_launchers.cpp)
  add_custom_command(
    OUTPUT ${launchers}
    COMMAND ${Python3_EXECUTABLE} ${script} ${driver} ${launchers}
    DEPENDS ${driver} ${script}
    COMMENT "checker launchers of ${puzzle}"
    VERBATIM)
  add_executable(${puzzle}_checker EXCLUDE_FROM_ALL ${driver} ${table} ${launchers}
                 ${_PUZZLE_CHECKER_DIR}/../src/checker.cpp)
  target_link_libraries(${puzzle}_checker PRIVATE puzzle_harness_cpu puzzles_warnings)
  target_include_directories(${puzzle}_checker PRIVATE ${CMAKE_SOURCE_DIR}/puzzles/${puzzle})
endfunction()
