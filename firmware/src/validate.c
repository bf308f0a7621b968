/* Job validation (docs/firmware.md section 3): everything the firmware checks before it
 * lets a job near the NPU, in the order of the EMBER_RULE_* codes. Overflow-safe: every
 * sum and product of untrusted numbers goes through add64/mul64. */
#include "ember_fw.h"
#include "ember_npu_isa.h"

#define SHT_STRTAB 3u
#define SEC_FIRST 0x8000EB01u /* .ember.text .. .ember.digest: 0x8000EB01 .. 0x8000EB07 */
#define SEC_LAST 0x8000EB07u
#define SEC_TEXT 0x8000EB01u
#define SEC_CONST 0x8000EB02u
#define SEC_MEMMAP 0x8000EB04u
#define SEC_ISA 0x8000EB05u

static int add64(uint64_t a, uint64_t b, uint64_t* r) {
  return __builtin_add_overflow(a, b, r);
}
static int mul64(uint64_t a, uint64_t b, uint64_t* r) {
  return __builtin_mul_overflow(a, b, r);
}

static uint32_t rd16(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
static uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t* p) {
  return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Bits [lsb, lsb + width) of an instruction word (width <= 64). */
static uint64_t field(const uint8_t* w, uint32_t lsb, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < width; ++i) {
    const uint32_t b = lsb + i;
    v |= (uint64_t)((w[b >> 3] >> (b & 7u)) & 1u) << i;
  }
  return v;
}

/* A bounded reader over one section's bytes. */
typedef struct cursor {
  const uint8_t* p;
  uint64_t left;
  int bad;
} cursor;
static const uint8_t* take(cursor* c, uint64_t n) {
  if (c->bad || n > c->left) {
    c->bad = 1;
    return 0;
  }
  const uint8_t* p = c->p;
  c->p += n;
  c->left -= n;
  return p;
}
static uint64_t take_u(cursor* c, uint32_t bytes) {
  const uint8_t* p = take(c, bytes);
  if (!p)
    return 0;
  return bytes == 1 ? p[0] : bytes == 2 ? rd16(p) : bytes == 4 ? rd32(p) : rd64(p);
}

typedef struct section {
  uint64_t off, size, entsize;
} section;

static uint64_t row_bytes_of(uint64_t id) {
#define EMBER_ROW_OF(ID, ROW, ROWS)                                                                \
  if (id == (ID))                                                                                  \
    return (ROW);
  EMBER_MEMORIES(EMBER_ROW_OF)
#undef EMBER_ROW_OF
  return 0;
}

/* Rule DMA_EXTENT for one instruction word: its DRAM box must end inside the window. */
static int dma_inside(const uint8_t* w, uint64_t window) {
  const uint64_t op = field(w, EMBER_OPCODE_LSB, EMBER_OPCODE_WIDTH);
  int ok = 1;
#define EMBER_DMA_CHECK(OPC, LOAD, SL, SW, DL, DW, S0L, S0W, S1L, S1W, S2L, S2W, T1L, T1W, T2L,    \
                        T2W)                                                                       \
  if (op == (OPC)) {                                                                               \
    const uint64_t s0 = field(w, S0L, S0W), s1 = field(w, S1L, S1W), s2 = field(w, S2L, S2W);      \
    const uint64_t rb = row_bytes_of(field(w, SL, SW));                                            \
    uint64_t a, b, rows, end;                                                                      \
    (void)(LOAD);                                                                                  \
    if (s0 && s1 && s2)                                                                            \
      ok = rb && !mul64(s2 - 1, field(w, T2L, T2W), &a) &&                                         \
           !mul64(s1 - 1, field(w, T1L, T1W), &b) && !add64(a, b, &rows) &&                        \
           !add64(rows, s0, &rows) && !mul64(rows, rb, &rows) &&                                   \
           !add64(field(w, DL, DW), rows, &end) && end <= window;                                  \
  }
  EMBER_DMA_INSNS(EMBER_DMA_CHECK)
#undef EMBER_DMA_CHECK
  return ok;
}

/* Rules ELF_HEADER .. SECTION_SET: finds the sections the firmware reads. */
static uint32_t read_sections(const uint8_t* img, uint64_t size, section* text, section* cnst,
                              section* memmap, section* isa) {
  static const uint8_t ident[8] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 255};
  if (size < 64)
    return EMBER_RULE_ELF_HEADER;
  for (uint32_t i = 0; i < 8; ++i)
    if (img[i] != ident[i])
      return EMBER_RULE_ELF_HEADER;
  if (rd16(img + 16) != 2 || rd16(img + 18) != EMBER_ELF_MACHINE || rd32(img + 20) != 1 ||
      rd16(img + 52) != 64 || rd16(img + 56) != 0 || rd16(img + 58) != 64)
    return EMBER_RULE_ELF_HEADER;
  if (rd32(img + 48) != EMBER_BINARY_FORMAT_VERSION)
    return EMBER_RULE_FORMAT_VERSION;
  const uint64_t shoff = rd64(img + 40);
  const uint32_t shnum = rd16(img + 60);
  uint64_t tbl, end;
  if (shnum < 2 || mul64(shnum, 64, &tbl) || add64(shoff, tbl, &end) || end > size ||
      rd16(img + 62) >= shnum)
    return EMBER_RULE_SECTIONS;
  uint32_t seen = 0, strtabs = 0;
  for (uint32_t i = 1; i < shnum; ++i) {
    const uint8_t* sh = img + shoff + (uint64_t)i * 64;
    const uint32_t type = rd32(sh + 4);
    section s = {rd64(sh + 24), rd64(sh + 32), rd64(sh + 56)};
    if (add64(s.off, s.size, &end) || end > size)
      return EMBER_RULE_SECTIONS;
    if (type == SHT_STRTAB) {
      ++strtabs;
      continue;
    }
    if (type < SEC_FIRST || type > SEC_LAST || (seen >> (type - SEC_FIRST)) & 1u)
      return EMBER_RULE_SECTION_SET;
    seen |= 1u << (type - SEC_FIRST);
    if (type == SEC_TEXT)
      *text = s;
    else if (type == SEC_CONST)
      *cnst = s;
    else if (type == SEC_MEMMAP)
      *memmap = s;
    else if (type == SEC_ISA)
      *isa = s;
  }
  if (seen != (1u << (SEC_LAST - SEC_FIRST + 1)) - 1 || strtabs != 1)
    return EMBER_RULE_SECTION_SET;
  return EMBER_RULE_NONE;
}

static const uint8_t kIsaHash[32] = EMBER_ISA_SHA256;

const uint8_t* ember_fw_isa_hash(void) {
  return kIsaHash;
}

/* Rule ISA: format version, then the description's SHA-256. */
static uint32_t check_isa(const uint8_t* img, section isa) {
  const uint8_t* want = kIsaHash;
  cursor c = {img + isa.off, isa.size, 0};
  if (take_u(&c, 4) != EMBER_BINARY_FORMAT_VERSION)
    return EMBER_RULE_ISA;
  take(&c, take_u(&c, 2)); /* the description's name */
  const uint8_t* h = take(&c, 32);
  if (!h || c.left != 0)
    return EMBER_RULE_ISA;
  for (uint32_t i = 0; i < 32; ++i)
    if (h[i] != want[i])
      return EMBER_RULE_ISA;
  return EMBER_RULE_NONE;
}

/* Rule MEMMAP: every region inside the window; finds the const region. */
static uint32_t check_memmap(const uint8_t* img, section mm, uint64_t window, uint64_t cbytes,
                             uint64_t* const_off) {
  cursor c = {img + mm.off, mm.size, 0};
  const uint64_t n = take_u(&c, 4);
  int have_const = cbytes == 0;
  for (uint64_t i = 0; i < n && !c.bad; ++i) {
    take(&c, take_u(&c, 2));
    const uint64_t kind = take_u(&c, 1), off = take_u(&c, 8), sz = take_u(&c, 8);
    uint64_t end;
    if (c.bad || add64(off, sz, &end) || end > window)
      return EMBER_RULE_MEMMAP;
    if (kind == 0 && cbytes <= sz) { /* the const region */
      *const_off = off;
      have_const = 1;
    }
  }
  return c.bad || c.left != 0 || !have_const ? EMBER_RULE_MEMMAP : EMBER_RULE_NONE;
}

uint32_t ember_fw_validate(const ember_job_slot* s, ember_fw_job* job) {
  return ember_fw_validate_by(s, job, 0, 0);
}

uint32_t ember_fw_validate_by(const ember_job_slot* s, ember_fw_job* job, ember_crc_fn crc,
                              const void* ctx) {
  uint64_t end, wend;
  if (s->magic != EMBER_SLOT_MAGIC)
    return EMBER_RULE_SLOT_MAGIC;
  if (s->flags || s->reserved[0] || s->reserved[1] || s->reserved[2])
    return EMBER_RULE_SLOT_RESERVED;
  if (s->cycle_budget == 0)
    return EMBER_RULE_BUDGET;
  if (s->binary_size < 64 || s->binary_size > 0xFFFFFFFFu ||
      add64(s->binary_addr, s->binary_size, &end) ||
      !ember_hal_dram(s->binary_addr, s->binary_size))
    return EMBER_RULE_BINARY_RANGE;
  if (s->window_size == 0 || add64(s->window_base, s->window_size, &wend) ||
      !ember_hal_dram(s->window_base, s->window_size))
    return EMBER_RULE_WINDOW_RANGE;
  if (s->binary_addr < wend && s->window_base < end)
    return EMBER_RULE_OVERLAP;
  const uint8_t* img = ember_hal_dram(s->binary_addr, s->binary_size);
  section text = {0, 0, 0}, cnst = {0, 0, 0}, mm = {0, 0, 0}, isa = {0, 0, 0};
  uint32_t rule = read_sections(img, s->binary_size, &text, &cnst, &mm, &isa);
  if (rule)
    return rule;
  if (ember_check_digests_by(img, (uint32_t)s->binary_size, crc, ctx) != 0)
    return EMBER_RULE_DIGEST;
  if ((rule = check_isa(img, isa)) != EMBER_RULE_NONE)
    return rule;
  job->const_offset = 0;
  if ((rule = check_memmap(img, mm, s->window_size, cnst.size, &job->const_offset)) != 0)
    return rule;
  if (text.entsize != EMBER_INSN_BYTES || text.size == 0 || text.size % EMBER_INSN_BYTES ||
      text.size / EMBER_INSN_BYTES > 0xFFFFFFFFu)
    return EMBER_RULE_TEXT;
  for (uint64_t at = 0; at < text.size; at += EMBER_INSN_BYTES)
    if (!dma_inside(img + text.off + at, s->window_size))
      return EMBER_RULE_DMA_EXTENT;
  job->text_addr = s->binary_addr + text.off;
  job->insn_count = (uint32_t)(text.size / EMBER_INSN_BYTES);
  job->const_addr = s->binary_addr + cnst.off;
  job->const_size = cnst.size;
  return EMBER_RULE_NONE;
}
