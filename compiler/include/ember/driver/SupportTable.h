#pragma once
/// \file
/// What each part of Ember has for every node kind, in one table: the kind's traits
/// (OpInfo), the interpreter's kernels, the quantizer's int8 rule, and what every
/// backend of this build and the NPU have for it (Backend::kindSupport). It is generated
/// into docs/compiler/operators.md between markers, and a test keeps the two equal, so the table a
/// user reads is the one the code answers.

#include <string>

namespace ember::driver {

/// The markers of the generated block in docs/compiler/operators.md.
constexpr const char* kSupportTableBegin =
    "<!-- BEGIN GENERATED OPERATOR TABLE: `emberc --op-table`; do not edit by hand -->\n";
constexpr const char* kSupportTableEnd = "<!-- END GENERATED OPERATOR TABLE -->";

/// The table (Markdown), one row per node kind.
std::string operatorSupportTable();

/// `doc` with the block between the markers replaced by `table` (ember::Error naming
/// `docPath` when the markers are missing).
std::string withSupportTable(const std::string& doc, const std::string& table,
                             const std::string& docPath);

} // namespace ember::driver
