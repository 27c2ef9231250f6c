# Helpers every folder's CMakeLists.txt uses. Targets are repo-rooted for includes
# (#include "common/status/status.h").
set(TRAINER_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)
# GCC 12 at -O3 reports -Wrestrict inside libstdc++'s string concatenation (GCC bug 105329, a
# false positive); keep it a warning so Release builds work.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
  list(APPEND TRAINER_WARNINGS -Wno-error=restrict)
endif()

# trainer_library(NAME SRCS a.cc b.cc DEPS lib1 lib2)
function(trainer_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(${name} STATIC ${ARG_SRCS})
    target_compile_options(${name} PRIVATE ${TRAINER_WARNINGS})
    target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${CMAKE_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# trainer_binary(NAME SRCS main.cc DEPS ...): an executable in build/bin/.
function(trainer_binary name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_compile_options(${name} PRIVATE ${TRAINER_WARNINGS})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()

# One Catch2 main compiled once for every test binary (it is the slowest file to compile).
if(NOT TARGET trainer_catch_main)
  add_library(trainer_catch_main STATIC ${CMAKE_SOURCE_DIR}/cmake/catch_main.cc)
  target_link_libraries(trainer_catch_main PUBLIC Catch2::Catch2)
endif()

# trainer_test(NAME SRCS x_test.cc DEPS ... LABELS unit [ENV K=V ...] [FIXTURES f ...])
# A Catch2 test binary registered with CTest; run from the source root so tests can read
# testdata by repo-relative path.
function(trainer_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SRCS;DEPS;LABELS;ENV;FIXTURES" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_compile_options(${name} PRIVATE ${TRAINER_WARNINGS})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE trainer_catch_main ${ARG_DEPS})
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  _trainer_test_properties(${name})
endfunction()

# trainer_script_test(NAME COMMAND cmd args... LABELS ... [ENV ...] [FIXTURES ...])
function(trainer_script_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "COMMAND;LABELS;ENV;FIXTURES" ${ARGN})
  add_test(NAME ${name} COMMAND ${ARG_COMMAND} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  _trainer_test_properties(${name})
endfunction()

# Integration tests share one test bed per ctest run: the fixture `testbed` (set up by the
# tests in tests/integration/testbed/) starts it in ${TRAINER_TESTBED_DIR}; tests find its
# kubeconfig at $TESTBED_DIR/kubeconfig and the built binaries in $TRAINER_BIN_DIR.
set(TRAINER_TESTBED_DIR ${CMAKE_BINARY_DIR}/testbed CACHE PATH "State directory of the test bed ctest starts")

macro(_trainer_test_properties name)
  set(_env "TRAINER_BIN_DIR=${CMAKE_BINARY_DIR}/bin" "TRAINER_BUILD_DIR=${CMAKE_BINARY_DIR}"
           "TESTBED_DIR=${TRAINER_TESTBED_DIR}" ${ARG_ENV})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "${_env}")
  if(ARG_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  endif()
  if("integration" IN_LIST ARG_LABELS)
    set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED testbed)
    set_property(TEST ${name} APPEND PROPERTY RESOURCE_LOCK testbed_exclusive_${name})
  endif()
  if(ARG_FIXTURES)
    set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED ${ARG_FIXTURES})
  endif()
endmacro()
