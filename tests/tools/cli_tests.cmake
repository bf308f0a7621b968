# Command-line tests of ember-run: good runs checked with NumPy, and bad input (files,
# names, shapes, options) that must give a clear message and exit status 1, not a crash.
set(CLI_IN ${CMAKE_CURRENT_BINARY_DIR}/cli_inputs)
set(CLI_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli_outputs)
set(EXPECT_ERROR ${CMAKE_CURRENT_SOURCE_DIR}/expect_error.sh)
set(RUN ${CMAKE_CURRENT_BINARY_DIR}/../../tools/ember-run/ember-run)

add_test(NAME tools.cli_inputs
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gen_cli_inputs.py ${CLI_IN})
set_tests_properties(tools.cli_inputs PROPERTIES FIXTURES_SETUP ember_cli_inputs LABELS tools)

# ember_cli_error(NAME REGEX... -- ARGS...): ember-run ARGS must exit 1 with stderr
# matching every REGEX. ember_cli_usage: the same for a bad command line (exit 2).
function(ember_cli_usage name)
  set(EXPECT_ERROR ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 2 stderr)
  ember_cli_error(${name} ${ARGN})
endfunction()
function(ember_cli_error name)
  set(patterns)
  set(args ${ARGN})
  list(FIND args "--" sep)
  list(SUBLIST args 0 ${sep} patterns)
  math(EXPR first "${sep} + 1")
  set(rest)
  list(LENGTH args n)
  if(first LESS n)
    list(SUBLIST args ${first} -1 rest)
  endif()
  add_test(NAME tools.ember_run.error.${name}
           COMMAND ${EXPECT_ERROR} ${patterns} -- $<TARGET_FILE:ember-run> ${rest})
  set_tests_properties(tools.ember_run.error.${name} PROPERTIES
                       FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60)
endfunction()

add_test(NAME tools.ember_run.help COMMAND ember-run --help)
set_tests_properties(tools.ember_run.help PROPERTIES LABELS tools
                     PASS_REGULAR_EXPRESSION
                     "Usage: ember-run \\[OPTIONS\\] MODEL.*--random-input.*exit status.*devices:.*interp")

# Good runs, checked by NumPy against values NumPy computed.
add_test(NAME tools.ember_run.relu_input
         COMMAND ${EMBER_PYTHON} ${PROJECT_SOURCE_DIR}/tests/models/run_and_compare.py
                 --ember-run $<TARGET_FILE:ember-run> --model ${CLI_IN}/relu.onnx
                 --out ${CLI_OUT}/relu --input x=${CLI_IN}/x.npy
                 --expected y_0_out=${CLI_IN}/x_expected_relu.npy --exact)
add_test(NAME tools.ember_run.random_input
         COMMAND ${EMBER_PYTHON} ${PROJECT_SOURCE_DIR}/tests/models/run_and_compare.py
                 --ember-run $<TARGET_FILE:ember-run> --model ${CLI_IN}/relu.onnx
                 --out ${CLI_OUT}/random --extra=--random-input --extra=5 --extra=--top
                 --extra=3 --extra=--repeat --extra=3 --extra=--compare --extra=interp)
# An input the model declares but no output depends on is accepted (and checked).
add_test(NAME tools.ember_run.unused_declared_input
         COMMAND ${EMBER_PYTHON} ${PROJECT_SOURCE_DIR}/tests/models/run_and_compare.py
                 --ember-run $<TARGET_FILE:ember-run> --model ${CLI_IN}/shape_of_x.onnx
                 --out ${CLI_OUT}/shape_of_x --input x=${CLI_IN}/x.npy
                 --expected s=${CLI_IN}/shape_of_x_expected.npy --exact)
ember_cli_error(unused_declared_input_wrong_shape
                "--input x=.*x_wrong_shape.npy: the file holds float32\\[3, 2\\], the model's input 'x' is float32\\[2, 3\\]"
                -- ${CLI_IN}/shape_of_x.onnx --input x=${CLI_IN}/x_wrong_shape.npy)
set_tests_properties(tools.ember_run.unused_declared_input PROPERTIES
                     FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60)
set_tests_properties(tools.ember_run.relu_input tools.ember_run.random_input PROPERTIES
                     FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60)

# The ONNX importer and the cpu backend are modules ember-run loads on first use
# (ember/importer/OnnxPlugin.h, ember/cpu/CpuPlugin.h): a binary runs without them, and a
# module that is absent, not a shared object or another module gives a clear error naming
# the file (exit 1), never a crash. Sanitizer builds link both in and build no module.
if(TARGET ember_onnx_plugin AND TARGET emberc)
  add_test(NAME tools.ember_run.modules_on_demand
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/modules_on_demand.sh $<TARGET_FILE:ember-run>
                   $<TARGET_FILE:emberc> ${CLI_IN}/relu.onnx ${CLI_OUT}/modules_on_demand)
  set_tests_properties(tools.ember_run.modules_on_demand PROPERTIES
                       FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 120)
endif()
if(TARGET ember_onnx_plugin)
  set(_importer "the ONNX importer: its module libember_onnx_plugin.so could not be loaded:")
  ember_cli_error(onnx_module_absent "${_importer}"
                  "^  .*/absent/libember_onnx_plugin.so: no such file$"
                  "^\\(set EMBER_ONNX_PLUGIN to its path\\)$" -- ${CLI_IN}/relu.onnx)
  ember_cli_error(onnx_module_not_a_shared_object "${_importer}"
                  "^  .*/relu.onnx: .*relu.onnx: (invalid ELF header|file too short)"
                  -- ${CLI_IN}/relu.onnx)
  set_tests_properties(tools.ember_run.error.onnx_module_absent PROPERTIES ENVIRONMENT
                       "EMBER_ONNX_PLUGIN=${CLI_OUT}/absent/libember_onnx_plugin.so")
  set_tests_properties(tools.ember_run.error.onnx_module_not_a_shared_object PROPERTIES
                       ENVIRONMENT "EMBER_ONNX_PLUGIN=${CLI_IN}/relu.onnx")
  if(TARGET ember_cpu_plugin)
    ember_cli_error(onnx_module_of_another_part "${_importer}"
                    "libember_cpu_plugin.so: no entry ember_onnx_plugin_v1" -- ${CLI_IN}/relu.onnx)
    set_tests_properties(tools.ember_run.error.onnx_module_of_another_part PROPERTIES
                         ENVIRONMENT "EMBER_ONNX_PLUGIN=$<TARGET_FILE:ember_cpu_plugin>")
    ember_cli_error(cpu_module_absent
                    "the cpu backend: its module libember_cpu_plugin.so could not be loaded:"
                    "^  .*/absent/libember_cpu_plugin.so: no such file$"
                    -- ${CLI_IN}/relu.onnx --device cpu --random-input 1)
    set_tests_properties(tools.ember_run.error.cpu_module_absent PROPERTIES ENVIRONMENT
                         "EMBER_CPU_PLUGIN=${CLI_OUT}/absent/libember_cpu_plugin.so")
  endif()
endif()

# int8 on the interpreter and the simulated NPU: bit-exact cross-check, report and trace;
# the table's layer row carries its roofline (a ReLU moves DRAM bytes and does no MACs).
add_test(NAME tools.ember_run.int8_compare_sim
         COMMAND ember-run ${CLI_IN}/relu.onnx --random-input 1 --compare interp,sim
                 --report ${CMAKE_CURRENT_BINARY_DIR}/relu_sim_report.json
                 --trace ${CMAKE_CURRENT_BINARY_DIR}/relu_sim_trace.json)
set_tests_properties(tools.ember_run.int8_compare_sim PROPERTIES
                     FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60
                     PASS_REGULAR_EXPRESSION
                     "note: device 'sim' runs int8 only.*energy component.*bound +bound cyc +eff\\. +most stalled\n[^\n]* dram +[0-9]+ +[0-9.]+%  ((load|compute|store) (token|memory) [0-9]+|-)\n.*sim +yes +0 .*NPU [0-9]+ cycles")

add_test(NAME tools.ember_run.iterations_warmup
         COMMAND ember-run ${CLI_IN}/relu.onnx --random-input 1 --compare interp,sim
                 --iterations 3 --warmup 1 --quiet)
set_tests_properties(tools.ember_run.iterations_warmup PROPERTIES
                     FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60
                     PASS_REGULAR_EXPRESSION
                     "interp: median latency: [0-9.]+ ms \\(3 runs after 1 warm-up\\).*sim: median latency")

# int8 on the interpreter, the cpu backend and the simulated NPU: MobileNetV2 of the model
# zoo (exported by the models.export fixture) must give the same bytes on all three.
# expect_output.sh requires exit status 0 (--compare exits 1 on any disagreement) and the
# cross-check table's lines.
if(TARGET ember_cpu)
  set(mnv2 ${EMBER_MODELS_DIR}/mobilenet_v2)
  add_test(NAME tools.ember_run.int8_compare_cpu_sim.mobilenet_v2
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_output.sh
                   "^cross-check \\(int8, must be bit-exact, reference: interp\\)"
                   "^  output +cpu +yes +0 " "^  output +sim +yes +0 " "^time: import"
                   -- $<TARGET_FILE:ember-run> ${mnv2}/model.onnx --input input=${mnv2}/input.npy
                   --compare interp,cpu,sim --precision int8)
  set_tests_properties(tools.ember_run.int8_compare_cpu_sim.mobilenet_v2 PROPERTIES
                       FIXTURES_REQUIRED ember_model_zoo LABELS "tools;models" TIMEOUT 900)
endif()

# --profile on the cpu device: the table, the JSON report and the trace of LeNet's
# operations agree with each other (cpu_profile_check.py).
if(TARGET ember_cpu)
  add_test(NAME tools.ember_run.cpu_profile
           COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cpu_profile_check.py
                   $<TARGET_FILE:ember-run> ${EMBER_MODELS_DIR}/lenet/model.onnx
                   ${CMAKE_CURRENT_BINARY_DIR}/cpu_profile)
  set_tests_properties(tools.ember_run.cpu_profile PROPERTIES
                       FIXTURES_REQUIRED ember_model_zoo LABELS "tools;cpu" TIMEOUT 300)
endif()
ember_cli_error(profile_not_cpu "--profile" "cpu device" --
                ${CLI_IN}/relu.onnx --profile --random-input 1)

# Options.
ember_cli_usage(no_model "MODEL is required" "see ember-run --help" --)
ember_cli_usage(unknown_option "not expected: --frobnicate" "see ember-run --help" --
                ${CLI_IN}/relu.onnx --frobnicate)
ember_cli_usage(two_models "not expected: b.onnx" -- a.onnx b.onnx)
ember_cli_usage(bad_input_syntax "--input: expects NAME=FILE.npy, got 'x'" --
                ${CLI_IN}/relu.onnx --input x)
ember_cli_usage(bad_repeat "--repeat: must be at least 1, got 0" -- ${CLI_IN}/relu.onnx --repeat 0)
ember_cli_usage(bad_seed "--random-input: expects a non-negative integer, got '-3'" --
                ${CLI_IN}/relu.onnx --random-input -3)
ember_cli_usage(missing_value "--out: 1 required DIR missing" -- ${CLI_IN}/relu.onnx --out)
ember_cli_error(unknown_device "unknown device" "interp" --
                ${CLI_IN}/relu.onnx --device tpu --random-input 1)
ember_cli_error(unknown_compare_device "unknown device" --
                ${CLI_IN}/relu.onnx --compare tpu --random-input 1)
ember_cli_error(unknown_device_in_list "unknown device 'tpu'|--device 'tpu'" --
                ${CLI_IN}/relu.onnx --compare interp,tpu --random-input 1)
ember_cli_usage(empty_compare_entry "comma-separated list" --
                ${CLI_IN}/relu.onnx --compare interp,,sim --random-input 1)
ember_cli_usage(bad_iterations "--iterations: must be at least 1" --
                ${CLI_IN}/relu.onnx --iterations 0 --random-input 1)
ember_cli_usage(bad_threads "--threads: must be at least 1" --
                ${CLI_IN}/relu.onnx --threads 0 --random-input 1)
ember_cli_usage(bad_precision "--precision: fp16 not in \\{float,int8\\}" --
                ${CLI_IN}/relu.onnx --precision fp16 --random-input 1)
ember_cli_error(report_without_sim "reports come from the NPU simulator" --
                ${CLI_IN}/relu.onnx --report r.json --random-input 1)
# Outputs never land on inputs or on each other, and an empty file name is a usage error
# (issue 47, item 3): the report and an output .npy in one file are refused before any work.
foreach(opt report out)
  add_test(NAME tools.ember_run.error.${opt}_empty
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 2 stderr
                   "--${opt}: expects a path, got ''" -- $<TARGET_FILE:ember-run>
                   ${CLI_IN}/relu.onnx --random-input 1 --${opt} "")
  set_tests_properties(tools.ember_run.error.${opt}_empty PROPERTIES
                       FIXTURES_REQUIRED ember_cli_inputs LABELS tools TIMEOUT 60)
endforeach()
ember_cli_error(model_is_a_device "/dev/zero: is a character device, not a file" --
                /dev/zero --random-input 1)
ember_cli_error(isa_is_a_device "/dev/zero: cannot read the description: is a character device" --
                ${CLI_IN}/relu.onnx --device sim --random-input 1 --isa /dev/zero)
ember_cli_error(report_is_an_output "y_0_out.npy: is written twice" --
                ${CLI_IN}/relu.onnx --device sim --precision int8 --random-input 1
                --out ${CMAKE_CURRENT_BINARY_DIR} --report ${CMAKE_CURRENT_BINARY_DIR}/y_0_out.npy)
ember_cli_error(bad_calibration_method "kl" --
                ${CLI_IN}/relu.onnx --precision int8 --calibration best --random-input 1)
ember_cli_error(missing_calibration_file "nope.npy" --
                ${CLI_IN}/relu.onnx --precision int8 --calibrate ${CLI_IN}/nope.npy
                --random-input 1)
# Model files.
ember_cli_error(missing_model "${CLI_IN}/nope.onnx" "No such file|cannot open" --
                ${CLI_IN}/nope.onnx --random-input 1)
ember_cli_error(truncated_onnx "truncated.onnx" -- ${CLI_IN}/truncated.onnx --random-input 1)
ember_cli_error(non_onnx_file "not_onnx.onnx" -- ${CLI_IN}/not_onnx.onnx --random-input 1)
ember_cli_error(text_file "text.onnx" -- ${CLI_IN}/text.onnx --random-input 1)
ember_cli_error(empty_file "empty.onnx" -- ${CLI_IN}/empty.onnx --random-input 1)
ember_cli_error(directory_as_model "cli_inputs" -- ${CLI_IN} --random-input 1)
ember_cli_error(unsupported_operators "unsupported" "Det" "the_det" "Frobnicate" "the_frob" --
                ${CLI_IN}/unsupported.onnx --random-input 1)
# Inputs.
ember_cli_error(wrong_input_name "no input named 'nope'" "x: float32\\[2, 3\\]" --
                ${CLI_IN}/relu.onnx --input nope=${CLI_IN}/x.npy)
ember_cli_error(input_given_twice "given twice" --
                ${CLI_IN}/relu.onnx --input x=${CLI_IN}/x.npy --input x=${CLI_IN}/x.npy)
ember_cli_error(missing_input "no value for 1 model input" "--random-input" --
                ${CLI_IN}/relu.onnx)
ember_cli_error(wrong_input_shape "x_wrong_shape.npy" "float32\\[3, 2\\]" "float32\\[2, 3\\]" --
                ${CLI_IN}/relu.onnx --input x=${CLI_IN}/x_wrong_shape.npy)
ember_cli_error(wrong_input_kind "x_wrong_kind.npy" "int32\\[2, 3\\]" --
                ${CLI_IN}/relu.onnx --input x=${CLI_IN}/x_wrong_kind.npy)
ember_cli_error(missing_npy "missing.npy" "No such file" --
                ${CLI_IN}/relu.onnx --input x=${CLI_IN}/missing.npy)
ember_cli_error(out_is_a_file "exists and is not a directory" --
                ${CLI_IN}/relu.onnx --input x=${CLI_IN}/x.npy --out ${CLI_IN}/x.npy)
ember_cli_error(nan_input_int8 "x_nan.npy \\(--input x\\): element 5 is NaN" "no int8 value" --
                ${CLI_IN}/relu.onnx --precision int8 --input x=${CLI_IN}/x_nan.npy)
ember_cli_error(endless_npy "/dev/zero: not a .npy file" --
                ${CLI_IN}/relu.onnx --input x=/dev/zero)
# Malformed or unsupported .npy files (and a float64 file for a float32 input).
set(bad_npy_kinds f8 big_endian fortran truncated bad_magic bad_dict size_mismatch)
set(bad_npy_messages "the file holds float64" "big-endian" "Fortran" "truncated .npy data"
    "bad magic" "malformed .npy header" "size mismatch")
foreach(kind message IN ZIP_LISTS bad_npy_kinds bad_npy_messages)
  ember_cli_error(npy_${kind} "x_${kind}.npy" "${message}" --
                  ${CLI_IN}/relu.onnx --input x=${CLI_IN}/x_${kind}.npy)
endforeach()

# --cycle-budget on every device that counts cycles (issue 47 item 8): ember-sim's fault
# record and default budget, the RTL stopping soon after the budget, progress on a
# terminal only. The RTL's run to the default budget takes seconds: label long.
foreach(_cb_mode fast long)
  set(_cb_name tools.ember_run.cycle_budget)
  set(_cb_extra)
  if(_cb_mode STREQUAL "long")
    set(_cb_name tools.ember_run.cycle_budget_default_rtl)
    set(_cb_extra --long)
  endif()
  add_test(NAME ${_cb_name}
           COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/run_cycle_budget_check.py
                   ${CMAKE_CURRENT_BINARY_DIR}/${_cb_name} $<TARGET_FILE:ember-run>
                   $<TARGET_FILE:ember-sim> $<TARGET_FILE:ember-as> ${CLI_IN}/relu.onnx
                   ${_cb_extra})
  set_tests_properties(${_cb_name} PROPERTIES FIXTURES_REQUIRED ember_cli_inputs
                       LABELS tools TIMEOUT 120)
endforeach()
set_tests_properties(tools.ember_run.cycle_budget_default_rtl PROPERTIES LABELS "tools;long")

# One checked path for every run (issue 47 item 1): a valid program, one whose DMA reaches
# past its memory map and one past its cycle budget get the same verdict from ember-sim,
# ember-run (sim, rtl) and ember-sim --jobs; --jobs refuses an unknown --input name,
# names the job in its errors, and counts a faulted job's NPU cycles in its platform's.
add_test(NAME tools.run_verdicts
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/run_verdicts_check.py
                 ${CMAKE_CURRENT_BINARY_DIR}/run_verdicts $<TARGET_FILE:ember-run>
                 $<TARGET_FILE:ember-sim> $<TARGET_FILE:ember-as> ${PROJECT_SOURCE_DIR}/isa/ember-v1.json)
set_tests_properties(tools.run_verdicts PROPERTIES LABELS "tools;firmware" TIMEOUT 120)

# The RTL device's energy is the simulator's model over what it retired (issue 47 item 6).
add_test(NAME tools.ember_run.device_energy
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/run_energy_check.py
                 ${CMAKE_CURRENT_BINARY_DIR}/device_energy $<TARGET_FILE:ember-run>
                 $<TARGET_FILE:ember-as> ${PROJECT_SOURCE_DIR}/tests/isa/data/conv_tile.s)
set_tests_properties(tools.ember_run.device_energy PROPERTIES LABELS tools TIMEOUT 60
                     SKIP_RETURN_CODE 77)

# Output paths (issue 16, item 1): devices and FIFOs are written through, a symbolic link's
# target is replaced (not the link), an input is never overwritten, a folder is refused
# before any work, and no temporary file is left behind. One script, every tool.
add_test(NAME tools.output_paths
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/output_paths.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/output_paths $<TARGET_FILE:emberc>
                 $<TARGET_FILE:ember-run> $<TARGET_FILE:ember-sim> $<TARGET_FILE:ember-as>
                 ${CLI_IN}/relu.onnx ${CLI_IN}/x.npy $<TARGET_FILE:ember-isa>
                 ${PROJECT_SOURCE_DIR}/isa/ember-v1.json)
set_tests_properties(tools.output_paths PROPERTIES FIXTURES_REQUIRED ember_cli_inputs
                     LABELS tools TIMEOUT 300)

# One message convention across the tools (issue 16, item 8).
add_test(NAME tools.messages
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/messages.sh ${CMAKE_CURRENT_BINARY_DIR}/messages
                 $<TARGET_FILE:emberc> $<TARGET_FILE:ember-run> $<TARGET_FILE:ember-sim>
                 $<TARGET_FILE:ember-as> $<TARGET_FILE:ember-objdump> $<TARGET_FILE:ember-isa>
                 ${CLI_IN}/relu.onnx)
set_tests_properties(tools.messages PROPERTIES FIXTURES_REQUIRED ember_cli_inputs
                     LABELS tools TIMEOUT 300)

# One command line in every tool (issue 17, item 4): --version with the description hash,
# --help, exit statuses 2 (command line), 1 (bad input) and 3 (NPU fault).
set(_cli_tools)
foreach(tool emberc ember-run ember-sim ember-dse ember-as ember-objdump ember-isa ember-conformance)
  if(TARGET ${tool})
    list(APPEND _cli_tools ${tool}=$<TARGET_FILE:${tool}>)
  endif()
endforeach()
add_test(NAME tools.cli_conventions
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_conventions.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_conventions ${PROJECT_VERSION} ${_cli_tools} --
                 ${PROJECT_SOURCE_DIR}/isa/ember-v1.json
                 ${PROJECT_SOURCE_DIR}/tests/isa/data/conv_tile.s)
set_tests_properties(tools.cli_conventions PROPERTIES LABELS tools TIMEOUT 300)
