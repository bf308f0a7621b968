# Dynamic dimensions and bound inputs from the command line (issue 42, item 4): a model
# exported by PyTorch with a dynamic batch axis runs at the batch of its --input .npy or of
# --input-shape on interp, cpu and sim, emberc compiles it with --input-shape, --bind folds
# shape operands into constants, and every bad value is refused with the option, the input
# and the reason. The models are generated into the build folder (gen_dynamic_models.py).
set(DYN ${CMAKE_CURRENT_BINARY_DIR}/dynamic_inputs)
set(DYN_OUT ${CMAKE_CURRENT_BINARY_DIR}/dynamic_outputs)
set(RUN_AND_COMPARE ${PROJECT_SOURCE_DIR}/tests/models/run_and_compare.py)

add_test(NAME tools.dynamic.models
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gen_dynamic_models.py ${DYN})
set_tests_properties(tools.dynamic.models PROPERTIES FIXTURES_SETUP ember_dynamic_models
                     LABELS tools TIMEOUT 300)

# ember_dyn_expect(NAME STATUS STREAM REGEX... -- COMMAND ARGS...): COMMAND must exit with
# STATUS and its STREAM match every REGEX (expect_run.sh).
function(ember_dyn_expect name status stream)
  add_test(NAME tools.dynamic.${name}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh ${status} ${stream} ${ARGN})
  set_tests_properties(tools.dynamic.${name} PROPERTIES FIXTURES_REQUIRED ember_dynamic_models
                       LABELS tools TIMEOUT 300)
endfunction()

# Float: batch 1 and 3 from the --input file alone, against PyTorch's outputs.
set(dyn_float_devices interp)
if(TARGET ember_cpu)
  list(APPEND dyn_float_devices cpu)
endif()
foreach(device ${dyn_float_devices})
  foreach(batch 1 3)
    add_test(NAME tools.dynamic.${device}.batch${batch}
             COMMAND ${EMBER_PYTHON} ${RUN_AND_COMPARE} --ember-run $<TARGET_FILE:ember-run>
                     --model ${DYN}/dyn_cnn.onnx --device ${device}
                     --out ${DYN_OUT}/${device}_b${batch} --input input=${DYN}/x${batch}.npy
                     --expected output=${DYN}/expected${batch}.npy --rel 1e-4)
    set_tests_properties(tools.dynamic.${device}.batch${batch} PROPERTIES
                         FIXTURES_REQUIRED ember_dynamic_models LABELS tools TIMEOUT 300)
  endforeach()
endforeach()

# int8: batch 1 and 3 on interp, cpu and sim (the NPU compiled for that batch), bit-exact.
set(dyn_int8_devices interp,sim)
set(dyn_int8_lines "^  output +sim +yes +0 ")
if(TARGET ember_cpu)
  set(dyn_int8_devices interp,cpu,sim)
  list(APPEND dyn_int8_lines "^  output +cpu +yes +0 ")
endif()
foreach(batch 1 3)
  ember_dyn_expect(int8.batch${batch} 0 stdout "output output: float32\\[${batch}, 10\\]"
                   ${dyn_int8_lines} --
                   $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input input=${DYN}/x${batch}.npy
                   --compare ${dyn_int8_devices} --precision int8)
endforeach()
# --input-shape decides the batch where no file does.
ember_dyn_expect(run_input_shape 0 stdout "output output: float32\\[3, 10\\]" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input-shape input=3x3x16x16
                 --random-input 1)

# emberc --input-shape: the binary for batch 3 runs the batch-3 file on the simulated NPU
# and gives the codes ember-run's sim device gives for the model itself.
add_test(NAME tools.dynamic.emberc_batch3
         COMMAND ${EMBER_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dynamic_batch_check.py
                 --emberc $<TARGET_FILE:emberc> --ember-run $<TARGET_FILE:ember-run>
                 --objdump $<TARGET_FILE:ember-objdump>
                 --model ${DYN}/dyn_cnn.onnx --input ${DYN}/x3.npy --out ${DYN_OUT}/emberc_b3)
set_tests_properties(tools.dynamic.emberc_batch3 PROPERTIES
                     FIXTURES_REQUIRED ember_dynamic_models LABELS tools TIMEOUT 300)

# --bind: a Reshape target and Resize scales that arrive as graph inputs.
add_test(NAME tools.dynamic.bind_reshape
         COMMAND ${EMBER_PYTHON} ${RUN_AND_COMPARE} --ember-run $<TARGET_FILE:ember-run>
                 --model ${DYN}/reshape_bind.onnx --out ${DYN_OUT}/bind_reshape
                 --input x=${DYN}/x.npy --extra=--bind --extra=shape=${DYN}/shape.npy
                 --expected y=${DYN}/reshape_expected.npy --exact)
add_test(NAME tools.dynamic.bind_resize
         COMMAND ${EMBER_PYTHON} ${RUN_AND_COMPARE} --ember-run $<TARGET_FILE:ember-run>
                 --model ${DYN}/resize_bind.onnx --out ${DYN_OUT}/bind_resize
                 --input x=${DYN}/rx.npy --extra=--bind --extra=scales=${DYN}/scales.npy
                 --expected y=${DYN}/resize_expected.npy --exact)
set_tests_properties(tools.dynamic.bind_reshape tools.dynamic.bind_resize PROPERTIES
                     FIXTURES_REQUIRED ember_dynamic_models LABELS tools TIMEOUT 300)
ember_dyn_expect(emberc_bind 0 stdout "wrote (NPU binary|package)" --
                 $<TARGET_FILE:emberc> ${DYN}/resize_bind.onnx -o ${DYN_OUT}/resize_bind.out
                 --bind scales=${DYN}/scales.npy)

# Errors: the option that exists, the input and the reason.
set(dyn_advice "dimension 0 is unknown \\('batch'\\); give its shape with --input-shape input=1x3x16x16")
ember_dyn_expect(unknown_dim_run 1 stderr "input 'input'" "${dyn_advice}, or an input .npy" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --random-input 1)
ember_dyn_expect(unknown_dim_emberc 1 stderr "input 'input'" "${dyn_advice}$" --
                 $<TARGET_FILE:emberc> ${DYN}/dyn_cnn.onnx -o ${DYN_OUT}/never.elf)
ember_dyn_expect(shape_not_numeric 2 stderr
                 "--input-shape: input=1xAx16x16: dimension 1 of input 'input' is 'A', not a whole number" --
                 $<TARGET_FILE:emberc> ${DYN}/dyn_cnn.onnx -o ${DYN_OUT}/never.elf
                 --input-shape input=1xAx16x16)
ember_dyn_expect(shape_zero 2 stderr
                 "--input-shape: input=0x3x16x16: dimension 0 of input 'input' is 0; every dimension must be at least 1" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input-shape input=0x3x16x16
                 --random-input 1)
ember_dyn_expect(shape_no_name 2 stderr "--input-shape: expects NAME=DxDx" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input-shape 1x3x16x16)
ember_dyn_expect(shape_twice 2 stderr "input 'input' is given a shape twice" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input-shape input=1x3x16x16
                 --input-shape input=2x3x16x16 --random-input 1)
ember_dyn_expect(shape_unknown_name 1 stderr
                 "--input-shape nope=1x3: the model has no input named 'nope' \\(its inputs: input: float32\\[batch, 3, 16, 16\\]\\)" --
                 $<TARGET_FILE:emberc> ${DYN}/dyn_cnn.onnx -o ${DYN_OUT}/never.elf
                 --input-shape nope=1x3)
ember_dyn_expect(shape_rank 1 stderr
                 "--input-shape input=3x16x16: the shape has rank 3, the model's input 'input' is float32\\[batch, 3, 16, 16\\] \\(rank 4\\)" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input-shape input=3x16x16
                 --random-input 1)
ember_dyn_expect(shape_contradicts 1 stderr
                 "--input-shape input=1x4x16x16: dimension 1 is 4, but the model's input 'input' is float32\\[batch, 3, 16, 16\\]" --
                 $<TARGET_FILE:emberc> ${DYN}/dyn_cnn.onnx -o ${DYN_OUT}/never.elf
                 --input-shape input=1x4x16x16)
ember_dyn_expect(input_rank 1 stderr
                 "--input input=.*x_rank3.npy: the value's shape \\[3, 16, 16\\] has rank 3, the model's input 'input' is float32\\[batch, 3, 16, 16\\] \\(rank 4\\)" --
                 $<TARGET_FILE:ember-run> ${DYN}/dyn_cnn.onnx --input input=${DYN}/x_rank3.npy)
ember_dyn_expect(bind_wrong_kind 1 stderr
                 "--bind shape=.*shape_f32.npy: the value is float32\\[2\\], the model's input 'shape' is int64\\[2\\]" --
                 $<TARGET_FILE:ember-run> ${DYN}/reshape_bind.onnx --input x=${DYN}/x.npy
                 --bind shape=${DYN}/shape_f32.npy)
ember_dyn_expect(bind_unknown_name 1 stderr "--bind nope=.*: the model has no input named 'nope'" --
                 $<TARGET_FILE:emberc> ${DYN}/reshape_bind.onnx -o ${DYN_OUT}/never.elf
                 --bind nope=${DYN}/shape.npy)
ember_dyn_expect(bind_and_input 1 stderr "input 'shape' is also bound to a constant" --
                 $<TARGET_FILE:ember-run> ${DYN}/reshape_bind.onnx --input x=${DYN}/x.npy
                 --bind shape=${DYN}/shape.npy --input shape=${DYN}/shape.npy)
ember_dyn_expect(bind_missing_file 1 stderr "nope.npy" --
                 $<TARGET_FILE:emberc> ${DYN}/reshape_bind.onnx -o ${DYN_OUT}/never.elf
                 --bind shape=${DYN}/nope.npy)
# A shape operand that arrives as an input, without --bind: the message names it.
ember_dyn_expect(shape_operand_unbound 1 stderr "must be known at compile time" "--bind" --
                 $<TARGET_FILE:ember-run> ${DYN}/reshape_bind.onnx --input x=${DYN}/x.npy
                 --input shape=${DYN}/shape.npy)
if(TARGET ember-dse)
  ember_dyn_expect(dse_shape_zero 2 stderr "--input-shape: input=1x0x16x16: dimension 1 of input 'input' is 0" --
                   $<TARGET_FILE:ember-dse> ${DYN}/dyn_cnn.onnx --axis array=8
                   --input-shape input=1x0x16x16 --out ${DYN_OUT}/dse)
  ember_dyn_expect(dse_unknown_dim 1 stderr "give its shape with --input-shape input=1x3x16x16" --
                   $<TARGET_FILE:ember-dse> ${DYN}/dyn_cnn.onnx --axis array=8 --out ${DYN_OUT}/dse)
  ember_dyn_expect(dse_input_shape 0 stdout "dyn_cnn" --
                   $<TARGET_FILE:ember-dse> ${DYN}/dyn_cnn.onnx --axis array=8
                   --input-shape input=2x3x16x16 --out ${DYN_OUT}/dse --no-progress)
endif()
