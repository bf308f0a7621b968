// Nchwc blocking, pixel packing and patches of I/O tensors (ARCHITECTURE section 2,
// "Data layout on the NPU"; isa::Layout).
#include "ember/platform/Io.h"

#include "ember/isa/error.h"

#include <cstring>

namespace ember::platform {

namespace {

using u64 = std::uint64_t;

u64 elements(const isa::IoEntry& e) {
  u64 n = 1;
  for (auto d : e.shape)
    n *= static_cast<u64>(d);
  return n;
}

/// Calls f(logical element index, DRAM element index) for every element of an Nchwc entry.
template <typename F> void forNchwc(const isa::IoEntry& e, unsigned L, F f) {
  if (e.shape.size() != 4 && e.shape.size() != 2)
    throw isa::Error("<io>", e.name,
                     "an nchwc tensor must be 4-D (N, C, H, W) or 2-D (N, C), not " +
                         std::to_string(e.shape.size()) + "-D");
  // A 2-D [N, C] tensor (a fully connected layer's) is [N, C, 1, 1].
  const bool flat2 = e.shape.size() == 2;
  const u64 N = u64(e.shape[0]), C = u64(e.shape[1]);
  const u64 H = flat2 ? 1 : u64(e.shape[2]), W = flat2 ? 1 : u64(e.shape[3]);
  const u64 CB = (C + L - 1) / L;
  for (u64 n = 0; n < N; ++n)
    for (u64 c = 0; c < C; ++c)
      for (u64 h = 0; h < H; ++h)
        for (u64 w = 0; w < W; ++w)
          f(((n * C + c) * H + h) * W + w, (((n * CB + c / L) * H + h) * W + w) * L + c % L);
}

/// Calls f(logical element index, DRAM element index) for every copy of every element of
/// a Packed entry (a pixel lands in up to `pixels` packed rows); pad(DRAM element index)
/// for every lane of a packed pixel that lies outside the image.
template <typename F, typename G> void forPacked(const isa::IoEntry& e, unsigned L, F f, G pad) {
  const isa::IoPacking& p = e.packing;
  if (e.shape.size() != 4 || p.pixels == 0 || p.stride == 0 || u64(p.pixels) * u64(e.shape[1]) > L)
    throw isa::Error("<io>", e.name, "a packed tensor needs a rank-4 shape and a packing");
  const u64 N = u64(e.shape[0]), C = u64(e.shape[1]), H = u64(e.shape[2]), W = u64(e.shape[3]);
  for (u64 n = 0; n < N; ++n)
    for (u64 h = 0; h < H; ++h)
      for (u64 xp = 0; xp < p.width; ++xp)
        for (u64 dx = 0; dx < p.pixels; ++dx) {
          const std::int64_t x = std::int64_t(xp * p.stride + dx) - std::int64_t(p.pad_left);
          const u64 row = ((n * H + h) * p.width + xp) * L + dx * C;
          for (u64 c = 0; c < C; ++c) {
            if (x < 0 || u64(x) >= W)
              pad(row + c);
            else
              f(((n * C + c) * H + h) * W + u64(x), row + c);
          }
        }
}

/// forPacked for a Patches entry: every tap of every output pixel's window (an element
/// lands in as many windows as cover it).
template <typename F, typename G> void forPatches(const isa::IoEntry& e, unsigned L, F f, G pad) {
  const isa::IoPatches& p = e.patches;
  if (e.shape.size() != 4 || !p.kernel_h || !p.kernel_w || !p.out_h || !p.out_w)
    throw isa::Error("<io>", e.name, "a patches tensor needs a rank-4 shape and its windows");
  const u64 N = u64(e.shape[0]), C = u64(e.shape[1]), H = u64(e.shape[2]), W = u64(e.shape[3]);
  const u64 K = C * p.kernel_h * p.kernel_w, KB = (K + L - 1) / L;
  const u64 OH = p.out_h, OW = p.out_w;
  for (u64 n = 0; n < N; ++n)
    for (u64 oy = 0; oy < OH; ++oy)
      for (u64 ox = 0; ox < OW; ++ox)
        for (u64 kh = 0; kh < p.kernel_h; ++kh)
          for (u64 kw = 0; kw < p.kernel_w; ++kw) {
            const std::int64_t y = std::int64_t(oy * p.stride_h + kh * p.dilation_h) - p.pad_top;
            const std::int64_t x = std::int64_t(ox * p.stride_w + kw * p.dilation_w) - p.pad_left;
            const bool in = y >= 0 && u64(y) < H && x >= 0 && u64(x) < W;
            for (u64 c = 0; c < C; ++c) {
              const u64 k = (kh * p.kernel_w + kw) * C + c; // the patch channel
              const u64 di = (((n * KB + k / L) * OH + oy) * OW + ox) * L + k % L;
              if (in)
                f(((n * C + c) * H + u64(y)) * W + u64(x), di);
              else
                pad(di);
            }
          }
}

/// forPacked or forPatches, as the layout says: the layouts the host writes with copies
/// of pixels and the zero point outside the image.
template <typename F, typename G> void forCopies(const isa::IoEntry& e, unsigned L, F f, G pad) {
  if (e.layout == isa::Layout::Patches)
    forPatches(e, L, f, pad);
  else
    forPacked(e, L, f, pad);
}

} // namespace

std::vector<std::uint8_t> packIo(const isa::IoEntry& e, const std::vector<std::uint8_t>& elems,
                                 unsigned lanes) {
  const unsigned es = isa::sizeOf(e.dtype);
  if (elems.size() != elements(e) * es)
    throw isa::Error("<io>", e.name,
                     std::to_string(elems.size() / es) + " elements given, the shape holds " +
                         std::to_string(elements(e)));
  std::vector<std::uint8_t> out(e.size_bytes, 0);
  if (e.layout == isa::Layout::Flat) {
    std::memcpy(out.data(), elems.data(), std::min<std::size_t>(out.size(), elems.size()));
    return out;
  }
  if (e.layout == isa::Layout::Packed || e.layout == isa::Layout::Patches) {
    // Outside the image: the zero point (the real value 0, the convolution's padding).
    const std::int64_t zp = e.zero_point;
    std::uint8_t zpBytes[4];
    for (unsigned b = 0; b < 4; ++b)
      zpBytes[b] = std::uint8_t(std::uint64_t(zp) >> (8 * b));
    forCopies(
        e, lanes,
        [&](u64 li, u64 di) {
          if ((di + 1) * es <= out.size())
            std::memcpy(out.data() + di * es, elems.data() + li * es, es);
        },
        [&](u64 di) {
          if ((di + 1) * es <= out.size())
            std::memcpy(out.data() + di * es, zpBytes, es);
        });
    return out;
  }
  forNchwc(e, lanes, [&](u64 li, u64 di) {
    if ((di + 1) * es <= out.size())
      std::memcpy(out.data() + di * es, elems.data() + li * es, es);
  });
  return out;
}

std::vector<std::uint8_t> unpackIo(const isa::IoEntry& e, const std::uint8_t* dram,
                                   unsigned lanes) {
  const unsigned es = isa::sizeOf(e.dtype);
  std::vector<std::uint8_t> out(elements(e) * es, 0);
  if (e.layout == isa::Layout::Flat) {
    std::memcpy(out.data(), dram, std::min<std::size_t>(out.size(), e.size_bytes));
    return out;
  }
  if (e.layout == isa::Layout::Packed || e.layout == isa::Layout::Patches) {
    // Every copy of a pixel holds the same value: the last one read wins.
    forCopies(
        e, lanes,
        [&](u64 li, u64 di) {
          if ((di + 1) * es <= e.size_bytes)
            std::memcpy(out.data() + li * es, dram + di * es, es);
        },
        [](u64) {});
    return out;
  }
  forNchwc(e, lanes, [&](u64 li, u64 di) {
    if ((di + 1) * es <= e.size_bytes)
      std::memcpy(out.data() + li * es, dram + di * es, es);
  });
  return out;
}

const isa::IoEntry& inputEntry(const isa::Binary& bin, const std::string& name, std::size_t size) {
  const isa::IoEntry* entry = nullptr;
  for (const auto& io : bin.io)
    if (io.name == name && io.dir == isa::IoDir::Input)
      entry = &io;
  if (!entry)
    throw isa::Error("<inputs>", name, "the binary has no input of this name");
  if (size != entry->size_bytes)
    throw isa::Error("<inputs>", name,
                     std::to_string(size) + " bytes given, the I/O table says " +
                         std::to_string(entry->size_bytes));
  return *entry;
}

} // namespace ember::platform
