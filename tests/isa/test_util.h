// Shared helpers of the isa tests.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace ember::isa::test {

/// Absolute path of a file in the source tree.
std::string sourcePath(const std::string& rel);
/// Text of a file.
std::string readText(const std::string& path);
/// A fresh path in the test build folder.
std::string tempPath(const std::string& name);
/// The reference description and the vendor variant (loaded once).
const IsaDescription& reference();
const IsaDescription& large();
/// The reference description's JSON document.
nlohmann::json referenceJson();

/// Runs `fn` and expects an Error whose where() equals `where` and whose reason contains
/// `reason_part`.
#define EXPECT_ISA_ERROR(stmt, where_, reason_part)                                                \
  do {                                                                                             \
    try {                                                                                          \
      stmt;                                                                                        \
      ADD_FAILURE() << "no ember::isa::Error thrown";                                              \
    } catch (const ::ember::isa::Error& e_) {                                                      \
      EXPECT_EQ(e_.where(), std::string(where_)) << e_.what();                                     \
      EXPECT_NE(e_.reason().find(reason_part), std::string::npos) << e_.what();                    \
    }                                                                                              \
  } while (0)

} // namespace ember::isa::test
