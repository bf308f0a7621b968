// AOT bundles: the module ModuleGen generates for the JIT, plus a C entry point that
// fills the environment (no barrier: one thread) and reports the first raised error
// flag, compiled to a PIC object; the header describes the regions; the weights file is
// the constant region.
#include "ember/cpu/Bundle.h"

#include "Jit.h"
#include "ModuleGen.h"

#include "ember/lir/IRGen.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/TargetParser/Host.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>

namespace ember {
namespace cpu {
namespace {

bool isCIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

/// Upper-case C identifier characters of an I/O name (others become '_').
std::string macroPart(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_';
  return out;
}

const char* cType(ElemKind k) {
  switch (k) {
  case ElemKind::Float32:
    return "float";
  case ElemKind::Int8:
    return "int8_t";
  case ElemKind::Int32:
    return "int32_t";
  case ElemKind::Int64:
    return "int64_t";
  case ElemKind::Bool:
    return "uint8_t";
  case ElemKind::Float64:
    return "double";
  case ElemKind::Float16:
    return "uint16_t"; // binary16 bits
  case ElemKind::UInt8:
    return "uint8_t";
  case ElemKind::Int16:
    return "int16_t";
  case ElemKind::UInt16:
    return "uint16_t";
  case ElemKind::UInt32:
    return "uint32_t";
  case ElemKind::UInt64:
    return "uint64_t";
  }
  return "uint8_t";
}

/// The bundle's C entry points (see the header text): NAME_run_thread, NAME_first_error,
/// NAME_run (one thread: no barrier, flags on its stack) and NAME_error_message.
void addEntryPoints(GeneratedModule& g, const std::string& name) {
  llvm::Module& m = *g.module;
  llvm::LLVMContext& c = *g.context;
  auto* ptr = llvm::PointerType::get(c, 0);
  auto* i32 = llvm::Type::getInt32Ty(c);
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* voidTy = llvm::Type::getVoidTy(c);
  auto* noBarrier =
      llvm::Function::Create(llvm::FunctionType::get(voidTy, {ptr}, false),
                             llvm::GlobalValue::InternalLinkage, "ember_no_barrier", m);
  llvm::IRBuilder<> nb(llvm::BasicBlock::Create(c, "entry", noBarrier));
  nb.CreateRetVoid();

  // void NAME_run_thread(constants, io, activations, scratch, errors, tid, nth, barrier, arg)
  auto* thread = llvm::Function::Create(
      llvm::FunctionType::get(voidTy, {ptr, ptr, ptr, ptr, ptr, i64, i64, ptr, ptr}, false),
      llvm::GlobalValue::ExternalLinkage, name + "_run_thread", m);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", thread));
    auto* env = b.CreateAlloca(llvm::ArrayType::get(ptr, kEnvFields));
    const EnvField fields[] = {kEnvConstants, kEnvIo,      kEnvActivations, kEnvScratch,
                               kEnvErrors,    kEnvBarrier, kEnvTeam};
    const unsigned args[] = {0, 1, 2, 3, 4, 7, 8};
    for (size_t i = 0; i < 7; ++i)
      b.CreateStore(thread->getArg(args[i]), b.CreateConstInBoundsGEP1_64(ptr, env, fields[i]));
    // The static schedule of libjit/Schedule.cpp: parts in turn, a barrier per wait.
    const std::pair<EnvField, const char*> schedule[] = {{kEnvRunNode, "ember_static_run_node"},
                                                         {kEnvWaitNodes, "ember_static_wait"}};
    for (const auto& [field, symbol] : schedule) {
      llvm::Function* f = m.getFunction(symbol);
      if (!f)
        throw Error("cpu backend", std::string("libjit has no '") + symbol + "'");
      b.CreateStore(f, b.CreateConstInBoundsGEP1_64(ptr, env, field));
    }
    b.CreateCall(m.getFunction(kRunSymbol), {env, thread->getArg(5), thread->getArg(6)});
    b.CreateRetVoid();
  }

  // int32_t NAME_first_error(const int32_t* errors): 0, or the first raised flag + 1.
  auto* first =
      llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                             llvm::GlobalValue::ExternalLinkage, name + "_first_error", m);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", first));
    llvm::Value* code = b.getInt32(0);
    for (size_t i = g.errors.size(); i-- > 0;) {
      llvm::Value* flag = b.CreateLoad(i32, b.CreateConstInBoundsGEP1_64(i32, first->getArg(0), i));
      code = b.CreateSelect(b.CreateICmpNE(flag, b.getInt32(0)), b.getInt32(int32_t(i + 1)), code);
    }
    b.CreateRet(code);
  }

  // int32_t NAME_run(constants, io, activations, scratch): one thread.
  auto* run = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false),
                                     llvm::GlobalValue::ExternalLinkage, name + "_run", m);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", run));
    const size_t flags = std::max<size_t>(g.errors.size(), 1);
    auto* flagArray = b.CreateAlloca(llvm::ArrayType::get(i32, flags));
    b.CreateMemSet(flagArray, b.getInt8(0), flags * sizeof(int32_t), llvm::MaybeAlign(4));
    b.CreateCall(thread,
                 {run->getArg(0), run->getArg(1), run->getArg(2), run->getArg(3), flagArray,
                  b.getInt64(0), b.getInt64(1), noBarrier, llvm::ConstantPointerNull::get(ptr)});
    b.CreateRet(b.CreateCall(first, {flagArray}));
  }

  auto* message =
      llvm::Function::Create(llvm::FunctionType::get(ptr, {i32}, false),
                             llvm::GlobalValue::ExternalLinkage, name + "_error_message", m);
  llvm::IRBuilder<> mb(llvm::BasicBlock::Create(c, "entry", message));
  std::vector<llvm::Constant*> texts = {mb.CreateGlobalString("no error", "ember.msg")};
  for (const ErrorSite& e : g.errors)
    texts.push_back(mb.CreateGlobalString(e.where + ": " + e.reason, "ember.msg"));
  texts.push_back(mb.CreateGlobalString("unknown error code", "ember.msg"));
  auto* tableTy = llvm::ArrayType::get(ptr, texts.size());
  auto* table = new llvm::GlobalVariable(m, tableTy, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(tableTy, texts), "ember.msgs");
  llvm::Value* k = mb.CreateZExt(message->getArg(0), i64);
  llvm::Value* inRange = mb.CreateICmpULT(k, mb.getInt64(texts.size() - 1));
  k = mb.CreateSelect(inRange, k, mb.getInt64(texts.size() - 1));
  mb.CreateRet(mb.CreateLoad(ptr, mb.CreateInBoundsGEP(tableTy, table, {mb.getInt64(0), k})));
}

void ioMacros(std::ostream& os, const std::string& prefix, const char* what,
              const std::vector<IoBuffer>& list) {
  std::map<std::string, int> uses;
  for (const IoBuffer& b : list)
    ++uses[macroPart(b.name)];
  os << "#define " << prefix << "_NUM_" << what << "S " << list.size() << "\n";
  for (size_t i = 0; i < list.size(); ++i) {
    const IoBuffer& b = list[i];
    std::ostringstream dims;
    for (size_t d = 0; d < b.type.dims.size(); ++d)
      dims << (d ? ", " : "") << b.type.dims[d];
    os << "\n/* " << (what[0] == 'I' ? "input " : "output ") << i << ": \"" << b.name << "\", "
       << elemKindName(b.type.kind) << " [" << dims.str() << "] (" << cType(b.type.kind)
       << " elements, row-major)";
    if (b.type.quant.isQuantized())
      os << ", quantized";
    os << " */\n";
    std::vector<std::string> stems = {prefix + "_" + what + std::to_string(i)};
    if (uses[macroPart(b.name)] == 1)
      stems.push_back(prefix + "_" + what + "_" + macroPart(b.name));
    for (const std::string& s : stems) {
      os << "#define " << s << "_NAME \"" << b.name << "\"\n";
      os << "#define " << s << "_OFFSET " << b.offset << "\n";
      os << "#define " << s << "_BYTES " << b.type.sizeInBytes() << "\n";
      os << "#define " << s << "_ELEMENTS " << b.type.size() << "\n";
    }
  }
}

std::string header(const GeneratedModule& g, const std::string& name, const std::string& source,
                   size_t scratchBytes) {
  const std::string P = macroPart(name);
  std::ostringstream os;
  os << "/* " << name << ".h: ahead-of-time bundle of '" << source
     << "', generated by the Ember cpu backend. Do not edit.\n"
     << " *\n"
     << " * Link " << name << ".o and libm. The code is built for the compiling host ("
     << llvm::sys::getProcessTriple() << ", cpu " << llvm::sys::getHostCPUName().str() << ").\n"
     << " * The caller owns every region, each " << kRegionAlignment << "-byte aligned:\n"
     << " *   constants    " << P << "_CONSTANT_BYTES    the bytes of " << name
     << ".weights (read only)\n"
     << " *   io           " << P << "_IO_BYTES          inputs and outputs at the offsets below\n"
     << " *   activations  " << P << "_ACTIVATION_BYTES  intermediate tensors\n"
     << " *   scratch      " << P << "_SCRATCH_BYTES     kernel scratch\n"
     << " * " << name << "_run() runs on the calling thread, " << name
     << "_run_thread() on threads of yours;\n"
     << " * both may be called again and again.\n"
     << " */\n"
     << "#ifndef " << P << "_BUNDLE_H\n#define " << P << "_BUNDLE_H\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "#define " << P << "_ALIGNMENT " << kRegionAlignment << "\n"
     << "#define " << P << "_CONSTANT_BYTES " << g.constants.size() << "\n"
     << "#define " << P << "_IO_BYTES " << g.ioBytes << "\n"
     << "#define " << P << "_ACTIVATION_BYTES " << g.activationBytes << "\n"
     << "#define " << P << "_SCRATCH_BYTES " << scratchBytes << "\n"
     << "#define " << P << "_ERROR_FLAGS " << std::max<size_t>(g.errors.size(), 1) << "\n\n";
  ioMacros(os, P, "INPUT", g.inputs);
  os << "\n";
  ioMacros(os, P, "OUTPUT", g.outputs);
  os << "\n/* Runs the model: reads the inputs from io, writes the outputs into io. Returns 0,\n"
     << " * or k > 0 when a run-time error occurred (see " << name << "_error_message). */\n"
     << "int32_t " << name
     << "_run(const uint8_t* constants, uint8_t* io, uint8_t* activations, uint8_t* scratch);\n\n"
     << "/* One thread's share of a run on nth threads (a thread pool of your own): every\n"
     << " * thread 0 <= tid < nth calls it with the same regions, scratch of nth *\n"
     << " * " << P << "_SCRATCH_BYTES bytes, the same errors array (" << P
     << "_ERROR_FLAGS int32_t,\n"
     << " * zeroed before the run) and a barrier function that returns once all nth threads\n"
     << " * have called it (e.g. over pthread_barrier_wait). When all have returned,\n"
     << " * " << name << "_first_error(errors) gives the status " << name
     << "_run would have returned.\n"
     << " * The results do not depend on nth. */\n"
     << "void " << name
     << "_run_thread(const uint8_t* constants, uint8_t* io, uint8_t* activations,\n"
     << "    uint8_t* scratch, int32_t* errors, int64_t tid, int64_t nth,\n"
     << "    void (*barrier)(void* arg), void* arg);\n"
     << "int32_t " << name << "_first_error(const int32_t* errors);\n\n"
     << "/* The message of error code k (the node and the reason). */\n"
     << "const char* " << name << "_error_message(int32_t k);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << P << "_BUNDLE_H */\n";
  return os.str();
}

} // namespace
} // namespace cpu

BundleInfo emitBundle(const Function& f, const std::string& dir, const BundleOptions& opts) {
  using namespace cpu;
  const auto t0 = std::chrono::steady_clock::now();
  if (!isCIdentifier(opts.name))
    throw Error("bundle name '" + opts.name + "'",
                "must be a C identifier (letters, digits and '_', not starting with a digit)");
  const std::unique_ptr<lir::Function> lf = lir::compileToLir(f);
  GeneratedModule g = generateModule(*lf);
  addEntryPoints(g, opts.name);
  const size_t scratchBytes = std::max<size_t>(g.scratchPerThread, kRegionAlignment);
  const std::string hdr = header(g, opts.name, f.name(), scratchBytes);
  double optimizeSeconds = 0;
  const std::string object =
      compileToHostObject(std::move(g.module),
                          {opts.name + "_run", opts.name + "_run_thread",
                           opts.name + "_first_error", opts.name + "_error_message"},
                          &optimizeSeconds);

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(dir, "cannot create the bundle folder: " + ec.message());
  BundleInfo info;
  const std::string base = (std::filesystem::path(dir) / opts.name).string();
  info.objectPath = base + ".o";
  info.headerPath = base + ".h";
  info.weightsPath = base + ".weights";
  writeFileAtomic(info.weightsPath, std::string(g.constants.begin(), g.constants.end()));
  writeFileAtomic(info.objectPath, object);
  writeFileAtomic(info.headerPath, hdr);
  info.constantBytes = g.constants.size();
  info.ioBytes = g.ioBytes;
  info.activationBytes = g.activationBytes;
  info.scratchBytes = scratchBytes;
  info.objectBytes = object.size();
  info.nodes = g.stats.nodes;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return info;
}

} // namespace ember
