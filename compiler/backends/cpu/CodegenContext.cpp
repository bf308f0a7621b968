// CodegenContext: constants, addresses and kernel calls for the codegen units.
#include "Codegen.h"

#include "ember/support/Error.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstring>

namespace ember::cpu {

CodegenContext::CodegenContext(llvm::Module& m, llvm::IRBuilder<>& b, CodegenServices& s,
                               llvm::Value* env, llvm::Value* tid, llvm::Value* nth, const Op* op,
                               AddressFn address, InstanceCache* instances)
    : m_(m), b_(b), s_(s), env_(env), tid_(tid), nth_(nth), op_(op), address_(std::move(address)),
      instances_(instances) {}

llvm::Value* CodegenContext::field(EnvField f) {
  llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), env_, f);
  auto* load = b_.CreateLoad(b_.getPtrTy(), slot);
  // The environment does not change while the generated code runs.
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(m_.getContext(), {}));
  return load;
}

llvm::Value* CodegenContext::at(EnvField f, size_t offset) {
  return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), field(f), offset);
}

llvm::Value* CodegenContext::addr(const OpInput& v) {
  if (!v)
    return nullPtr();
  llvm::Value* a = address_ ? address_(false, v.index()) : nullptr;
  if (!a)
    throw Error("cpu backend", "input " + std::to_string(v.index()) + " has no address");
  return a;
}

llvm::Value* CodegenContext::result(const Op&, unsigned i) {
  llvm::Value* a = address_ ? address_(true, i) : nullptr;
  if (!a)
    throw Error("cpu backend", "result " + std::to_string(i) + " has no address");
  return a;
}

llvm::Value* CodegenContext::i32(int64_t v) {
  return b_.getInt32(static_cast<uint32_t>(v));
}
llvm::Value* CodegenContext::i64(int64_t v) {
  return b_.getInt64(static_cast<uint64_t>(v));
}
llvm::Value* CodegenContext::f32(double v) {
  return llvm::ConstantFP::get(b_.getFloatTy(), v);
}
llvm::Value* CodegenContext::f64(double v) {
  return llvm::ConstantFP::get(b_.getDoubleTy(), v);
}
llvm::Value* CodegenContext::nullPtr() {
  return llvm::ConstantPointerNull::get(b_.getPtrTy());
}

llvm::Value* CodegenContext::int64Array(const std::vector<int64_t>& v) {
  std::vector<uint64_t> u(v.begin(), v.end());
  auto* init = llvm::ConstantDataArray::get(m_.getContext(), u);
  return new llvm::GlobalVariable(m_, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init, "ember.dims");
}

llvm::Value* CodegenContext::keep(const std::vector<float>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(float));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return at(kEnvConstants, s_.keep(std::move(bytes)));
}

llvm::Value* CodegenContext::keep(const std::vector<int32_t>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return at(kEnvConstants, s_.keep(std::move(bytes)));
}

llvm::Value* CodegenContext::keep(const std::vector<int64_t>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return at(kEnvConstants, s_.keep(std::move(bytes)));
}

llvm::Value* CodegenContext::keep(const std::vector<double>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(double));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return at(kEnvConstants, s_.keep(std::move(bytes)));
}

llvm::Value* CodegenContext::keep(const std::vector<int8_t>& data) {
  return at(kEnvConstants, s_.keep(std::vector<uint8_t>(data.begin(), data.end())));
}

llvm::Value* CodegenContext::scratch(size_t bytesPerThread) {
  s_.needScratch(bytesPerThread);
  if (!scratch_)
    throw Error("cpu backend", "scratch asked for outside an operation's chunk function");
  return scratch_;
}

void CodegenContext::call(const std::string& name, std::vector<llvm::Value*> args,
                          const std::vector<size_t>& runtimeArgs) {
  llvm::Function* f = m_.getFunction(name);
  if (!f)
    throw Error("cpu backend", "libjit has no kernel '" + name + "'");
  llvm::FunctionType* ft = f->getFunctionType();
  if (ft->getNumParams() != args.size())
    throw Error("cpu backend", "kernel '" + name + "' takes " + std::to_string(ft->getNumParams()) +
                                   " arguments, not " + std::to_string(args.size()));
  for (unsigned i = 0; i < args.size(); ++i) {
    llvm::Type* want = ft->getParamType(i);
    llvm::Value*& a = args[i];
    if (a->getType() == want)
      continue;
    if (want->isIntegerTy() && a->getType()->isIntegerTy())
      a = b_.CreateSExtOrTrunc(a, want);
    else if (want->isFloatingPointTy() && a->getType()->isFloatingPointTy())
      a = b_.CreateFPCast(a, want);
    else
      throw Error("cpu backend",
                  "kernel '" + name + "': argument " + std::to_string(i) + " has the wrong type");
  }
  if (!instances_) {
    b_.CreateCall(f, args);
    return;
  }
  // The key: the kernel and every constant argument (constant arrays by content); the
  // other arguments (addresses, the thread index) become the instance's parameters.
  std::string key = name + (mayAlias_ ? "|alias" : "");
  std::vector<llvm::Value*> dynamic;
  std::vector<llvm::Type*> dynamicTypes;
  std::vector<int> slot(args.size(), -1);
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Value* a = args[i];
    std::string part;
    llvm::raw_string_ostream os(part);
    if (std::find(runtimeArgs.begin(), runtimeArgs.end(), i) != runtimeArgs.end()) {
      // passed at run time
    } else if (auto* gv = llvm::dyn_cast<llvm::GlobalVariable>(a); gv && gv->isConstant()) {
      if (auto* data = llvm::dyn_cast<llvm::ConstantDataSequential>(gv->getInitializer()))
        os << "g" << data->getElementByteSize() << ":" << llvm::toHex(data->getRawDataValues());
    } else if (llvm::isa<llvm::ConstantInt>(a) || llvm::isa<llvm::ConstantFP>(a) ||
               llvm::isa<llvm::ConstantPointerNull>(a)) {
      a->printAsOperand(os, /*PrintType=*/true);
    }
    if (os.str().empty()) {
      slot[i] = static_cast<int>(dynamic.size());
      dynamic.push_back(a);
      dynamicTypes.push_back(a->getType());
      key += "|*";
    } else {
      key += "|" + os.str();
    }
  }
  llvm::Function*& inst = (*instances_)[key];
  if (!inst) {
    auto* ty = llvm::FunctionType::get(b_.getVoidTy(), dynamicTypes, false);
    inst = llvm::Function::Create(ty, llvm::GlobalValue::InternalLinkage, "instance." + name, m_);
    inst->addFnAttr(llvm::Attribute::NoInline);
    if (!mayAlias_)
      for (llvm::Argument& a : inst->args())
        if (a.getType()->isPointerTy())
          a.addAttr(llvm::Attribute::NoAlias);
    llvm::IRBuilder<> ib(llvm::BasicBlock::Create(m_.getContext(), "entry", inst));
    std::vector<llvm::Value*> inner;
    for (size_t i = 0; i < args.size(); ++i)
      inner.push_back(slot[i] >= 0 ? inst->getArg(unsigned(slot[i])) : args[i]);
    ib.CreateCall(f, inner);
    ib.CreateRetVoid();
  }
  b_.CreateCall(inst, dynamic);
}

llvm::Value* CodegenContext::errorFlag(const std::string& reason) {
  if (!op_)
    throw Error("cpu backend", "an error flag needs an operation");
  return at(kEnvErrors, s_.errorFlag(nodeRef(*op_), reason) * sizeof(int32_t));
}

} // namespace ember::cpu
