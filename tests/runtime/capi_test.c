/* The runtime's C API from C (ember/runtime/ember_runtime.h): open, submit a binary
 * (argv[1]) twice, wait, read the output, close. Prints the cycles; exit 0 on success. */
#include "ember/runtime/ember_runtime.h"

#include <stdio.h>

int main(int argc, char** argv) {
  char err[256];
  if (argc < 2)
    return 2;
  ember_rt_device* dev = ember_rt_open(NULL, err, sizeof err);
  if (!dev) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  uint32_t jobs[2];
  for (int k = 0; k < 2; ++k)
    if (ember_rt_submit(dev, argv[1], NULL, NULL, NULL, 0, 1000000, &jobs[k], err, sizeof err)) {
      fprintf(stderr, "submit: %s\n", err);
      return 1;
    }
  for (int k = 0; k < 2; ++k) {
    ember_completion c;
    if (ember_rt_wait(dev, jobs[k], 10000, &c) != 1 || c.status != EMBER_JOB_DONE) {
      fprintf(stderr, "job %u did not finish\n", jobs[k]);
      return 1;
    }
    unsigned char y[256];
    long n = ember_rt_output(dev, jobs[k], "y", y, sizeof y);
    printf("C API: job %u done, %llu cycles, output y %ld bytes\n", jobs[k],
           (unsigned long long)c.cycles, n);
    if (n != 256)
      return 1;
  }
  if (ember_rt_wait(dev, 99, 10, &(ember_completion){0}) >= 0)
    return 1; /* never submitted */
  ember_rt_close(dev);
  return 0;
}
