/* Freestanding memcpy/memset of the firmware (ember_mem.h): byte loops, no libc. */
#include "ember_mem.h"

#include <stdint.h>

void* ember_memcpy(void* dst, const void* src, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
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
