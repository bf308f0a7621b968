// libember_rtlsoc: the RTL platform (RtlPlatform.h) over the Verilated SoC of the
// description, found by its hash (the model's isa_hash_o port).
#include "ember/rtl/RtlPlatform.h"

#include "SocHarness.h"
#include "ember/isa/error.h"
#include "ember/isa/registers.h"

namespace ember::rtl {

namespace detail {
std::uint32_t socReg(const isa::IsaDescription& d, const char* name) {
  return isa::registerOffset(d, name, "the RTL platform");
}
std::uint32_t socField(const isa::IsaDescription& d, const char* reg, const char* field) {
  return isa::registerFieldMask(d, reg, field, "the RTL platform");
}
} // namespace detail

std::vector<std::string> builtSocModels() {
  std::vector<std::string> names;
  for (const auto& m : detail::socModels())
    names.push_back(m.name);
  return names;
}

struct RtlPlatform::Impl {
  isa::IsaDescription isa;
  std::unique_ptr<detail::SocBase> soc;
};

RtlPlatform::RtlPlatform(isa::IsaDescription isa, std::uint8_t* dram, std::uint64_t dram_bytes,
                         platform::JobPrepare prepare)
    : impl_(std::make_unique<Impl>()) {
  impl_->isa = std::move(isa);
  for (const auto& m : detail::socModels())
    if (m.hash() == isa::isaHash64(impl_->isa))
      impl_->soc = m.make(impl_->isa, dram, dram_bytes, std::move(prepare));
  if (!impl_->soc) {
    std::string built;
    for (const auto& n : builtSocModels())
      built += (built.empty() ? "" : ", ") + n;
    throw isa::Error("<rtl>", impl_->isa.name(),
                     "this build has no Verilated SoC of this description (it has: " +
                         (built.empty() ? std::string("none") : built) +
                         "); a shipped one is added to the build with the CMake list "
                         "EMBER_RTL_MODELS (scripts/test.sh configures all), another one "
                         "verilated as docs/rtl/npu.md section 5.3 shows");
  }
}

RtlPlatform::~RtlPlatform() = default;

void RtlPlatform::run(const std::function<void(platform::CoreBus&)>& program) {
  program(*impl_->soc);
}
std::optional<platform::Report> RtlPlatform::takeReport() {
  return impl_->soc->takeReport();
}
std::uint64_t RtlPlatform::starts() const {
  return impl_->soc->starts();
}
std::uint64_t RtlPlatform::cycles() const {
  return impl_->soc->now();
}
const isa::IsaDescription& RtlPlatform::isa() const {
  return impl_->isa;
}

platform::PlatformFactory RtlPlatform::factory() {
  return [](const isa::IsaDescription& d, std::uint8_t* dram, std::uint64_t n,
            platform::JobPrepare prepare) -> std::unique_ptr<platform::ControlPlatform> {
    return std::make_unique<RtlPlatform>(d, dram, n, std::move(prepare));
  };
}

} // namespace ember::rtl
