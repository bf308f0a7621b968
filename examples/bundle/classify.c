/* classify: a standalone C program that runs an Ember ahead-of-time bundle.
 *
 * The bundle is made by `emberc MODEL.onnx --backend cpu --emit-bundle DIR
 * --bundle-name classifier`; this file needs only its header, its object file and libm:
 *
 *   cc -std=c11 -O2 -I DIR classify.c DIR/classifier.o -lm -o classify
 *   ./classify DIR/classifier.weights images.npy [--labels labels.npy]
 *              [--names names.txt] [--logits out.f32] [--show N]
 *
 * images.npy holds float32 images in C order, [N, ...] with each image shaped as the
 * model's input 0; each one is classified (arg max of output 0). With --labels (int64
 * or int32 .npy) the accuracy is printed; --logits writes every image's output 0 as raw
 * float32; --names gives one class name per line. Exit status 0 on success, 1 on any
 * error (with a message naming the file and the reason).
 */
#define _POSIX_C_SOURCE 200809L
#include "classifier.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A float32 bundle output; the example classifies with logits or probabilities. */
#if CLASSIFIER_OUTPUT0_BYTES != 4 * CLASSIFIER_OUTPUT0_ELEMENTS
#error "output 0 of the bundle is not float32"
#endif
#if CLASSIFIER_INPUT0_BYTES != 4 * CLASSIFIER_INPUT0_ELEMENTS
#error "input 0 of the bundle is not float32"
#endif

static int fail(const char* where, const char* why) {
  fprintf(stderr, "classify: error: %s: %s\n", where, why);
  return 1;
}

/* 64-byte aligned, zeroed memory (at least one line). */
static uint8_t* region(size_t bytes) {
  size_t n = (bytes + 63) / 64 * 64;
  uint8_t* p = aligned_alloc(64, n ? n : 64);
  if (p)
    memset(p, 0, n ? n : 64);
  return p;
}

/* Reads a whole file; *size gets its length. NULL on error (errno set). */
static uint8_t* readFile(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint8_t* data = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = region((size_t)n);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
      errno = EIO;
    }
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* An .npy array (version 1 or 2, C order, little-endian): its dtype ("<f4", "<i8", ...),
 * element count and data. Returns NULL and sets *why on a malformed file. */
typedef struct {
  char dtype[8];
  size_t count;
  const uint8_t* data;
} Npy;

static const char* parseNpy(const uint8_t* bytes, size_t size, Npy* out) {
  if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return "not an .npy file";
  size_t hlen, start;
  if (bytes[6] == 1) {
    hlen = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    start = 10;
  } else if (size >= 12) {
    hlen = (size_t)bytes[8] | (size_t)bytes[9] << 8 | (size_t)bytes[10] << 16 |
           (size_t)bytes[11] << 24;
    start = 12;
  } else {
    return "truncated header";
  }
  if (start + hlen > size)
    return "truncated header";
  char header[1024];
  if (hlen >= sizeof header)
    return "header too long";
  memcpy(header, bytes + start, hlen);
  header[hlen] = 0;
  const char* d = strstr(header, "'descr': '");
  const char* fo = strstr(header, "'fortran_order': False");
  const char* sh = strstr(header, "'shape': (");
  if (!d || !fo || !sh)
    return "header without descr, C order or shape";
  d += 10;
  size_t i = 0;
  while (d[i] && d[i] != '\'' && i + 1 < sizeof out->dtype) {
    out->dtype[i] = d[i];
    ++i;
  }
  out->dtype[i] = 0;
  out->count = 1;
  for (const char* p = sh + 10; *p && *p != ')';) {
    char* end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    out->count *= (size_t)v;
    p = end;
  }
  const size_t elem = out->dtype[2] ? (size_t)atoi(out->dtype + 2) : 0;
  if (elem == 0 || start + hlen + out->count * elem > size)
    return "data shorter than the shape says";
  out->data = bytes + start + hlen;
  return NULL;
}

static long label(const Npy* labels, size_t i) {
  if (strcmp(labels->dtype, "<i8") == 0) {
    int64_t v;
    memcpy(&v, labels->data + 8 * i, 8);
    return (long)v;
  }
  int32_t v;
  memcpy(&v, labels->data + 4 * i, 4);
  return (long)v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const char *weightsPath = NULL, *imagesPath = NULL, *labelsPath = NULL, *namesPath = NULL,
             *logitsPath = NULL;
  long show = 10;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--labels") == 0 && i + 1 < argc)
      labelsPath = argv[++i];
    else if (strcmp(argv[i], "--names") == 0 && i + 1 < argc)
      namesPath = argv[++i];
    else if (strcmp(argv[i], "--logits") == 0 && i + 1 < argc)
      logitsPath = argv[++i];
    else if (strcmp(argv[i], "--show") == 0 && i + 1 < argc)
      show = atol(argv[++i]);
    else if (argv[i][0] == '-')
      return fail(argv[i], "unknown option (see the comment at the top of classify.c)");
    else if (!weightsPath)
      weightsPath = argv[i];
    else if (!imagesPath)
      imagesPath = argv[i];
    else
      return fail(argv[i], "one weights file and one image file only");
  }
  if (!weightsPath || !imagesPath) {
    fprintf(stderr, "usage: classify classifier.weights images.npy [--labels labels.npy] "
                    "[--names names.txt] [--logits out.f32] [--show N]\n");
    return 1;
  }

  size_t weightBytes, imageBytes, labelBytes = 0;
  uint8_t* constants = readFile(weightsPath, &weightBytes);
  if (!constants)
    return fail(weightsPath, strerror(errno));
  if (weightBytes != CLASSIFIER_CONSTANT_BYTES)
    return fail(weightsPath, "size differs from CLASSIFIER_CONSTANT_BYTES (another bundle?)");
  uint8_t* imageFile = readFile(imagesPath, &imageBytes);
  if (!imageFile)
    return fail(imagesPath, strerror(errno));
  Npy images, labels = {{0}, 0, NULL};
  const char* why = parseNpy(imageFile, imageBytes, &images);
  if (why)
    return fail(imagesPath, why);
  if (strcmp(images.dtype, "<f4") != 0)
    return fail(imagesPath, "images must be float32 ('<f4')");
  if (images.count == 0 || images.count % CLASSIFIER_INPUT0_ELEMENTS != 0)
    return fail(imagesPath, "element count is not a multiple of the model's input size");
  const size_t n = images.count / CLASSIFIER_INPUT0_ELEMENTS;
  uint8_t* labelFile = NULL;
  if (labelsPath) {
    labelFile = readFile(labelsPath, &labelBytes);
    if (!labelFile)
      return fail(labelsPath, strerror(errno));
    if ((why = parseNpy(labelFile, labelBytes, &labels)))
      return fail(labelsPath, why);
    if (strcmp(labels.dtype, "<i8") != 0 && strcmp(labels.dtype, "<i4") != 0)
      return fail(labelsPath, "labels must be int64 or int32");
    if (labels.count != n)
      return fail(labelsPath, "not one label per image");
  }
  char names[CLASSIFIER_OUTPUT0_ELEMENTS][64];
  for (size_t c = 0; c < CLASSIFIER_OUTPUT0_ELEMENTS; ++c)
    snprintf(names[c], sizeof names[c], "class %zu", c);
  if (namesPath) {
    FILE* f = fopen(namesPath, "r");
    if (!f)
      return fail(namesPath, strerror(errno));
    for (size_t c = 0; c < CLASSIFIER_OUTPUT0_ELEMENTS && fgets(names[c], 64, f); ++c)
      names[c][strcspn(names[c], "\r\n")] = 0;
    fclose(f);
  }
  FILE* logits = NULL;
  if (logitsPath && !(logits = fopen(logitsPath, "wb")))
    return fail(logitsPath, strerror(errno));

  uint8_t* io = region(CLASSIFIER_IO_BYTES);
  uint8_t* activations = region(CLASSIFIER_ACTIVATION_BYTES);
  uint8_t* scratch = region(CLASSIFIER_SCRATCH_BYTES);
  if (!io || !activations || !scratch)
    return fail("memory", "out of memory");

  size_t correct = 0;
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    memcpy(io + CLASSIFIER_INPUT0_OFFSET, images.data + i * CLASSIFIER_INPUT0_BYTES,
           CLASSIFIER_INPUT0_BYTES);
    const double t0 = now();
    const int32_t status = classifier_run(constants, io, activations, scratch);
    total += now() - t0;
    if (status != 0)
      return fail("classifier_run", classifier_error_message(status));
    float out[CLASSIFIER_OUTPUT0_ELEMENTS];
    memcpy(out, io + CLASSIFIER_OUTPUT0_OFFSET, sizeof out);
    size_t best = 0;
    for (size_t c = 1; c < CLASSIFIER_OUTPUT0_ELEMENTS; ++c)
      if (out[c] > out[best])
        best = c;
    if (logits && fwrite(out, sizeof out, 1, logits) != 1)
      return fail(logitsPath, "write failed");
    const int hasLabel = labelFile != NULL;
    if (hasLabel && (long)best == label(&labels, i))
      ++correct;
    if ((long)i < show) {
      printf("image %zu: %s (score %.4f)", i, names[best], (double)out[best]);
      if (hasLabel)
        printf(", label %s", names[label(&labels, i)]);
      printf("\n");
    }
  }
  if (logits && fclose(logits) != 0)
    return fail(logitsPath, "write failed");
  printf("%zu image(s), %.3f ms per image (one thread)\n", n, 1e3 * total / (double)n);
  if (labelFile)
    printf("accuracy: %zu / %zu = %.2f%%\n", correct, n, 100.0 * (double)correct / (double)n);
  free(io);
  free(activations);
  free(scratch);
  free(constants);
  free(imageFile);
  free(labelFile);
  return 0;
}
