// SHA-256 after FIPS 180-4, and CRC-32C.
#include "ember/isa/hash.h"

#include <cstring>

namespace ember::isa {

namespace {

constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t rotr(std::uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

void compress(std::uint32_t h[8], const std::uint8_t block[64]) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t(block[4 * i]) << 24) | (std::uint32_t(block[4 * i + 1]) << 16) |
           (std::uint32_t(block[4 * i + 2]) << 8) | std::uint32_t(block[4 * i + 3]);
  }
  for (int i = 16; i < 64; ++i) {
    std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    std::uint32_t ch = (e & f) ^ (~e & g);
    std::uint32_t t1 = hh + s1 + ch + kK[i] + w[i];
    std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    std::uint32_t t2 = s0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

} // namespace

Sha256Digest sha256(const void* data, std::size_t size) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::size_t full = size / 64;
  for (std::size_t i = 0; i < full; ++i)
    compress(h, p + 64 * i);
  std::uint8_t tail[128] = {};
  std::size_t rest = size - full * 64;
  if (rest)
    std::memcpy(tail, p + full * 64, rest);
  tail[rest] = 0x80;
  std::size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  std::uint64_t bits = std::uint64_t(size) * 8;
  for (int i = 0; i < 8; ++i)
    tail[tail_len - 1 - i] = std::uint8_t(bits >> (8 * i));
  compress(h, tail);
  if (tail_len == 128)
    compress(h, tail + 64);
  Sha256Digest out{};
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = std::uint8_t(h[i] >> 24);
    out[4 * i + 1] = std::uint8_t(h[i] >> 16);
    out[4 * i + 2] = std::uint8_t(h[i] >> 8);
    out[4 * i + 3] = std::uint8_t(h[i]);
  }
  return out;
}

std::string toHex(const Sha256Digest& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (std::uint8_t b : d) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

namespace {
struct Crc32cTable {
  std::uint32_t t[256];
  Crc32cTable() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      t[i] = c;
    }
  }
};
} // namespace

namespace {
/// From this many bytes on, the host computes a CRC-32C as three streams.
constexpr std::size_t kCrc32cThreeWayBytes = std::size_t(1) << 16;

/// a * b modulo the CRC-32C polynomial, both in the CRC's reflected representation
/// (x^0 is the top bit): zlib's multmodp for this polynomial.
std::uint32_t multModP(std::uint32_t a, std::uint32_t b) {
  std::uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0)
        break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return p;
}

/// x^(8n) modulo the polynomial: multiplying a CRC by it appends n zero bytes.
std::uint32_t zerosOperator(std::uint64_t n) {
  std::uint32_t p = 1u << 31, sq = 1u << 23; // x^0, x^8
  for (; n; n >>= 1, sq = multModP(sq, sq))
    if (n & 1)
      p = multModP(sq, p);
  return p;
}
} // namespace

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {
/// The same CRC with SSE4.2's crc32 instruction (which computes CRC-32C), 8 bytes a step.
__attribute__((target("sse4.2"))) std::uint32_t crc32cSse42(const std::uint8_t* p, std::size_t size,
                                                            std::uint32_t crc) {
  std::uint64_t c = crc;
  for (; size >= 8; p += 8, size -= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; size; ++p, --size)
    c32 = __builtin_ia32_crc32qi(c32, *p);
  return c32;
}

/// crc32c of a long buffer as three thirds at once (the instruction's latency is three
/// steps, its throughput one a cycle), joined with zerosOperator: crc(A B) =
/// crc(A) * x^(8 |B|) + crc(B).
__attribute__((target("sse4.2"))) std::uint32_t crc32cSse42x3(const std::uint8_t* p,
                                                              std::size_t size, std::uint32_t crc) {
  const std::size_t third = size / 3 / 8 * 8;
  std::uint64_t a = ~crc, b = 0xFFFFFFFFu, c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < third; i += 8) {
    std::uint64_t va, vb, vc;
    std::memcpy(&va, p + i, 8);
    std::memcpy(&vb, p + third + i, 8);
    std::memcpy(&vc, p + 2 * third + i, 8);
    a = __builtin_ia32_crc32di(a, va);
    b = __builtin_ia32_crc32di(b, vb);
    c = __builtin_ia32_crc32di(c, vc);
  }
  const std::uint32_t last =
      ~crc32cSse42(p + 3 * third, size - 3 * third, static_cast<std::uint32_t>(c));
  const std::uint32_t ab = multModP(zerosOperator(third), ~static_cast<std::uint32_t>(a)) ^
                           ~static_cast<std::uint32_t>(b);
  return multModP(zerosOperator(size - 2 * third), ab) ^ last;
}

bool hostHasSse42() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
} // namespace
#endif

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) {
  const auto* p = static_cast<const std::uint8_t*>(data);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool sse42 = hostHasSse42();
  if (sse42)
    return size >= kCrc32cThreeWayBytes ? crc32cSse42x3(p, size, crc) : ~crc32cSse42(p, size, ~crc);
#endif
  static const Crc32cTable table;
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i)
    crc = table.t[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

} // namespace ember::isa
