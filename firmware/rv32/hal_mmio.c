/* The HAL of the rv32 control core: the NPU's registers are memory-mapped at
 * EMBER_FW_REG_BASE, device DRAM at EMBER_FW_DRAM_BASE (a 32-bit core sees the first
 * EMBER_FW_DRAM_BYTES of it), the doorbell and the head at two core-side registers of
 * the register block, the host IRQ a write to another. */
#include "ember_fw.h"
#include "ember_mem.h"

#define EMBER_FW_REG_BASE 0x40000000u
#define EMBER_FW_CORE_DOORBELL 0x40001000u /* last DOORBELL value, core side */
#define EMBER_FW_CORE_HEAD 0x40001004u     /* drives RING_HEAD */
#define EMBER_FW_CORE_IRQ 0x40001008u      /* write: raise the host IRQ */
#define EMBER_FW_DRAM_BASE 0x80000000u
#define EMBER_FW_DRAM_BYTES 0x80000000u

static volatile uint32_t* reg(uint32_t addr) {
  return (volatile uint32_t*)(uintptr_t)addr;
}

uint32_t ember_hal_reg_read(uint32_t offset) {
  return *reg(EMBER_FW_REG_BASE + offset);
}
void ember_hal_reg_write(uint32_t offset, uint32_t value) {
  *reg(EMBER_FW_REG_BASE + offset) = value;
}
uint32_t ember_hal_doorbell(void) {
  return *reg(EMBER_FW_CORE_DOORBELL);
}
void ember_hal_set_ring_head(uint32_t head) {
  *reg(EMBER_FW_CORE_HEAD) = head;
}
void ember_hal_notify_host(void) {
  *reg(EMBER_FW_CORE_IRQ) = 1;
}
void ember_hal_idle(void) {
  __asm__ volatile("wfi");
}
/* The core's own instructions take their real time: nothing to charge. */
void ember_hal_spend(uint64_t cycles) {
  (void)cycles;
}
uint8_t* ember_hal_dram(uint64_t addr, uint64_t size) {
  if (addr > EMBER_FW_DRAM_BYTES || size > EMBER_FW_DRAM_BYTES - addr)
    return 0;
  return (uint8_t*)(uintptr_t)(EMBER_FW_DRAM_BASE + (uint32_t)addr);
}

/* The compiler may call these for struct copies; the firmware links no libc. */
void* memcpy(void* d, const void* s, size_t n);
void* memset(void* d, int c, size_t n);
void* memcpy(void* d, const void* s, size_t n) {
  return ember_memcpy(d, s, n);
}
void* memset(void* d, int c, size_t n) {
  return ember_memset(d, c, n);
}
