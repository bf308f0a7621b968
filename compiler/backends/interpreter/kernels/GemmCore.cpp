// Blocked SGEMM (see GemmCore.h): BLIS-style loops around packed panels and a 6 x 16
// register-blocked micro-kernel. The micro-kernel is written once with GCC/Clang vector
// types; on x86-64 a copy compiled for AVX2+FMA is chosen at run time when the CPU has
// them, the baseline (SSE2) copy otherwise.
#include "GemmCore.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>
#include <vector>

namespace ember {

namespace {

constexpr int64_t MR = 6;     // rows of the micro-tile
constexpr int64_t MAXNR = 32; // widest micro-tile (AVX-512: two 16-float vectors)
constexpr int64_t KC = 256;   // depth of a packed panel
constexpr int64_t MC = 144;   // rows of A packed at once (multiple of MR)
constexpr int64_t NC = 2048;  // columns of B packed at once (multiple of every NR)

typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

/// out[MR x NR] = sum over p < kc of A(i, p) * b[p * NR + j], with NR = 2 vectors of
/// type V held in registers for each of the MR rows. A(i, p) is a[p * MR + i] in a
/// packed panel (Packed) or a[i * lda + p] read in place from a row-major A.
template <typename V, bool Packed>
__attribute__((always_inline)) inline void microKernelBody(int64_t kc, const float* a, int64_t lda,
                                                           const float* b, float* out) {
  constexpr int64_t W = sizeof(V) / sizeof(float), NR = 2 * W;
  V c[MR][2];
#pragma GCC unroll 6
  for (int64_t i = 0; i < MR; ++i)
    c[i][0] = c[i][1] = V{};
  for (int64_t p = 0; p < kc; ++p) {
    V b0, b1;
    std::memcpy(&b0, b + p * NR, sizeof b0);
    std::memcpy(&b1, b + p * NR + W, sizeof b1);
#pragma GCC unroll 6
    for (int64_t i = 0; i < MR; ++i) {
      const V ai = V{} + (Packed ? a[p * MR + i] : a[i * lda + p]);
      c[i][0] += ai * b0;
      c[i][1] += ai * b1;
    }
  }
#pragma GCC unroll 6
  for (int64_t i = 0; i < MR; ++i) {
    std::memcpy(out + i * NR, &c[i][0], sizeof c[i][0]);
    std::memcpy(out + i * NR + W, &c[i][1], sizeof c[i][1]);
  }
}

using MicroKernelFn = void (*)(int64_t, const float*, int64_t, const float*, float*);

/// The micro-kernels chosen for this CPU (A packed, A in place) and their tile width.
struct MicroKernel {
  MicroKernelFn packed, direct;
  int64_t nr;
};

#define EMBER_MICRO_KERNELS(NAME, V, ATTR)                                                         \
  ATTR void NAME##Packed(int64_t kc, const float* a, int64_t lda, const float* b, float* out) {    \
    microKernelBody<V, true>(kc, a, lda, b, out);                                                  \
  }                                                                                                \
  ATTR void NAME##Direct(int64_t kc, const float* a, int64_t lda, const float* b, float* out) {    \
    microKernelBody<V, false>(kc, a, lda, b, out);                                                 \
  }

EMBER_MICRO_KERNELS(microKernelGeneric, v8f, )

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#define EMBER_TARGET(isa) __attribute__((target(isa)))
#else
#define EMBER_TARGET(isa) __attribute__((target(isa), optimize("fp-contract=fast")))
#endif
EMBER_MICRO_KERNELS(microKernelAvx2, v8f, EMBER_TARGET("avx2,fma"))
EMBER_MICRO_KERNELS(microKernelAvx512, v16f, EMBER_TARGET("avx512f,fma"))

MicroKernel selectMicroKernel() {
  __builtin_cpu_init();
  const char* isa = std::getenv("EMBER_GEMM_ISA"); // "avx512", "avx2" or "generic"
  const std::string want = isa ? isa : "";
  if ((want.empty() || want == "avx512") && __builtin_cpu_supports("avx512f"))
    return {microKernelAvx512Packed, microKernelAvx512Direct, 32};
  if ((want.empty() || want == "avx512" || want == "avx2") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    return {microKernelAvx2Packed, microKernelAvx2Direct, 16};
  return {microKernelGenericPacked, microKernelGenericDirect, 16};
}
#else
MicroKernel selectMicroKernel() {
  return {microKernelGenericPacked, microKernelGenericDirect, 16};
}
#endif

const MicroKernel& microKernel() {
  static const MicroKernel k = selectMicroKernel();
  return k;
}

/// Packs rows [0, mc) x depth [0, kc) of A into panels of MR rows (zero-padded). The
/// panel is written sequentially, reading MR rows of A side by side.
void packA(int64_t mc, int64_t kc, MatView a, float* dst) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = std::min(MR, mc - ir);
    if (mr == MR && a.colStride == 1) {
      const float* src[MR];
      for (int64_t i = 0; i < MR; ++i)
        src[i] = a.data + (ir + i) * a.rowStride;
      for (int64_t p = 0; p < kc; ++p)
#pragma GCC unroll 6
        for (int64_t i = 0; i < MR; ++i)
          dst[p * MR + i] = src[i][p];
    } else {
      for (int64_t p = 0; p < kc; ++p)
        for (int64_t i = 0; i < MR; ++i)
          dst[p * MR + i] = i < mr ? a.data[(ir + i) * a.rowStride + p * a.colStride] : 0.f;
    }
    dst += MR * kc;
  }
}

/// Packs depth [0, kc) x columns [0, nc) of B into panels of NR columns (zero-padded).
void packB(int64_t kc, int64_t nc, MatView b, float* dst, int64_t NR) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t nr = std::min(NR, nc - jr);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b.data + p * b.rowStride + jr * b.colStride;
      float* d = dst + p * NR;
      if (b.colStride == 1)
        std::memcpy(d, src, sizeof(float) * static_cast<size_t>(nr));
      else
        for (int64_t j = 0; j < nr; ++j)
          d[j] = src[j * b.colStride];
      for (int64_t j = nr; j < NR; ++j)
        d[j] = 0.f;
    }
    dst += NR * kc;
  }
}

/// Writes one micro-tile into C: C = alpha * acc + (first ? beta * C : C).
void storeTile(const float* acc, int64_t mr, int64_t nr, int64_t NR, float alpha, float beta,
               bool first, float* c, int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* t = acc + i * NR;
    if (!first)
      for (int64_t j = 0; j < nr; ++j)
        row[j] += alpha * t[j];
    else if (beta == 0.f)
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * t[j];
    else
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * t[j] + beta * row[j];
  }
}

/// sum of x[i] * y[i] over n contiguous elements, with eight-lane partial sums.
float dot(const float* x, const float* y, int64_t n) {
  v8f acc0{}, acc1{};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v8f x0, x1, y0, y1;
    std::memcpy(&x0, x + i, sizeof x0);
    std::memcpy(&x1, x + i + 8, sizeof x1);
    std::memcpy(&y0, y + i, sizeof y0);
    std::memcpy(&y1, y + i + 8, sizeof y1);
    acc0 += x0 * y0;
    acc1 += x1 * y1;
  }
  acc0 += acc1;
  float s = 0.f;
  for (int j = 0; j < 8; ++j)
    s += acc0[j];
  for (; i < n; ++i)
    s += x[i] * y[i];
  return s;
}

/// Matrix-vector products (m == 1 or n == 1), where packing would cost more than the
/// arithmetic. Returns false when the layout does not suit (then the blocked path runs).
bool gemv(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta, float* c,
          int64_t ldc) {
  auto store = [&](float* dst, float v) { *dst = alpha * v + (beta == 0.f ? 0.f : beta * *dst); };
  std::vector<float> tmp;
  auto contiguous = [&](const float* p, int64_t stride) -> const float* {
    if (stride == 1)
      return p;
    tmp.resize(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
      tmp[size_t(i)] = p[i * stride];
    return tmp.data();
  };
  if (n == 1 && a.colStride == 1) {
    const float* x = contiguous(b.data, b.rowStride);
    for (int64_t i = 0; i < m; ++i)
      store(c + i * ldc, dot(a.data + i * a.rowStride, x, k));
    return true;
  }
  if (m == 1 && b.rowStride == 1) {
    const float* x = contiguous(a.data, a.colStride);
    for (int64_t j = 0; j < n; ++j)
      store(c + j, dot(b.data + j * b.colStride, x, k));
    return true;
  }
  if (m == 1 && b.colStride == 1) {
    std::vector<float> acc(static_cast<size_t>(n), 0.f);
    for (int64_t p = 0; p < k; ++p) {
      const float s = a.data[p * a.colStride];
      const float* row = b.data + p * b.rowStride;
      for (int64_t j = 0; j < n; ++j)
        acc[size_t(j)] += s * row[j];
    }
    for (int64_t j = 0; j < n; ++j)
      store(c + j, acc[size_t(j)]);
    return true;
  }
  return false;
}

/// 64-byte aligned scratch buffers, one pair per thread, grown on demand.
struct PackBuffers {
  std::vector<float> a, b;
  static float* aligned(std::vector<float>& v, size_t n) {
    if (v.size() < n + 16)
      v.resize(n + 16);
    auto addr = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((64 - addr % 64) % 64) / sizeof(float);
  }
};

/// A small persistent pool: run(parts, f) calls f(0 .. parts-1), part 0 on the caller.
/// One caller at a time; a concurrent caller gets `false` and runs serially.
class WorkerPool {
public:
  explicit WorkerPool(int workers) {
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_)
      t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  bool run(const std::function<void(int)>& f) {
    std::unique_lock<std::mutex> busy(callMu_, std::try_to_lock);
    if (!busy.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = &f;
      pending_ = static_cast<int>(threads_.size());
      ++generation_;
    }
    wake_.notify_all();
    f(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    return true;
  }

private:
  void loop(int part) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* f;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
        f = task_;
      }
      (*f)(part);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_, callMu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

/// Threads used by one product: EMBER_NUM_THREADS, else the hardware's (at most 4).
int gemmThreads() {
  static const int n = [] {
    if (const char* e = std::getenv("EMBER_NUM_THREADS")) {
      const int v = std::atoi(e);
      return std::max(1, std::min(v, 64));
    }
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, std::min(hw, 4));
  }();
  return n;
}

/// The single-threaded blocked product (see sgemm).
void sgemmBlocked(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta,
                  float* c, int64_t ldc) {
  const MicroKernel& kernel = microKernel();
  const int64_t NR = kernel.nr;
  thread_local PackBuffers buffers;
  float* bp = PackBuffers::aligned(buffers.b, static_cast<size_t>(KC * NC));
  float* ap = PackBuffers::aligned(buffers.a, static_cast<size_t>(KC * MC));
  alignas(64) float acc[MR * MAXNR];

  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    // With few column panels, A is read in place (packing it would cost about as much
    // as the arithmetic it saves).
    const bool direct = a.colStride == 1 && nc <= 4 * NR;
    for (int64_t pc = 0; pc < k; pc += KC) {
      const int64_t kc = std::min(KC, k - pc);
      const bool first = pc == 0;
      packB(kc, nc, {b.data + pc * b.rowStride + jc * b.colStride, b.rowStride, b.colStride}, bp,
            NR);
      for (int64_t ic = 0; ic < m; ic += MC) {
        const int64_t mc = std::min(MC, m - ic);
        const float* a0 = a.data + ic * a.rowStride + pc * a.colStride;
        if (!direct)
          packA(mc, kc, {a0, a.rowStride, a.colStride}, ap);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = std::min(NR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = std::min(MR, mc - ir);
            if (!direct) {
              kernel.packed(kc, ap + ir * kc, 0, bp + jr * kc, acc);
            } else if (mr == MR) {
              kernel.direct(kc, a0 + ir * a.rowStride, a.rowStride, bp + jr * kc, acc);
            } else {
              packA(mr, kc, {a0 + ir * a.rowStride, a.rowStride, 1}, ap);
              kernel.packed(kc, ap, 0, bp + jr * kc, acc);
            }
            storeTile(acc, mr, nr, NR, alpha, beta, first, c + (ic + ir) * ldc + jc + jr, ldc);
          }
        }
      }
    }
  }
}

} // namespace

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, MatView a, MatView b, float beta, float* c,
           int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return;
  }
  if ((m == 1 || n == 1) && gemv(m, n, k, alpha, a, b, beta, c, ldc))
    return;
  // Large products are split into independent slabs of C (columns when C is wide,
  // rows otherwise), one per thread. Every element is still computed by the same
  // sequence of operations, so results do not depend on the number of threads.
  const int threads = gemmThreads();
  if (threads > 1 && double(m) * double(n) * double(k) >= double(1 << 21)) {
    static WorkerPool pool(threads - 1);
    static const pid_t owner = getpid(); // a forked child has no workers: run serially
    const bool byCols = n >= m;
    const int64_t extent = byCols ? n : m, unit = byCols ? microKernel().nr : MR;
    const int64_t units = (extent + unit - 1) / unit;
    const int parts = static_cast<int>(std::min<int64_t>(pool.size(), units));
    const std::function<void(int)> slab = [&](int part) {
      const int64_t lo = units * part / parts * unit;
      const int64_t hi = std::min(extent, units * (part + 1) / parts * unit);
      if (lo >= hi)
        return;
      if (byCols)
        sgemmBlocked(m, hi - lo, k, alpha, a, {b.data + lo * b.colStride, b.rowStride, b.colStride},
                     beta, c + lo, ldc);
      else
        sgemmBlocked(hi - lo, n, k, alpha, {a.data + lo * a.rowStride, a.rowStride, a.colStride}, b,
                     beta, c + lo * ldc, ldc);
    };
    if (parts > 1 && getpid() == owner && pool.run(slab))
      return;
  }
  sgemmBlocked(m, n, k, alpha, a, b, beta, c, ldc);
}

void sgemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) {
  MatView av = transA ? MatView{a, 1, lda} : MatView{a, lda, 1};
  MatView bv = transB ? MatView{b, 1, ldb} : MatView{b, ldb, 1};
  sgemm(m, n, k, alpha, av, bv, beta, c, ldc);
}

} // namespace ember
