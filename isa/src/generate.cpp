// ember-isa gen as a library call: the requested generated files, written only after every
// generator accepted the description, and the docs/isa/tables.md tables spliced or checked.
#include "ember/isa/codegen.h"
#include "ember/support/AtomicFile.h"

#include <utility>
#include <vector>

namespace ember::isa {

void checkGenerateOutputs(const GenerateRequest& r, const std::string& description) {
  for (const std::string* out : {&r.cHeader, &r.svPackage, &r.svDecoder, &r.svRegs, &r.mdTables})
    if (!out->empty())
      checkOutputFile(*out, "");
  checkNotSameFile({r.cHeader, r.svPackage, r.svDecoder, r.svRegs, r.mdTables},
                   {description, r.checkMd});
}

std::string generateFiles(const GenerateRequest& r, const IsaDescription& isa) {
  // Everything is generated before the first file is written, so a generator that
  // rejects the description leaves no output behind.
  std::vector<std::pair<std::string, std::string>> outs;
  if (!r.cHeader.empty())
    outs.emplace_back(r.cHeader, generateCHeader(isa));
  if (!r.svPackage.empty())
    outs.emplace_back(r.svPackage, generateSvPackage(isa));
  if (!r.svDecoder.empty())
    outs.emplace_back(r.svDecoder, generateSvDecoder(isa));
  if (!r.svRegs.empty())
    outs.emplace_back(r.svRegs, generateSvRegs(isa));
  const std::string tables = generateMarkdownTables(isa);
  if (!r.mdTables.empty())
    outs.emplace_back(r.mdTables, tables);
  for (const auto& [path, text] : outs)
    writeFileAtomic(path, text.data(), text.size());
  if (!r.updateMd.empty()) {
    const std::string doc = readFileBytes(r.updateMd);
    const std::string out = spliceMarkdown(doc, tables, r.updateMd);
    if (out != doc)
      writeFileAtomic(r.updateMd, out.data(), out.size());
  }
  if (!r.checkMd.empty() && extractMarkdown(readFileBytes(r.checkMd), r.checkMd) != tables)
    return r.checkMd + ": the generated tables differ from " + isa.file() +
           "; run: ember-isa gen --isa " + isa.file() + " --update-md " + r.checkMd;
  return "";
}

} // namespace ember::isa
