# cmake -DINPUT=libjit.bc -DOUTPUT=LibjitBitcode.cpp -P EmbedBitcode.cmake
# Writes the bitcode as a byte array the cpu backend links into its library.
file(READ ${INPUT} _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _bytes "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _array "${_hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" _array "${_array}")
file(WRITE ${OUTPUT}
  "// Generated from libjit.bc by EmbedBitcode.cmake: do not edit.\n"
  "#include <cstddef>\n"
  "namespace ember::cpu {\n"
  "extern const unsigned char kLibjitBitcode[] = {\n${_array}\n};\n"
  "extern const size_t kLibjitBitcodeSize = ${_bytes};\n"
  "}\n")
