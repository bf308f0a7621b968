// Binary tables: names of enums, equality, and consistency checks against the ISA.
#include "ember/isa/binary.h"
#include "ember/isa/roles.h"

#include "ember/support/AtomicFile.h"

#include "ember/isa/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace ember::isa {

namespace {
const char* const kDTypes[] = {"int8", "uint8", "int32", "float32"};
const char* const kLayouts[] = {"flat", "nchwc", "packed", "patches"};
const char* const kDirs[] = {"input", "output"};
const char* const kKinds[] = {"const", "input", "output", "scratch"};

template <typename E, std::size_t N>
bool parseName(std::string_view s, const char* const (&names)[N], E& out) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i]) {
      out = E(i);
      return true;
    }
  return false;
}

template <std::size_t N> const char* nameAt(const char* const (&names)[N], std::size_t i) {
  return i < N ? names[i] : "?";
}
} // namespace

const char* toString(DType v) {
  return nameAt(kDTypes, std::size_t(v));
}
const char* toString(Layout v) {
  return nameAt(kLayouts, std::size_t(v));
}
const char* toString(IoDir v) {
  return nameAt(kDirs, std::size_t(v));
}
const char* toString(RegionKind v) {
  return nameAt(kKinds, std::size_t(v));
}
bool parse(std::string_view s, DType& out) {
  return parseName(s, kDTypes, out);
}
bool parse(std::string_view s, Layout& out) {
  return parseName(s, kLayouts, out);
}
bool parse(std::string_view s, IoDir& out) {
  return parseName(s, kDirs, out);
}
bool parse(std::string_view s, RegionKind& out) {
  return parseName(s, kKinds, out);
}

unsigned sizeOf(DType t) {
  switch (t) {
  case DType::Int8:
  case DType::UInt8:
    return 1;
  case DType::Int32:
  case DType::Float32:
    return 4;
  }
  return 1;
}

bool IoEntry::operator==(const IoEntry& o) const {
  // Bitwise comparison of the scale, so NaN payloads and -0 round-trip too.
  return name == o.name && dir == o.dir && dtype == o.dtype && layout == o.layout &&
         shape == o.shape && std::memcmp(&scale, &o.scale, sizeof scale) == 0 &&
         zero_point == o.zero_point && dram_offset == o.dram_offset && size_bytes == o.size_bytes &&
         packing == o.packing && patches == o.patches;
}

Binary Binary::forIsa(const IsaDescription& isa) {
  Binary b;
  b.isa_name = isa.name();
  b.isa_hash = isa.hash();
  return b;
}

const std::string* Binary::nodeOf(std::size_t index) const {
  for (const auto& r : debug)
    if (index >= r.first && index < std::size_t(r.first) + r.count)
      return &r.node;
  return nullptr;
}

bool Binary::operator==(const Binary& o) const {
  return isa_name == o.isa_name && isa_hash == o.isa_hash && code == o.code &&
         constants == o.constants && io == o.io && memmap == o.memmap && debug == o.debug;
}

namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 40;

/// Bytes the tensor needs in DRAM, or 0 on overflow / invalid shape (reason in `why`).
std::uint64_t neededBytes(const IoEntry& e, const IsaDescription& isa, std::string& why) {
  if (e.shape.empty() || e.shape.size() > 8) {
    why = "rank " + std::to_string(e.shape.size()) + " (must be 1..8)";
    return 0;
  }
  std::vector<std::uint64_t> dims;
  for (auto d : e.shape) {
    if (d <= 0 || std::uint64_t(d) > kMaxElements) {
      why = "dimension " + std::to_string(d) + " (must be 1.." + std::to_string(kMaxElements) + ")";
      return 0;
    }
    dims.push_back(std::uint64_t(d));
  }
  if (e.layout == Layout::Nchwc) {
    if (dims.size() != 4) {
      why = "layout nchwc needs a rank-4 N,C,H,W shape";
      return 0;
    }
    std::uint64_t lanes = isa.memory(mem::kAct).lanes();
    dims[1] = (dims[1] + lanes - 1) / lanes * lanes;
  }
  if (e.layout == Layout::Packed) {
    const IoPacking& p = e.packing;
    const std::uint64_t lanes = isa.memory(mem::kAct).lanes();
    if (dims.size() != 4) {
      why = "layout packed needs a rank-4 N,C,H,W shape";
      return 0;
    }
    if (e.dir != IoDir::Input) {
      why = "layout packed is for inputs only";
      return 0;
    }
    if (p.pixels == 0 || p.stride == 0 || p.width == 0 || p.pixels * dims[1] > lanes) {
      why = "packing " + std::to_string(p.pixels) + " pixels of " + std::to_string(dims[1]) +
            " channels at stride " + std::to_string(p.stride) + ", width " +
            std::to_string(p.width) +
            " (needs pixels, stride, width >= 1 and pixels x C <= " + std::to_string(lanes) +
            " lanes)";
      return 0;
    }
    dims = {dims[0], dims[2], p.width, lanes}; // N, H, width, L
  } else if (!(e.packing == IoPacking{})) {
    why = std::string("packing given for layout ") + toString(e.layout);
    return 0;
  }
  if (e.layout == Layout::Patches) {
    const IoPatches& p = e.patches;
    const std::uint64_t lanes = isa.memory(mem::kAct).lanes();
    if (dims.size() != 4 || e.dir != IoDir::Input) {
      why = "layout patches is for rank-4 N,C,H,W inputs only";
      return 0;
    }
    const std::uint64_t taps = std::uint64_t(p.kernel_h) * p.kernel_w;
    if (!p.kernel_h || !p.kernel_w || !p.stride_h || !p.stride_w || !p.dilation_h ||
        !p.dilation_w || !p.out_h || !p.out_w || dims[1] > kMaxElements / taps) {
      why = "patches of a " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
            " kernel, stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
            ", dilation " + std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) +
            ", " + std::to_string(p.out_h) + "x" + std::to_string(p.out_w) +
            " outputs (needs every one >= 1 and C x kernel <= 2^40)";
      return 0;
    }
    const std::uint64_t k = dims[1] * taps;
    dims = {dims[0], (k + lanes - 1) / lanes * lanes, p.out_h, p.out_w}; // Nchwc of the patches
  } else if (!(e.patches == IoPatches{})) {
    why = std::string("patches given for layout ") + toString(e.layout);
    return 0;
  }
  std::uint64_t n = sizeOf(e.dtype);
  for (auto d : dims) {
    if (n > kMaxElements / d) {
      why = "tensor larger than 2^40 bytes";
      return 0;
    }
    n *= d;
  }
  return n;
}

bool inside(std::uint64_t off, std::uint64_t size, std::uint64_t lo, std::uint64_t hi) {
  return off >= lo && size <= hi - lo && off - lo <= hi - lo - size;
}

void checkRegions(const Binary& bin, std::uint64_t constants_size, const IsaDescription& isa,
                  const std::string& file) {
  const std::string w = "section .ember.memmap";
  const std::uint64_t dram = isa.hw().dram.size_bytes;
  for (std::size_t i = 0; i < bin.memmap.size(); ++i) {
    const MemRegion& r = bin.memmap[i];
    std::string rw = w + ": region \"" + r.name + "\"";
    if (r.name.empty())
      throw Error(file, w, "region " + std::to_string(i) + " has no name");
    if (r.size_bytes == 0)
      throw Error(file, rw, "is empty");
    if (!inside(r.dram_offset, r.size_bytes, 0, dram))
      throw Error(file, rw,
                  "[" + std::to_string(r.dram_offset) + ", +" + std::to_string(r.size_bytes) +
                      ") lies outside the " + std::to_string(dram) + "-byte DRAM window of " +
                      isa.name());
    for (std::size_t k = 0; k < i; ++k) {
      const MemRegion& o = bin.memmap[k];
      if (o.name == r.name)
        throw Error(file, rw, "defined twice");
      if (r.dram_offset < o.dram_offset + o.size_bytes &&
          o.dram_offset < r.dram_offset + r.size_bytes)
        throw Error(file, rw, "overlaps region \"" + o.name + "\"");
    }
  }
  std::size_t consts = 0;
  for (const auto& r : bin.memmap) {
    if (r.kind != RegionKind::Const)
      continue;
    ++consts;
    if (r.size_bytes < constants_size)
      throw Error(file, w + ": region \"" + r.name + "\"",
                  "const region of " + std::to_string(r.size_bytes) + " bytes cannot hold the " +
                      std::to_string(constants_size) + " bytes of .ember.const");
  }
  if (consts > 1)
    throw Error(file, w, "more than one const region");
  if (constants_size != 0 && consts == 0)
    throw Error(file, w, "constants present but no const region to load them into");
}

void checkIo(const Binary& bin, const IsaDescription& isa, const std::string& file) {
  const std::string w = "section .ember.io";
  for (std::size_t i = 0; i < bin.io.size(); ++i) {
    const IoEntry& e = bin.io[i];
    std::string ew = w + ": entry \"" + e.name + "\"";
    if (e.name.empty())
      throw Error(file, w, "entry " + std::to_string(i) + " has no name");
    for (std::size_t k = 0; k < i; ++k)
      if (bin.io[k].name == e.name)
        throw Error(file, ew, "defined twice");
    if (!(std::isfinite(e.scale) && e.scale > 0))
      throw Error(file, ew, "scale must be finite and positive");
    std::string why;
    std::uint64_t need = neededBytes(e, isa, why);
    if (need == 0)
      throw Error(file, ew, "bad shape: " + why);
    if (e.size_bytes < need)
      throw Error(file, ew,
                  "size " + std::to_string(e.size_bytes) + " bytes is smaller than the " +
                      std::to_string(need) + " its shape, dtype and layout need");
    RegionKind want = e.dir == IoDir::Input ? RegionKind::Input : RegionKind::Output;
    bool ok = false;
    for (const auto& r : bin.memmap)
      if (r.kind == want &&
          inside(e.dram_offset, e.size_bytes, r.dram_offset, r.dram_offset + r.size_bytes))
        ok = true;
    if (!ok)
      throw Error(file, ew,
                  "DRAM range [" + std::to_string(e.dram_offset) + ", +" +
                      std::to_string(e.size_bytes) + ") is not inside any " + toString(want) +
                      " region of the memory map");
  }
}

void checkDebug(const Binary& bin, std::uint64_t instructions, const std::string& file) {
  const std::string w = "section .ember.debug";
  std::uint64_t prev_end = 0;
  for (std::size_t i = 0; i < bin.debug.size(); ++i) {
    const DebugRange& r = bin.debug[i];
    std::string rw = w + ": range " + std::to_string(i);
    if (r.node.empty())
      throw Error(file, rw, "has no node name");
    if (r.count == 0)
      throw Error(file, rw, "is empty");
    if (r.first < prev_end)
      throw Error(file, rw, "is out of order or overlaps the previous range");
    prev_end = std::uint64_t(r.first) + r.count;
    if (prev_end > instructions)
      throw Error(file, rw,
                  "ends at instruction " + std::to_string(prev_end) + ", past the " +
                      std::to_string(instructions) + " instructions");
  }
}

} // namespace

void validateBinary(const Binary& bin, const IsaDescription& isa, const std::string& file) {
  validateBinary(bin, bin.code.size(), bin.constants.size(), isa, file);
}

void validateBinary(const Binary& bin, std::uint64_t instructions, std::uint64_t constants_size,
                    const IsaDescription& isa, const std::string& file) {
  if (bin.isa_name != isa.name() || bin.isa_hash != isa.hash())
    throw Error(file, "section .ember.isa",
                "built for ISA \"" + bin.isa_name + "\" (sha256 " + toHex(bin.isa_hash) +
                    "), but the description is \"" + isa.name() + "\" (sha256 " + isa.hashHex() +
                    ")");
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    if (isa.findInstruction(bin.code[i].name()) != &bin.code[i].desc())
      throw Error(file, "instruction " + std::to_string(i),
                  "belongs to a different description object");
  checkRegions(bin, constants_size, isa, file);
  checkIo(bin, isa, file);
  checkDebug(bin, instructions, file);
}

// base's reader and writer throw ember::Error; libember_isa's callers expect isa::Error
// with the file as its own field.
std::vector<std::uint8_t> readFileBytes(const std::string& path) {
  try {
    std::string bytes = ember::readFileBytes(path);
    return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
  } catch (const ember::Error& e) {
    throw Error(path, "", e.reason());
  }
}

void writeFileAtomic(const std::string& path, const void* data, std::size_t size) {
  try {
    ember::writeFileAtomic(path, data, size);
  } catch (const ember::Error& e) {
    throw Error(path, "", e.reason());
  }
}

} // namespace ember::isa
