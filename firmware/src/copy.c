/* The copy DMA as the firmware uses it (docs/firmware.md section 6): the constants of a
 * job into its window and the digest check's CRC-32Cs stream through it, so that they
 * cost the DMA's streaming time, not the core's instructions. Registers COPY_* of the
 * generated header; the core polls COPY_STATUS until the transfer is done. */
#include "ember_fw.h"
#include "ember_npu_isa.h"

int ember_fw_copy(uint64_t src, uint64_t dst, uint32_t n, int check, uint32_t seed, uint32_t* crc) {
  ember_hal_reg_write(EMBER_REG_COPY_SRC_LO, (uint32_t)src);
  ember_hal_reg_write(EMBER_REG_COPY_SRC_HI, (uint32_t)(src >> 32));
  if (!check) {
    ember_hal_reg_write(EMBER_REG_COPY_DST_LO, (uint32_t)dst);
    ember_hal_reg_write(EMBER_REG_COPY_DST_HI, (uint32_t)(dst >> 32));
  }
  ember_hal_reg_write(EMBER_REG_COPY_LEN, n);
  ember_hal_reg_write(EMBER_REG_COPY_SEED, seed);
  ember_hal_reg_write(EMBER_REG_COPY_CTRL, EMBER_REG_COPY_CTRL_START_MASK |
                                               (check ? EMBER_REG_COPY_CTRL_CHECK_MASK : 0u));
  uint32_t st;
  do
    st = ember_hal_reg_read(EMBER_REG_COPY_STATUS);
  while (!(st & EMBER_REG_COPY_STATUS_DONE_MASK));
  *crc = ember_hal_reg_read(EMBER_REG_COPY_CRC);
  return (st & EMBER_REG_COPY_STATUS_ERROR_MASK) ? -1 : 0;
}

uint32_t ember_fw_dma_crc(const uint8_t* p, uint32_t n, uint32_t crc, const void* ctx) {
  const uint64_t* at = (const uint64_t*)ctx; /* the image as core memory, its DRAM address */
  uint32_t out = 0;
  /* Inside device DRAM: rule BINARY_RANGE checked the image before the digest check. */
  (void)ember_fw_copy(at[1] + (uint64_t)((uintptr_t)p - (uintptr_t)at[0]), 0, n, 1, crc, &out);
  return out;
}
