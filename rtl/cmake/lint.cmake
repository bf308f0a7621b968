# ctest driver of rtl.lint.<isa>: `verilator --lint-only -Wall` of every top module of
# the generated files, with the waiver file. Fails on any warning or error.
# -DVERILATOR=... -DWAIVERS=file.vlt -DSOURCES="a.sv;b.sv" -DTOPS="m1;m2"
foreach(top ${TOPS})
  execute_process(
    COMMAND ${VERILATOR} --lint-only -Wall ${WAIVERS} ${SOURCES} --top-module ${top}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR out MATCHES "%(Warning|Error)")
    message(FATAL_ERROR "verilator --lint-only -Wall --top-module ${top} (exit ${rc}):\n${out}")
  endif()
  message(STATUS "${top}: lint-clean")
endforeach()
