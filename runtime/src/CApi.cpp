// The C API (ember/runtime/ember_runtime.h) over Device and Session.
#include "ember/runtime/ember_runtime.h"

#include "ember/isa/binary.h"
#include "ember/runtime/Runtime.h"

#include <cstring>
#include <exception>
#include <map>
#include <memory>

struct ember_rt_device {
  std::unique_ptr<ember::runtime::Device> dev;
  std::unique_ptr<ember::runtime::Session> session;
  std::map<std::uint32_t, ember::runtime::Completion> done;
};

namespace {
void setErr(char* err, size_t n, const char* msg) {
  if (err && n) {
    std::strncpy(err, msg, n - 1);
    err[n - 1] = 0;
  }
}
} // namespace

extern "C" {

ember_rt_device* ember_rt_open(const char* isa_json, char* err, size_t err_size) {
  try {
    auto d = std::make_unique<ember_rt_device>();
    d->dev = std::make_unique<ember::runtime::Device>(
        ember::isa::IsaDescription::loadDefault(isa_json ? isa_json : ""),
        ember::runtime::Device::Options{});
    d->session = std::make_unique<ember::runtime::Session>(*d->dev);
    return d.release();
  } catch (const std::exception& e) {
    setErr(err, err_size, e.what());
    return nullptr;
  }
}

void ember_rt_close(ember_rt_device* dev) {
  delete dev;
}

int ember_rt_submit(ember_rt_device* dev, const char* elf_path, const char* const* names,
                    const void* const* data, const size_t* sizes, size_t n, uint64_t budget,
                    uint32_t* job, char* err, size_t err_size) {
  try {
    ember::isa::Binary bin = ember::isa::readElf(elf_path, dev->dev->isa());
    std::map<std::string, std::vector<std::uint8_t>> inputs;
    for (size_t i = 0; i < n; ++i) {
      const auto* p = static_cast<const std::uint8_t*>(data[i]);
      inputs[names[i]].assign(p, p + sizes[i]);
    }
    *job = dev->session->submit(bin, inputs, budget);
    return 0;
  } catch (const std::exception& e) {
    setErr(err, err_size, e.what());
    return -1;
  }
}

int ember_rt_wait(ember_rt_device* dev, uint32_t job, uint32_t timeout_ms, ember_completion* out) {
  if (dev->done.count(job)) {
    *out = dev->done.at(job).record;
    return 1;
  }
  if (!dev->session->pending(job))
    return -1; // never submitted (a collected job is answered from `done` above)
  try {
    auto c = dev->session->wait(job, std::chrono::milliseconds(timeout_ms));
    if (!c)
      return 0;
    *out = c->record;
    dev->done.emplace(job, std::move(*c));
    return 1;
  } catch (const std::exception&) {
    return -1;
  }
}

long ember_rt_output(ember_rt_device* dev, uint32_t job, const char* name, void* buf, size_t size) {
  auto it = dev->done.find(job);
  if (it == dev->done.end())
    return -1;
  auto o = it->second.outputs.find(name);
  if (o == it->second.outputs.end() || o->second.size() > size)
    return -2;
  std::memcpy(buf, o->second.data(), o->second.size());
  return long(o->second.size());
}

} // extern "C"
