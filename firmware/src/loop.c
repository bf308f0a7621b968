/* The ring loop of the control core (docs/firmware.md section 4): take a job, validate
 * it, program the NPU, run it under its cycle budget (the watchdog), recover from a fault
 * or a timeout, write the completion, advance the head, raise the IRQ. */
#include "ember_fw.h"
#include "ember_mem.h"
#include "ember_npu_isa.h"

static uint32_t lo32(uint64_t v) {
  return (uint32_t)v;
}
static uint32_t hi32(uint64_t v) {
  return (uint32_t)(v >> 32);
}
static uint64_t reg64(uint32_t lo, uint32_t hi) {
  return (uint64_t)ember_hal_reg_read(lo) | (uint64_t)ember_hal_reg_read(hi) << 32;
}
static uint32_t get(uint32_t v, uint32_t mask, uint32_t shift) {
  return (v & mask) >> shift;
}

/* Engines and queues back to their reset state, the IRQ causes cleared. */
static void reset_npu(void) {
  ember_hal_reg_write(EMBER_REG_CTRL, EMBER_REG_CTRL_RESET_MASK);
  ember_hal_reg_write(EMBER_REG_CTRL, 0);
  ember_hal_reg_write(EMBER_REG_IRQ_STATUS,
                      EMBER_REG_IRQ_STATUS_DONE_MASK | EMBER_REG_IRQ_STATUS_FAULT_MASK);
}

/* Runs a validated job; fills the completion's status and figures. The constants go into
 * the window through the copy DMA (at most 4 GiB: they lie inside the binary). */
static void run_job(const ember_job_slot* s, const ember_fw_job* job, ember_completion* c) {
  uint32_t crc = 0;
  if (job->const_size && ember_fw_copy(job->const_addr, s->window_base + job->const_offset,
                                       (uint32_t)job->const_size, 0, 0, &crc) < 0) {
    /* The copy DMA refused the range (outside its DRAM). Validation has checked the
     * binary and the window against ember_hal_dram's DRAM, so this is a guard against the
     * two disagreeing: the job is refused, never run without its constants. */
    c->status = EMBER_JOB_REFUSED;
    c->detail = EMBER_RULE_WINDOW_RANGE;
    return;
  }
  reset_npu();
  ember_hal_reg_write(EMBER_REG_INSN_BASE_LO, lo32(job->text_addr));
  ember_hal_reg_write(EMBER_REG_INSN_BASE_HI, hi32(job->text_addr));
  ember_hal_reg_write(EMBER_REG_INSN_COUNT, job->insn_count);
  ember_hal_reg_write(EMBER_REG_DRAM_BASE_LO, lo32(s->window_base));
  ember_hal_reg_write(EMBER_REG_DRAM_BASE_HI, hi32(s->window_base));
  ember_hal_reg_write(EMBER_REG_DRAM_SIZE_LO, lo32(s->window_size));
  ember_hal_reg_write(EMBER_REG_DRAM_SIZE_HI, hi32(s->window_size));
  ember_hal_reg_write(EMBER_REG_CTRL, EMBER_REG_CTRL_START_MASK | EMBER_REG_CTRL_IRQ_EN_MASK);
  uint32_t st = 0;
  for (;;) { /* DONE, FAULT, or the watchdog */
    st = ember_hal_reg_read(EMBER_REG_STATUS);
    if (st & (EMBER_REG_STATUS_DONE_MASK | EMBER_REG_STATUS_FAULT_MASK))
      break;
    if (reg64(EMBER_REG_CYCLES_LO, EMBER_REG_CYCLES_HI) >= s->cycle_budget)
      break;
    ember_hal_idle();
  }
  c->cycles = reg64(EMBER_REG_CYCLES_LO, EMBER_REG_CYCLES_HI);
  c->macs = reg64(EMBER_REG_MACS_LO, EMBER_REG_MACS_HI);
  c->busy[0] = ember_hal_reg_read(EMBER_REG_LOAD_BUSY_CYCLES);
  c->busy[1] = ember_hal_reg_read(EMBER_REG_COMPUTE_BUSY_CYCLES);
  c->busy[2] = ember_hal_reg_read(EMBER_REG_STORE_BUSY_CYCLES);
  if (c->cycles > s->cycle_budget) {
    /* Past the budget, whatever STATUS says: the watchdog's verdict (a coarse clock may
     * show the end of a job that overran it). */
    c->status = EMBER_JOB_TIMEOUT;
  } else if (st & EMBER_REG_STATUS_FAULT_MASK) {
    const uint32_t fc = ember_hal_reg_read(EMBER_REG_FAULT_CODE);
    c->status = EMBER_JOB_FAULT;
    c->detail = get(fc, EMBER_REG_FAULT_CODE_CODE_MASK, EMBER_REG_FAULT_CODE_CODE_SHIFT) - 1u;
    c->fault_engine = get(fc, EMBER_REG_FAULT_CODE_ENGINE_MASK, EMBER_REG_FAULT_CODE_ENGINE_SHIFT);
    c->fault_index = ember_hal_reg_read(EMBER_REG_FAULT_PC);
  } else if (!(st & EMBER_REG_STATUS_DONE_MASK)) {
    c->status = EMBER_JOB_TIMEOUT;
  } else {
    c->status = EMBER_JOB_DONE;
  }
  reset_npu(); /* recovery: the next job starts from reset whatever this one did */
}

int ember_fw_step(uint32_t* head) {
  const uint32_t tail = ember_hal_doorbell();
  if (tail == *head)
    return 0;
  const uint64_t base = reg64(EMBER_REG_RING_BASE_LO, EMBER_REG_RING_BASE_HI);
  const uint32_t size = ember_hal_reg_read(EMBER_REG_RING_SIZE);
  ember_completion c;
  ember_memset(&c, 0, sizeof c);
  c.magic = EMBER_COMPLETION_MAGIC;
  c.fault_index = 0xFFFFFFFFu;
  const uint32_t slot = (size && !(size & (size - 1))) ? (*head & (size - 1)) : 0;
  ember_job_slot* s = (ember_job_slot*)ember_hal_dram(base + (uint64_t)slot * 64u, 64);
  ember_completion* out =
      (ember_completion*)ember_hal_dram(base + ((uint64_t)size + slot) * 64u, 64);
  if (!s || !out)
    return 0; /* no ring the core can reach: nothing to answer to */
  c.job_id = s->job_id;
  ember_hal_spend(EMBER_CONTROL_JOB_CYCLES); /* the firmware's own work on every job */
  ember_fw_job job;
  job.insn_count = 0;
  uint32_t rule = EMBER_RULE_NONE;
  /* The digest check's CRCs stream through the copy DMA (the image's core address, its
   * DRAM address). */
  const uint64_t at[2] = {(uint64_t)(uintptr_t)ember_hal_dram(s->binary_addr, s->binary_size),
                          s->binary_addr};
  if (size == 0 || (size & (size - 1)) || tail - *head > size)
    rule = EMBER_RULE_RING_INDEX;
  else
    rule = ember_fw_validate_by(s, &job, ember_fw_dma_crc, at);
  if (rule != EMBER_RULE_NONE) {
    c.status = EMBER_JOB_REFUSED;
    c.detail = rule;
  } else {
    /* The DMA_EXTENT rule read every instruction word. */
    ember_hal_spend((uint64_t)job.insn_count * EMBER_CONTROL_CHECK_CYCLES_PER_INSN);
    run_job(s, &job, &c);
  }
  ember_memcpy(out, &c, sizeof c);
  *head += 1;
  ember_hal_set_ring_head(*head);
  ember_hal_notify_host();
  return 1;
}

void ember_fw_main(void) {
  uint32_t head = 0;
  for (;;)
    if (!ember_fw_step(&head))
      ember_hal_idle();
}
