/* Freestanding memory helpers of the firmware (it links no libc): used by the ring loop
 * (firmware/src/loop.c) and by the rv32 HAL's memcpy/memset (firmware/rv32/hal_mmio.c),
 * which the compiler may call for struct copies. They depend on nothing, so every
 * arrow between the firmware's files points one way: loop -> HAL, loop -> mem,
 * HAL -> mem. */
#ifndef EMBER_MEM_H
#define EMBER_MEM_H

#include <stddef.h>

/* Prefixed like every firmware symbol when EMBER_FW_PREFIX is set (ember_fw.h). */
#ifdef EMBER_FW_PREFIX
#ifndef EMBER_FW_NAME
#define EMBER_FW_PASTE2(a, b) a##b
#define EMBER_FW_PASTE(a, b) EMBER_FW_PASTE2(a, b)
#define EMBER_FW_NAME(n) EMBER_FW_PASTE(EMBER_FW_PREFIX, n)
#endif
#define ember_memcpy EMBER_FW_NAME(ember_memcpy)
#define ember_memset EMBER_FW_NAME(ember_memset)
#endif

#ifdef __cplusplus
extern "C" {
#endif

void* ember_memcpy(void* dst, const void* src, size_t n);
void* ember_memset(void* dst, int c, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_MEM_H */
