# Compiler flags shared by all of Ember's own targets.
# Link `ember_warnings` (PRIVATE) into every target built from our sources.
add_library(ember_warnings INTERFACE)
target_compile_options(ember_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(EMBER_WERROR)
  target_compile_options(ember_warnings INTERFACE -Werror)
endif()

if(EMBER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(EMBER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EMBER_FUZZ=ON needs clang (CC=clang CXX=clang++)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ember_add_fuzzer(NAME SOURCE LIBS...): a libFuzzer target when EMBER_FUZZ=ON.
function(ember_add_fuzzer name source)
  if(EMBER_FUZZ)
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE ${ARGN} ember_warnings)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  endif()
endfunction()

# Tests and the Verilated RTL models are compiled with line tables only (-g1) in
# RelWithDebInfo: backtraces, sanitizer reports and perf still name file and line, and
# the build of a fresh clone is ~35% cheaper than with full -g (measured 2026-11-27:
# CpuOpsTest.cpp 11.6 s -> 7.4 s, the large NPU's Verilated unity 49.9 s -> 32.7 s).
# Ember's libraries and tools keep full debug information. EMBER_FULL_DEBUG_INFO=ON
# keeps -g for everything (to step through a test in a debugger).
option(EMBER_FULL_DEBUG_INFO "Full -g also for tests and Verilated models" OFF)
macro(ember_line_tables_only)
  if(NOT EMBER_FULL_DEBUG_INFO)
    add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
  endif()
endmacro()

# ember_add_subfolders(): every sub-folder of the current source folder that has a
# CMakeLists.txt joins the build, in name order (one folder per component,
# ARCHITECTURE.md section 1): a new component needs no line in its parent.
function(ember_add_subfolders)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} *)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${child}
       AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
