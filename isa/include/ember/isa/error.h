// The one exception type of libember_isa.
#pragma once

#include <stdexcept>
#include <string>

namespace ember::isa {

/// Every failure of libember_isa (bad description, bad assembly, bad binary, I/O) is an
/// `Error`. It names the file, the location inside it (a JSON pointer such as
/// `/instructions/3/fields/n0`, an assembly `line 12`, or an ELF `section .ember.io`) and
/// the reason, so a user can fix the input without reading code. `what()` is
/// `FILE: WHERE: REASON` (the `WHERE: ` part is left out when empty). Tools catch it,
/// print `what()` to stderr and exit with status 1.
class Error : public std::runtime_error {
public:
  Error(std::string file, std::string where, std::string reason);

  /// The file (or a label such as `<string>`) the error is about.
  const std::string& file() const { return file_; }
  /// Location inside the file: JSON pointer, `line N`, `section NAME`, ...
  const std::string& where() const { return where_; }
  /// Why the input was rejected.
  const std::string& reason() const { return reason_; }

private:
  std::string file_, where_, reason_;
};

} // namespace ember::isa
