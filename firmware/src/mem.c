/* Freestanding memcpy/memset of the firmware (ember_mem.h): no libc. The copy moves
 * words (a pointer's width: 4 bytes on rv32, 8 on a 64-bit host) when both pointers are
 * word-aligned, as they are for the constants of a model (megabytes, copied into the
 * window at every job: docs/firmware.md section 5), bytes otherwise. */
#include "ember_mem.h"

#include <stdint.h>

void* ember_memcpy(void* dst, const void* src, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  if ((((uintptr_t)d | (uintptr_t)s) & (sizeof(uintptr_t) - 1)) == 0) {
    uintptr_t* dw = (uintptr_t*)dst;
    const uintptr_t* sw = (const uintptr_t*)src;
    for (; n >= sizeof(uintptr_t); n -= sizeof(uintptr_t))
      *dw++ = *sw++;
    d = (uint8_t*)dw;
    s = (const uint8_t*)sw;
  }
  while (n--)
    *d++ = *s++;
  return dst;
}

void* ember_memset(void* dst, int c, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  while (n--)
    *d++ = (uint8_t)c;
  return dst;
}
