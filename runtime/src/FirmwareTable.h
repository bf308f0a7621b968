// Internal: the firmware builds this runtime holds, one per description (each compiled
// with its own symbol prefix, firmware/CMakeLists.txt), and the HAL they all reach: the
// functions of `hal` act on the device whose control core runs on the calling thread.
#pragma once

#include <cstdint>
#include <vector>

namespace ember::runtime {

namespace hal {
std::uint32_t regRead(std::uint32_t offset);
void regWrite(std::uint32_t offset, std::uint32_t value);
std::uint32_t doorbell();
void setRingHead(std::uint32_t head);
std::uint8_t* dram(std::uint64_t addr, std::uint64_t size);
void idle();
void notifyHost();
void spend(std::uint64_t cycles);
} // namespace hal

namespace detail {
struct Firmware {
  int (*step)(std::uint32_t* head);
  const std::uint8_t* (*isa_hash)();
};
/// Every firmware build of this runtime (rows written by runtime/CMakeLists.txt).
const std::vector<Firmware>& firmwares();
} // namespace detail

} // namespace ember::runtime

/// The prefixed firmware entry points of build P and its HAL, forwarding to `hal`.
#define EMBER_RT_FIRMWARE(P)                                                                       \
  extern "C" {                                                                                     \
  int P##ember_fw_step(std::uint32_t* head);                                                       \
  const std::uint8_t* P##ember_fw_isa_hash(void);                                                  \
  std::uint32_t P##ember_hal_reg_read(std::uint32_t o) {                                           \
    return ember::runtime::hal::regRead(o);                                                        \
  }                                                                                                \
  void P##ember_hal_reg_write(std::uint32_t o, std::uint32_t v) {                                  \
    ember::runtime::hal::regWrite(o, v);                                                           \
  }                                                                                                \
  std::uint32_t P##ember_hal_doorbell(void) {                                                      \
    return ember::runtime::hal::doorbell();                                                        \
  }                                                                                                \
  void P##ember_hal_set_ring_head(std::uint32_t h) {                                               \
    ember::runtime::hal::setRingHead(h);                                                           \
  }                                                                                                \
  std::uint8_t* P##ember_hal_dram(std::uint64_t a, std::uint64_t n) {                              \
    return ember::runtime::hal::dram(a, n);                                                        \
  }                                                                                                \
  void P##ember_hal_idle(void) {                                                                   \
    ember::runtime::hal::idle();                                                                   \
  }                                                                                                \
  void P##ember_hal_notify_host(void) {                                                            \
    ember::runtime::hal::notifyHost();                                                             \
  }                                                                                                \
  void P##ember_hal_spend(std::uint64_t c) {                                                       \
    ember::runtime::hal::spend(c);                                                                 \
  }                                                                                                \
  }
#define EMBER_RT_ENTRY(P)                                                                          \
  ember::runtime::detail::Firmware {                                                               \
    &P##ember_fw_step, &P##ember_fw_isa_hash                                                       \
  }
