// Internal to libember_isa: pieces the SystemVerilog generators share with codegen.cpp.
#pragma once

#include "ember/isa/description.h"

#include <string>
#include <vector>

namespace ember::isa {

/// One field role in the union over all instructions of a description: the decoder's
/// `<role>_o` port.
struct SvRole {
  std::string name;
  unsigned width = 0;           ///< Widest field of the role (+1 for an unsigned field
                                ///< when the role is signed elsewhere).
  bool is_signed = false;       ///< Some instruction's field of this role is signed.
  std::size_t instructions = 0; ///< Instructions that have the role.
};

/// Roles in first-appearance order (instruction order, then field order).
std::vector<SvRole> svRoles(const IsaDescription& isa);
/// The decoder's localparams (INSTR_BITS, CLS_*, VOP_*, INSN_*_IDX, OPC_*, MEMORIES_*,
/// TABLE_OFFSET_*, BACKGROUND_*, ROLE_*), as
/// package body lines. Throws Error if two generated names clash.
std::string svPackageDecodeParams(const IsaDescription& isa);
/// Lower-case identifier (anything but letters/digits becomes '_').
std::string svLower(const std::string& s);

} // namespace ember::isa
