/* The NPU control-core firmware (docs/firmware.md): job validation and the ring loop,
 * freestanding C11. The platform provides the HAL below (rv32: MMIO and a flat DRAM
 * view, firmware/rv32/; the host: the simulator or a test). All hardware access goes
 * through it; register offsets and fields come from the header `ember-isa gen` writes
 * (ember_npu_isa.h), never from constants in this code. */
#ifndef EMBER_FW_H
#define EMBER_FW_H

#include "ember_ring.h"

#include <stddef.h>
#include <stdint.h>

/* A host program may link firmware builds for several descriptions at once: each is
 * compiled with EMBER_FW_PREFIX=<prefix> and every symbol below, its HAL's included,
 * gets that prefix (docs/firmware.md section 5). */
#ifdef EMBER_FW_PREFIX
#ifndef EMBER_FW_NAME
#define EMBER_FW_PASTE2(a, b) a##b
#define EMBER_FW_PASTE(a, b) EMBER_FW_PASTE2(a, b)
#define EMBER_FW_NAME(n) EMBER_FW_PASTE(EMBER_FW_PREFIX, n)
#endif
#define ember_hal_reg_read EMBER_FW_NAME(ember_hal_reg_read)
#define ember_hal_reg_write EMBER_FW_NAME(ember_hal_reg_write)
#define ember_hal_doorbell EMBER_FW_NAME(ember_hal_doorbell)
#define ember_hal_set_ring_head EMBER_FW_NAME(ember_hal_set_ring_head)
#define ember_hal_dram EMBER_FW_NAME(ember_hal_dram)
#define ember_hal_idle EMBER_FW_NAME(ember_hal_idle)
#define ember_hal_notify_host EMBER_FW_NAME(ember_hal_notify_host)
#define ember_hal_spend EMBER_FW_NAME(ember_hal_spend)
#define ember_fw_validate_by EMBER_FW_NAME(ember_fw_validate_by)
#define ember_check_digests_by EMBER_FW_NAME(ember_check_digests_by)
#define ember_fw_copy EMBER_FW_NAME(ember_fw_copy)
#define ember_fw_dma_crc EMBER_FW_NAME(ember_fw_dma_crc)
#define ember_fw_validate EMBER_FW_NAME(ember_fw_validate)
#define ember_fw_isa_hash EMBER_FW_NAME(ember_fw_isa_hash)
#define ember_check_digests EMBER_FW_NAME(ember_check_digests)
#define ember_fw_step EMBER_FW_NAME(ember_fw_step)
#define ember_fw_main EMBER_FW_NAME(ember_fw_main)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- HAL (provided by the platform) ---- */
/* NPU register at byte offset `offset` (EMBER_REG_*). */
uint32_t ember_hal_reg_read(uint32_t offset);
void ember_hal_reg_write(uint32_t offset, uint32_t value);
/* The last value the host wrote to DOORBELL (the ring tail), as the core sees it. */
uint32_t ember_hal_doorbell(void);
/* Publishes the firmware's ring head (the RING_HEAD register the host reads). */
void ember_hal_set_ring_head(uint32_t head);
/* Device DRAM [addr, addr + size) as core memory, or NULL when it is not all inside
 * device DRAM. */
uint8_t* ember_hal_dram(uint64_t addr, uint64_t size);
/* Waits a little (an idle hint; may return at once). */
void ember_hal_idle(void);
/* Raises the host's interrupt: a completion was written. */
void ember_hal_notify_host(void);
/* The core's own instructions: `cycles` of work the firmware charges at the description's
 * costs (EMBER_CONTROL_JOB_CYCLES, EMBER_CONTROL_CHECK_CYCLES_PER_INSN). A platform that
 * models the core's time lets them pass; on a real core they pass anyway (rv32: nothing). */
void ember_hal_spend(uint64_t cycles);

/* ---- CRC-32C of image bytes ---- */
/* A CRC-32C of `n` bytes at `p` continuing `crc` (0 for a fresh one), with `ctx` the
 * caller's: how the digest check computes its CRCs. */
typedef uint32_t (*ember_crc_fn)(const uint8_t* p, uint32_t n, uint32_t crc, const void* ctx);

/* ---- Validation ---- */
/* What validation found out about a job, for starting it. */
typedef struct ember_fw_job {
  uint64_t text_addr;  /* DRAM address of the instruction stream */
  uint32_t insn_count; /* instructions */
  uint64_t const_addr; /* the .ember.const bytes in the binary (DRAM address) */
  uint64_t const_size;
  uint64_t const_offset; /* where they go: offset of the const region in the window */
} ember_fw_job;

/* Checks `slot` and the binary it names against this firmware's description, with
 * overflow-safe arithmetic, touching nothing. Returns EMBER_RULE_NONE and fills `job`,
 * or the first rule (EMBER_RULE_*) the job breaks. */
uint32_t ember_fw_validate(const ember_job_slot* slot, ember_fw_job* job);
/* ember_fw_validate with the digest check's CRCs computed by `crc` (NULL: by the core). */
uint32_t ember_fw_validate_by(const ember_job_slot* slot, ember_fw_job* job, ember_crc_fn crc,
                              const void* ctx);

/* The SHA-256 of the description this firmware was built for (32 bytes). */
const uint8_t* ember_fw_isa_hash(void);

/* Digests of a binary in memory (firmware/src/ember_digest.c): 0 when all match. */
int ember_check_digests(const uint8_t* img, uint32_t size);
/* The same with every CRC computed by `crc` (NULL: by the core). */
int ember_check_digests_by(const uint8_t* img, uint32_t size, ember_crc_fn crc, const void* ctx);

/* ---- The copy DMA (firmware/src/copy.c, registers COPY_*) ---- */
/* Streams `n` bytes of device DRAM from `src` through the copy DMA and writes them to
 * `dst`, or with `check` only reads them; waits until it is done. Returns the CRC-32C of
 * the bytes continuing `seed`, in *crc; 0, or -1 when the DMA found the range outside
 * device DRAM. */
int ember_fw_copy(uint64_t src, uint64_t dst, uint32_t n, int check, uint32_t seed, uint32_t* crc);
/* An ember_crc_fn over the copy DMA: `ctx` points at two uint64_t, the image's address as
 * core memory (a pointer converted) and its device DRAM address. */
uint32_t ember_fw_dma_crc(const uint8_t* p, uint32_t n, uint32_t crc, const void* ctx);

/* ---- The ring loop ---- */
/* Takes the next job if the host submitted one, validates it, runs it under its cycle
 * budget, writes its completion, advances the head and raises the IRQ. Returns 1 if a
 * job was handled, 0 if the ring was empty. `head` is the firmware's free-running head. */
int ember_fw_step(uint32_t* head);
/* The main loop of the control core: ember_fw_step forever. */
void ember_fw_main(void);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_FW_H */
