/* The job ring between the host runtime and the NPU's control-core firmware
 * (docs/firmware.md). One header for both sides: C11 and C++17, fixed layouts,
 * little-endian, sizes checked at compile time.
 *
 * In DRAM at RING_BASE: RING_SIZE job slots (64 bytes each), then RING_SIZE completion
 * records (64 bytes each). RING_SIZE is a power of two. Indices are free-running 32-bit
 * counters: the host's tail (written to DOORBELL) counts submitted jobs, the firmware's
 * head (RING_HEAD) counts completed ones; slot i lives at index i mod RING_SIZE. The ring
 * is empty when head == tail and full when tail - head == RING_SIZE, so a full ring is
 * never mistaken for an empty one. The firmware writes completion i before advancing
 * RING_HEAD past i and raising the IRQ; completions come in submission order. */
#ifndef EMBER_RING_H
#define EMBER_RING_H

#include <stdint.h>

#define EMBER_SLOT_MAGIC 0x4A424D45u       /* "EMBJ" */
#define EMBER_COMPLETION_MAGIC 0x43424D45u /* "EMBC" */
#define EMBER_RING_RECORD_BYTES 64u

/* A job, written by the host before it rings the doorbell. Addresses are device DRAM
 * addresses. The job's DRAM window [window_base, window_base + window_size) is what its
 * dram_addr 0.. reaches; the binary must lie outside it. */
typedef struct ember_job_slot {
  uint32_t magic;       /* EMBER_SLOT_MAGIC */
  uint32_t job_id;      /* echoed in the completion */
  uint64_t binary_addr; /* the ELF image (docs/isa/assembly-binary.md section 6) */
  uint64_t binary_size;
  uint64_t window_base; /* the job's DRAM window */
  uint64_t window_size;
  uint64_t cycle_budget; /* watchdog: NPU cycles before the job is stopped (> 0) */
  uint32_t flags;        /* 0 (reserved) */
  uint32_t reserved[3];  /* 0 */
} ember_job_slot;

/* Job status of a completion. */
#define EMBER_JOB_DONE 0u    /* ran to its halt instruction */
#define EMBER_JOB_REFUSED 1u /* failed validation: detail = EMBER_RULE_*; the NPU untouched */
#define EMBER_JOB_FAULT 2u   /* the NPU faulted: detail = fault kind, fault_index set */
#define EMBER_JOB_TIMEOUT 3u /* the cycle budget ran out; the engines were reset */

/* Validation rules (detail of a REFUSED completion), in the order they are checked. */
#define EMBER_RULE_NONE 0u
#define EMBER_RULE_RING_INDEX 1u     /* tail - head exceeds RING_SIZE */
#define EMBER_RULE_SLOT_MAGIC 2u     /* slot magic wrong */
#define EMBER_RULE_SLOT_RESERVED 3u  /* flags or reserved words not 0 */
#define EMBER_RULE_BUDGET 4u         /* cycle budget 0 */
#define EMBER_RULE_BINARY_RANGE 5u   /* binary empty, wrapping, or outside device DRAM */
#define EMBER_RULE_WINDOW_RANGE 6u   /* window empty, wrapping, or outside device DRAM */
#define EMBER_RULE_OVERLAP 7u        /* the binary lies inside the job's window */
#define EMBER_RULE_ELF_HEADER 8u     /* not an Ember ELF64 header */
#define EMBER_RULE_FORMAT_VERSION 9u /* container format other than this firmware's */
#define EMBER_RULE_SECTIONS 10u      /* section table or a section outside the binary */
#define EMBER_RULE_SECTION_SET 11u   /* a required section missing, duplicated or unknown */
#define EMBER_RULE_DIGEST 12u        /* a CRC-32C digest does not match */
#define EMBER_RULE_ISA 13u           /* .ember.isa: format or description hash differs */
#define EMBER_RULE_MEMMAP 14u        /* a memory-map region outside the window */
#define EMBER_RULE_TEXT 15u          /* instruction stream empty or malformed */
#define EMBER_RULE_DMA_EXTENT 16u    /* a DMA instruction reaches beyond the window */
#define EMBER_RULE_COUNT 17u

/* Fault kinds (detail of a FAULT completion): ember::platform::FaultKind order. */
#define EMBER_FAULT_ILLEGAL_OPCODE 0u
#define EMBER_FAULT_SRAM_RANGE 1u
#define EMBER_FAULT_DRAM_RANGE 2u
#define EMBER_FAULT_TOKEN_UNDERFLOW 3u
#define EMBER_FAULT_TOKEN_OVERFLOW 4u
#define EMBER_FAULT_DEADLOCK 5u
#define EMBER_FAULT_CYCLE_BUDGET 6u
#define EMBER_FAULT_BAD_OPERAND 7u

/* The firmware's answer to one job, written at the slot's index. */
typedef struct ember_completion {
  uint32_t magic;        /* EMBER_COMPLETION_MAGIC */
  uint32_t job_id;       /* the slot's */
  uint32_t status;       /* EMBER_JOB_* */
  uint32_t detail;       /* rule (REFUSED) or fault kind (FAULT) */
  uint64_t cycles;       /* NPU cycles of the job (DONE, FAULT, TIMEOUT) */
  uint64_t macs;         /* MAC operations */
  uint32_t busy[3];      /* busy cycles of the load, compute, store engines */
  uint32_t fault_index;  /* instruction of a FAULT (0xFFFFFFFF: none) */
  uint32_t fault_engine; /* 0 load, 1 compute, 2 store, 3 fetch */
  uint32_t reserved[3];
} ember_completion;

#ifdef __cplusplus
static_assert(sizeof(ember_job_slot) == EMBER_RING_RECORD_BYTES, "slot is 64 bytes");
static_assert(sizeof(ember_completion) == EMBER_RING_RECORD_BYTES, "completion is 64 bytes");
#else
_Static_assert(sizeof(ember_job_slot) == EMBER_RING_RECORD_BYTES, "slot is 64 bytes");
_Static_assert(sizeof(ember_completion) == EMBER_RING_RECORD_BYTES, "completion is 64 bytes");
#endif

#endif /* EMBER_RING_H */
