/* The firmware's digest check (firmware/, docs/firmware.md). Checks the digests of an Ember NPU
 * binary (container format 2, docs/isa/assembly-binary.md section 6) in memory: the header CRC and
 * every section's CRC-32C against .ember.digest. Freestanding C99 for firmware (e.g. an rv32 core):
 * no libc, no 64-bit arithmetic, no tables (an x86-64 host build uses SSE4.2's crc32 instruction
 * for the same CRC when the CPU has it). Returns 0 when every digest matches, a negative number
 * otherwise. tests/isa/test_binary.cpp (Binary.FreestandingCheckerAgrees) compiles and runs it. */
#include "ember_fw.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* A host build on x86-64 (the runtime's firmware, docs/firmware.md section 5): the same
 * CRC with SSE4.2's crc32 instruction, which computes CRC-32C, 8 bytes a step (a long buffer
 * as three streams). The rv32 build never sees this. */
#define EMBER_DIGEST_SSE42 1
/* 8 little-endian bytes, without memcpy. */
static unsigned long long le64(const uint8_t* p) {
  return (unsigned long long)p[0] | (unsigned long long)p[1] << 8 | (unsigned long long)p[2] << 16 |
         (unsigned long long)p[3] << 24 | (unsigned long long)p[4] << 32 |
         (unsigned long long)p[5] << 40 | (unsigned long long)p[6] << 48 |
         (unsigned long long)p[7] << 56;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(const uint8_t* p, uint32_t n,
                                                               uint32_t crc) {
  unsigned long long c = ~crc;
  for (; n >= 8; p += 8, n -= 8)
    c = __builtin_ia32_crc32di(c, le64(p));
  uint32_t c32 = (uint32_t)c;
  for (; n; ++p, --n)
    c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}

/* a * b modulo the polynomial in the CRC's reflected representation (zlib's multmodp);
 * `a` is never 0 here. */
static uint32_t mult_mod_p(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, r = 0;
  for (;;) {
    if (a & m) {
      r ^= b;
      if ((a & (m - 1)) == 0)
        break;
    }
    m >>= 1;
    b = (b >> 1) ^ (0x82F63B78u & (0u - (b & 1u)));
  }
  return r;
}

/* x^(8n) modulo the polynomial: multiplying a CRC by it appends n zero bytes. */
static uint32_t zeros_op(uint32_t n) {
  uint32_t r = 1u << 31, sq = 1u << 23; /* x^0, x^8 */
  for (; n; n >>= 1, sq = mult_mod_p(sq, sq))
    if (n & 1)
      r = mult_mod_p(sq, r);
  return r;
}

/* A long buffer as three thirds at once (the instruction's latency is three steps), joined
 * with zeros_op: crc(A B) = crc(A) * x^(8 |B|) + crc(B). */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42x3(const uint8_t* p, uint32_t n,
                                                                 uint32_t crc) {
  const uint32_t third = n / 3 / 8 * 8;
  unsigned long long a = ~crc, b = 0xFFFFFFFFu, c = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < third; i += 8) {
    a = __builtin_ia32_crc32di(a, le64(p + i));
    b = __builtin_ia32_crc32di(b, le64(p + third + i));
    c = __builtin_ia32_crc32di(c, le64(p + 2 * third + i));
  }
  const uint32_t last = crc32c_sse42(p + 3 * third, n - 3 * third, ~(uint32_t)c);
  const uint32_t ab = mult_mod_p(zeros_op(third), ~(uint32_t)a) ^ ~(uint32_t)b;
  return mult_mod_p(zeros_op(n - 2 * third), ab) ^ last;
}
#endif

static uint32_t crc32c(const uint8_t* p, uint32_t n, uint32_t crc) {
#ifdef EMBER_DIGEST_SSE42
  if (__builtin_cpu_supports("sse4.2"))
    return n >= 65536u ? crc32c_sse42x3(p, n, crc) : crc32c_sse42(p, n, crc);
#endif
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

static uint32_t rd32(const uint8_t* p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The low half of a u64 field (a high half other than 0 cannot fit this image). */
static uint32_t rd64(const uint8_t* p, uint32_t size) {
  return rd32(p + 4) ? size + 1 : rd32(p);
}

int ember_check_digests(const uint8_t* img, uint32_t size) {
  return ember_check_digests_by(img, size, 0, 0);
}

/* The CRC of the check: the caller's, else the core's. */
static uint32_t crc_of(const uint8_t* p, uint32_t n, uint32_t crc, ember_crc_fn fn,
                       const void* ctx) {
  return fn ? fn(p, n, crc, ctx) : crc32c(p, n, crc);
}

int ember_check_digests_by(const uint8_t* img, uint32_t size, ember_crc_fn fn, const void* ctx) {
  if (size < 64 || rd32(img) != 0x464C457Fu || rd32(img + 48) != 2) /* magic, format 2 */
    return -1;
  uint32_t shoff = rd64(img + 40, size), shnum = img[60] | img[61] << 8;
  uint32_t strndx = img[62] | img[63] << 8;
  if (shoff > size || shnum > (size - shoff) / 64 || strndx >= shnum)
    return -1;
  const uint8_t* sh = img + shoff;
  uint32_t str = rd64(sh + strndx * 64 + 24, size), strsz = rd64(sh + strndx * 64 + 32, size);
  uint32_t dig = 0, dsz = 0;
  for (uint32_t i = 1; i < shnum; ++i) {
    uint32_t off = rd64(sh + i * 64 + 24, size), sz = rd64(sh + i * 64 + 32, size);
    if (off > size || sz > size - off)
      return -1;
    if (rd32(sh + i * 64 + 4) == 0x8000EB07u) /* .ember.digest */
      dig = off, dsz = sz;
  }
  if (str > size || strsz > size - str || dsz < 20 || rd32(img + dig) != 1 ||
      dsz != 20 + 32 * rd32(img + dig + 4) || rd32(img + dig + 4) != shnum - 2)
    return -2;
  if (crc_of(img + dig, dsz - 4, 0, fn, ctx) != rd32(img + dig + dsz - 4))
    return -3; /* the table itself */
  if (crc_of(sh, shnum * 64, crc_of(img, 64, 0, fn, ctx), fn, ctx) != rd32(img + dig + 8))
    return -4; /* ELF header + section headers */
  for (uint32_t i = 1; i < shnum; ++i) {
    uint32_t off = rd64(sh + i * 64 + 24, size), sz = rd64(sh + i * 64 + 32, size);
    uint32_t name = rd32(sh + i * 64), found = 0;
    if (off == dig && sz == dsz)
      continue;
    for (const uint8_t* e = img + dig + 16; e < img + dig + dsz - 4 && !found; e += 32) {
      uint32_t k = 0; /* entry name (NUL-padded to 16) == section name (NUL-terminated) */
      while (k < 16 && name + k < strsz && e[k] == img[str + name + k] && e[k])
        ++k;
      found = name + k < strsz && k < 16 && e[k] == 0 && img[str + name + k] == 0 &&
              rd64(e + 16, size) == sz && rd32(e + 24) == crc_of(img + off, sz, 0, fn, ctx);
    }
    if (!found)
      return -5; /* section i: no entry, or its size or CRC differs */
  }
  return 0;
}
