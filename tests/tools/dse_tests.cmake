# ember-dse (runtime/session/dse and tools/ember-dse, docs/extending-isa.md section 4): its design space and
# outputs as unit tests; its command line (a bad axis, pointer or value is exit status 2
# naming it); a sweep with an invalid point (a row with the validator's message, CSV and
# HTML written); --check naming a failing description and how to reproduce it.
ember_add_gtest(ember_dse_tests DseTest.cpp LIBS ember_dse)

set(_dse $<TARGET_FILE:ember-dse>)
set(_dse_out ${CMAKE_CURRENT_BINARY_DIR}/dse)
set(_usage ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 2 stderr)
# name | expected stderr | arguments (no model is read: the command line fails first)
add_test(NAME tools.ember_dse.usage.unknown_axis
         COMMAND ${_usage} "--axis 'frob=1'" "unknown axis 'frob'" "see ember-dse --help"
                 -- ${_dse} none.onnx --axis frob=1 --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.usage.missing_pointer
         COMMAND ${_usage} "/hardware/dma/nope" "no value at /hardware/dma/nope"
                 -- ${_dse} none.onnx --axis /hardware/dma/nope=1,2 --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.usage.bad_value
         COMMAND ${_usage} "axis 'act_kib' expects whole numbers, got 'big'"
                 -- ${_dse} none.onnx --axis act_kib=64,big --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.usage.no_values
         COMMAND ${_usage} "--axis 'array='" "expects NAME=V1,V2"
                 -- ${_dse} none.onnx --axis array= --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.usage.random_and_axes
         COMMAND ${_usage} "--random: draws its own descriptions"
                 -- ${_dse} none.onnx --random 2 --axis array=8 --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.usage.bad_sram
         COMMAND ${_usage} "--min-kib wgt=8" "unknown SRAM 'wgt'"
                 -- ${_dse} none.onnx --random 2 --min-kib wgt=8 --out ${_dse_out}/usage)
add_test(NAME tools.ember_dse.help
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 0 stdout "Usage: ember-dse"
                 "--random" "axes \\(--axis NAME=...\\)" "weight_kib" -- ${_dse} --help)
add_test(NAME tools.ember_dse.usage.area_options
         COMMAND ${_usage} "--area-cache, --yosys and --rtl" "give --area too"
                 -- ${_dse} none.onnx --area-cache cache --out ${_dse_out}/usage)
set_tests_properties(tools.ember_dse.usage.area_options PROPERTIES LABELS tools TIMEOUT 60)
set_tests_properties(tools.ember_dse.usage.unknown_axis tools.ember_dse.usage.missing_pointer
                     tools.ember_dse.usage.bad_value tools.ember_dse.usage.no_values
                     tools.ember_dse.usage.random_and_axes tools.ember_dse.usage.bad_sram
                     tools.ember_dse.help PROPERTIES LABELS tools TIMEOUT 60)

# LeNet of the 32 x 32 zoo (tests/models: dse.sweep.export; LeNet keeps its 28 x 28 input).
set(_zoo32 ${CMAKE_BINARY_DIR}/models-32)
set(_lenet ${_zoo32}/lenet/model.onnx)
add_test(NAME tools.ember_dse.invalid_point_row
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dse_outputs.sh ${_dse} ${_lenet}
                 ${_dse_out}/invalid_point)
# --check: an invalid description is a failure (exit 1) naming the file and a command
# that reproduces it; the valid point alone passes.
add_test(NAME tools.ember_dse.check_names_failure
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 1 stderr
                 "ember-dse --check: 1 of 2 runs failed"
                 "point 0 \\(.*/descriptions/p0.json\\) lenet: invalid: .*act/size_bytes"
                 "reproduce: ember-run .*lenet/model.onnx --isa .*p0.json"
                 -- ${_dse} ${_lenet} --axis act_kib=3,64 --check --out ${_dse_out}/check_fail
                    --no-progress)
add_test(NAME tools.ember_dse.check_random
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 0 stdout "3 of 3 runs ok"
                 -- ${_dse} ${_lenet} --random 3 --seed 11 --check --jobs 2
                    ${EMBER_DSE_SWEEP_RANGES} --out ${_dse_out}/check_random --no-progress)
# A model refused for the description's sizes: MobileNetV3's activation x activation Mul
# needs two acc rows, and this point has one (64 bytes in one bank). The row is too-small
# with the size at which it compiles, found by growing the SRAMs; --check passes.
add_test(NAME tools.ember_dse.too_small_names_the_sizes
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 0 stdout
                 "0 of 1 runs ok, 1 refused as too small"
                 "mobilenet_v3_small: too-small: compiles with acc 128 B \\(has 64 B\\); on this description: 9 node\\(s\\) of the quantized model"
                 -- ${_dse} ${_zoo32}/mobilenet_v3_small/model.onnx
                    --axis /hardware/memories/acc/size_bytes=64
                    --axis /hardware/memories/acc/banks=1 --check --no-progress
                    --out ${_dse_out}/too_small)
set_tests_properties(tools.ember_dse.invalid_point_row tools.ember_dse.check_names_failure
                     tools.ember_dse.check_random tools.ember_dse.too_small_names_the_sizes PROPERTIES
                     LABELS tools FIXTURES_REQUIRED ember_model_zoo_32 TIMEOUT 300)

# Each instruction has its own count fields: with vsub, vmul and requant narrower than vadd
# (n0 of 3 bits), Add, Mul (squeeze-and-excitation) and Rescale must chunk their rows for
# every instruction they emit (they chunked for one and failed to encode the others).
add_test(NAME tools.ember_dse.narrow_count_fields
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh 0 stdout "3 of 3 runs ok"
                 -- ${_dse} ${_zoo32}/resnet18/model.onnx ${_zoo32}/efficientnet_b0/model.onnx
                    ${_zoo32}/mobilenet_v3_small/model.onnx
                    --axis /instructions/4/fields/n0/width=3 --axis /instructions/5/fields/n0/width=3
                    --axis /instructions/11/fields/n0/width=3 --check --no-progress
                    --out ${_dse_out}/narrow_count_fields)
set_tests_properties(tools.ember_dse.narrow_count_fields PROPERTIES
                     LABELS "tools;dse" FIXTURES_REQUIRED ember_model_zoo_32 TIMEOUT 300)

# --area (docs/extending-isa.md section 4, "Area"): a tiny sweep whose valid points are
# synthesized by Yosys (4 x 4 and 8 x 8 arrays with queues of 2), area filled and growing
# with the array as the closed forms say, a second run all from the cache (no synthesis),
# a failing synthesis named per point, no Yosys named. Labels rtl (it needs Yosys, as the
# rtl tests do; skipped without it) and long. Even the smallest NPU is about 2.5 minutes
# of Yosys CPU (the test took 652 s on a loaded 2-core machine), more than the whole
# suite can spend, so it is registered only with -DEMBER_SYNTH_TESTS=ON; the cache and
# failure logic run in every suite in seconds with a stand-in for area.py
# (ember_dse_tests, DseArea.*).
option(EMBER_SYNTH_TESTS "Register tests that synthesize several NPUs with Yosys (minutes each)"
       OFF)
find_program(EMBER_YOSYS yosys)
if(EMBER_YOSYS AND EMBER_SYNTH_TESTS)
  add_test(NAME tools.ember_dse.area
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dse_area.sh ${_dse} ${EMBER_YOSYS}
                   ${EMBER_PYTHON} ${_lenet} ${_dse_out}/area)
  set_tests_properties(tools.ember_dse.area PROPERTIES LABELS "tools;rtl;long"
                       FIXTURES_REQUIRED ember_model_zoo_32 TIMEOUT 1500)
endif()

# The Dask engine (docs/dse.md, issue 44): a real scheduler and two workers on 127.0.0.1
# (free ports, killed in every case), a 27-point sweep over two tiny models compared with
# the local run's CSV byte for byte (rows sorted, host_seconds blanked), an interrupted
# sweep resumed (only the rest evaluated), ember.dse.sweep(client=...), and a worker
# killed mid-sweep (every row once). Skipped (77) without python3-distributed.
if(EMBER_PYTHON_PATH)
  add_test(NAME tools.ember_dse.dask
           COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dse_dask_check.py ${_dse}
                   ${_dse_out}/dask)
  set_tests_properties(tools.ember_dse.dask PROPERTIES LABELS "tools;dse;python" TIMEOUT 300
                       SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=${EMBER_PYTHON_PATH}")
endif()

# Rows say what their points are (issue 47, item 7): an axis given twice, or two axes on
# one field, is refused naming both (exit 2; ember-dse, its Python sweep and search); a
# sweep whose points 1 and 4 fail to compile (a DRAM window too small) has one row per
# point in order, the failed ones with their reason, under --jobs 1, --jobs 2 and Dask.
set(_rows_python)
if(EMBER_PYTHON_PATH)
  set(_rows_python --python ${EMBER_PYTHON})
endif()
add_test(NAME tools.ember_dse.rows
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dse_rows_check.py --dse ${_dse}
                 --model ${_lenet} --out ${_dse_out}/rows ${_rows_python})
set_tests_properties(tools.ember_dse.rows PROPERTIES LABELS "tools;dse" TIMEOUT 600
                     FIXTURES_REQUIRED ember_model_zoo_32
                     ENVIRONMENT "PYTHONPATH=${EMBER_PYTHON_PATH}")
