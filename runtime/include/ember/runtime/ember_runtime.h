/* The C API of libember_runtime, for embedding the NPU runtime in C programs
 * (docs/firmware.md section 7): open a device (the SystemC model behind the firmware),
 * submit NPU binaries with their inputs, wait for completions with a timeout, read
 * outputs. Functions return 0 on success and a negative number on error, with a
 * message in `err` (NUL-terminated, truncated to err_size). */
#ifndef EMBER_RUNTIME_H
#define EMBER_RUNTIME_H

#include "ember_ring.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ember_rt_device ember_rt_device;

/* A device for the description at `isa_json` (NULL: the default description). */
ember_rt_device* ember_rt_open(const char* isa_json, char* err, size_t err_size);
void ember_rt_close(ember_rt_device* dev);

/* Submits the binary at `elf_path`; inputs are `n_inputs` (name, DRAM-layout bytes, size)
 * triples (a missing input is zeros). Stores the job number in *job. */
int ember_rt_submit(ember_rt_device* dev, const char* elf_path, const char* const* input_names,
                    const void* const* input_data, const size_t* input_sizes, size_t n_inputs,
                    uint64_t cycle_budget, uint32_t* job, char* err, size_t err_size);

/* Waits at most timeout_ms for `job`: 1 and *out filled when it finished (again for a job
 * already waited for: its completion is kept until ember_rt_close), 0 on timeout, a
 * negative number for a job never submitted. */
int ember_rt_wait(ember_rt_device* dev, uint32_t job, uint32_t timeout_ms, ember_completion* out);

/* Copies output `name` of a collected DONE job (DRAM-layout bytes) into buf; returns its
 * size, or a negative number (no such output, buffer too small). */
long ember_rt_output(ember_rt_device* dev, uint32_t job, const char* name, void* buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_RUNTIME_H */
