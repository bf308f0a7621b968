// Host-side I/O layout: NCHWc blocking of 4-D and 2-D entries, pixel packing, patches,
// flat entries, errors.
#include "ember/platform/Io.h"
#include "ember/isa/error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using ember::isa::IoEntry;

IoEntry entry(std::vector<std::int64_t> shape, std::uint64_t size, ember::isa::Layout layout) {
  IoEntry e;
  e.name = "t";
  e.dtype = ember::isa::DType::Int8;
  e.layout = layout;
  e.shape = std::move(shape);
  e.size_bytes = size;
  return e;
}

std::vector<std::uint8_t> iota(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::uint8_t(i + 1);
  return v;
}

// [1, 5, 2, 1] with L = 4: two channel blocks; byte ((cb*H + h)*W + w)*L + c%L.
TEST(SimIo, Nchwc4dBlocksChannelsAndPadsWithZeros) {
  IoEntry e = entry({1, 5, 2, 1}, 2 * 2 * 4, ember::isa::Layout::Nchwc);
  auto packed = ember::platform::packIo(e, iota(10), 4);
  // logical element (c, h) holds 1 + c*2 + h.
  std::vector<std::uint8_t> want = {1, 3, 5, 7, 2, 4, 6, 8, 9, 0, 0, 0, 10, 0, 0, 0};
  EXPECT_EQ(packed, want);
  EXPECT_EQ(ember::platform::unpackIo(e, packed.data(), 4), iota(10));
}

// A 2-D [N, C] entry is [N, C, 1, 1]: rows of L channels per batch element.
TEST(SimIo, Nchwc2dIsNc11) {
  IoEntry e = entry({2, 6}, 2 * 2 * 4, ember::isa::Layout::Nchwc);
  auto packed = ember::platform::packIo(e, iota(12), 4);
  std::vector<std::uint8_t> want = {1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0};
  EXPECT_EQ(packed, want);
  EXPECT_EQ(ember::platform::unpackIo(e, packed.data(), 4), iota(12));
}

// Packed (docs/isa/assembly-binary.md, the .ember.io section): a 1 x 2 x 1 x 4 image (channels c,
// pixels x: element 1 + c * 4 + x) in rows of L = 8 lanes, 3 pixels per row (lane dx * 2 + c),
// stride 2, one pixel of left padding, 3 packed pixels: packed pixel xp holds pixels
// 2 xp - 1, 2 xp, 2 xp + 1; outside the image the zero point (-3 = 0xfd); lanes 6 and 7 0.
TEST(SimIo, PackedPutsNeighbouringPixelsSideBySide) {
  IoEntry e = entry({1, 2, 1, 4}, 3 * 8, ember::isa::Layout::Packed);
  e.zero_point = -3;
  e.packing = {3, 2, 1, 3};
  const std::uint8_t z = 0xfd;
  const std::vector<std::uint8_t> want = {
      z, z, 1, 5, 2, 6, 0, 0, // xp 0: pixels -1, 0, 1
      2, 6, 3, 7, 4, 8, 0, 0, // xp 1: pixels 1, 2, 3
      4, 8, z, z, z, z, 0, 0, // xp 2: pixels 3, 4, 5
  };
  const auto packed = ember::platform::packIo(e, iota(8), 8);
  EXPECT_EQ(packed, want);
  EXPECT_EQ(ember::platform::unpackIo(e, packed.data(), 8), iota(8));
}

// Patches (docs/isa/assembly-binary.md, the .ember.io section): a 1 x 2 x 2 x 3 image
// (element 1 + c * 6 + y * 3 + x) as the windows of a 2 x 2 kernel, stride 1 x 2, one pixel
// of left padding, 1 x 2 outputs, L = 4: patch channel k = (kh * 2 + kw) * 2 + c, 8 of them
// in two lane blocks, Nchwc [1, 8, 1, 2]. Output ox reads columns 2 ox - 1 and 2 ox; outside the
// image the zero point (-3 = 0xfd).
TEST(SimIo, PatchesHoldEachOutputPixelsWindow) {
  IoEntry e = entry({1, 2, 2, 3}, 16, ember::isa::Layout::Patches);
  e.zero_point = -3;
  e.patches = {2, 2, 1, 2, 1, 1, 0, 1, 1, 2};
  const std::uint8_t z = 0xfd;
  const std::vector<std::uint8_t> want = {
      z, z,  1, 7,  // block 0, ox 0: (kh 0, kw 0) x = -1; (0, 1) x = 0
      2, 8,  3, 9,  // block 0, ox 1: (0, 0) x = 1; (0, 1) x = 2
      z, z,  4, 10, // block 1, ox 0: (1, 0) x = -1; (1, 1) x = 0
      5, 11, 6, 12  // block 1, ox 1: (1, 0) x = 1; (1, 1) x = 2
  };
  const auto packed = ember::platform::packIo(e, iota(12), 4);
  EXPECT_EQ(packed, want);
  EXPECT_EQ(ember::platform::unpackIo(e, packed.data(), 4), iota(12));
}

TEST(SimIo, FlatIsCopiedAndErrorsNameTheEntry) {
  IoEntry flat = entry({3}, 4, ember::isa::Layout::Flat);
  EXPECT_EQ(ember::platform::packIo(flat, iota(3), 16), (std::vector<std::uint8_t>{1, 2, 3, 0}));
  EXPECT_THROW(ember::platform::packIo(flat, iota(2), 16), ember::isa::Error);
  IoEntry three = entry({1, 4, 2}, 64, ember::isa::Layout::Nchwc);
  try {
    ember::platform::packIo(three, iota(8), 4);
    FAIL() << "a 3-D nchwc entry must be refused";
  } catch (const ember::isa::Error& err) {
    EXPECT_NE(std::string(err.what()).find("4-D (N, C, H, W) or 2-D (N, C), not 3-D"),
              std::string::npos);
  }
}

} // namespace
