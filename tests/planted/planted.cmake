# Planted-bug learner files: tests/planted/<puzzle>/<name>.plant is a known bug as an edit of the
# puzzle's solution. plant.py writes the learner file it describes; it is built like the learner's
# own, as planted_<puzzle>_<name>_cpu (and _gpu with CUDA, built on request). Included by
# tests/CMakeLists.txt, and by the top-level CMakeLists.txt with -DPUZZLES_PLANTED=ON (no Catch2
# needed: the GPU machine builds the _gpu binaries that way).
set(_planted_dir ${CMAKE_CURRENT_LIST_DIR})
# tests/planted/<puzzle>/<name>.plant: a known bug as an edit of the puzzle's solution. plant.py
# writes the learner file it describes; it is built like the learner's own.
file(GLOB _planted CONFIGURE_DEPENDS RELATIVE ${_planted_dir}
     ${_planted_dir}/*/*.plant)
foreach(_rel IN LISTS _planted)
  get_filename_component(_puzzle ${_rel} DIRECTORY)
  get_filename_component(_name ${_rel} NAME_WLE)
  get_property(_table GLOBAL PROPERTY PUZZLE_TABLE_${_puzzle})
  set(_solution ${CMAKE_SOURCE_DIR}/solutions/${_puzzle}/${_puzzle}.cu)
  if(_table AND EXISTS ${_solution})
    set(_learner ${CMAKE_BINARY_DIR}/planted/${_puzzle}/${_name}.cu)
    add_custom_command(
      OUTPUT ${_learner}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/planted/${_puzzle}
      COMMAND ${Python3_EXECUTABLE} ${_planted_dir}/plant.py ${_planted_dir}/${_rel}
              ${_solution} ${_learner}
      DEPENDS ${_planted_dir}/${_rel} ${_solution} ${_planted_dir}/plant.py
      COMMENT "plant tests/planted/${_rel}"
      VERBATIM)
    add_puzzle_binary(planted_${_puzzle}_${_name}_cpu ${_puzzle} ${_learner} cpu)
    if(PUZZLES_HAVE_CUDA)  # the same file for the GPU: scripts/sanitizer_planted.py runs compute-sanitizer on it
      add_puzzle_binary(planted_${_puzzle}_${_name}_gpu ${_puzzle} ${_learner} gpu)
      set_target_properties(planted_${_puzzle}_${_name}_gpu PROPERTIES EXCLUDE_FROM_ALL ON)
    endif()
  else()
    message(WARNING "tests/planted/${_rel}: there is no puzzle '${_puzzle}' with a solution; skipped")
  endif()
endforeach()

# The test suite grades the planted files too (tests/python/test_planted.py): `grade` runs each
# case through the puzzle's checker, which is not part of `all` otherwise.
if(PUZZLES_TESTS)
  set(_planted_checkers)
  foreach(_rel IN LISTS _planted)
    get_filename_component(_puzzle ${_rel} DIRECTORY)
    if(TARGET ${_puzzle}_checker)
      list(APPEND _planted_checkers ${_puzzle}_checker)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _planted_checkers)
  add_custom_target(planted_checkers ALL DEPENDS ${_planted_checkers})
endif()
