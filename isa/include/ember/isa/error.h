// The exception type of libember_isa.
#pragma once

#include "ember/support/Error.h"

#include <exception>
#include <string>

namespace ember::isa {

/// Every failure of libember_isa (bad description, bad assembly, bad binary, I/O) is an
/// `Error`. It names the file, the location inside it (a JSON pointer such as
/// `/instructions/3/fields/n0`, an assembly `line 12`, or an ELF `section .ember.io`) and
/// the reason, so a user can fix the input without reading code. `what()` is
/// `FILE: WHERE: REASON` (the `WHERE: ` part is left out when empty). It is an
/// `ember::Error` (whose `where()` is `FILE: WHERE`), so tools catch both with one
/// handler (ember/support/ToolMain.h) and exit with status 1.
class Error : public ember::Error {
public:
  Error(std::string file, std::string where, std::string reason);

  /// The file (or a label such as `<string>`) the error is about.
  const std::string& file() const { return file_; }
  /// Location inside the file: JSON pointer, `line N`, `section NAME`, ... (without the
  /// file; ember::Error::where() has both).
  const std::string& where() const { return where_; }

private:
  std::string file_, where_;
};

/// A JSON library exception (nlohmann::json's `what()`, "[json.exception.parse_error.101]
/// parse error at line 3, column 7: syntax error ...") as an Error about `file`: the
/// bracketed tag never reaches the user; a parse error's "line L, column C" becomes the
/// place, the rest the reason. `context` ("not valid JSON", "malformed description")
/// opens the reason.
Error jsonError(const std::string& file, const std::string& context, const std::exception& e);

} // namespace ember::isa
