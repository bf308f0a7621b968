// The NPU binary: an ELF64 container of instruction stream, constants, I/O table,
// memory map, ISA identity and debug map. See docs/isa/assembly-binary.md, "Binary format".
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"
#include "ember/support/LargeBuffer.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::isa {

/// ELF constants of the Ember container. e_machine is outside the gABI registry (which
/// assigns values below 0x0400); 0x9000-0xFFFF is where unofficial machines
/// traditionally live (e.g. EM_ALPHA 0x9026). Section types are in the
/// application range [SHT_LOUSER, SHT_HIUSER].
namespace elf {
constexpr std::uint16_t kMachine = 0xEB01; ///< EM_EMBER_NPU
constexpr std::uint32_t kShtLoUser = 0x80000000u;
constexpr std::uint32_t kShtText = kShtLoUser + 0xEB01;   ///< .ember.text
constexpr std::uint32_t kShtConst = kShtLoUser + 0xEB02;  ///< .ember.const
constexpr std::uint32_t kShtIo = kShtLoUser + 0xEB03;     ///< .ember.io
constexpr std::uint32_t kShtMemmap = kShtLoUser + 0xEB04; ///< .ember.memmap
constexpr std::uint32_t kShtIsa = kShtLoUser + 0xEB05;    ///< .ember.isa
constexpr std::uint32_t kShtDebug = kShtLoUser + 0xEB06;  ///< .ember.debug
constexpr std::uint32_t kShtDigest = kShtLoUser + 0xEB07; ///< .ember.digest
/// In .ember.isa and e_flags. 2: every section required, the .ember.digest table.
constexpr std::uint32_t kFormatVersion = 2;
constexpr std::uint32_t kDigestCrc32c = 1; ///< Algorithm id in .ember.digest: CRC-32C.
} // namespace elf

/// Element type of an I/O tensor.
enum class DType : std::uint8_t { Int8 = 0, UInt8 = 1, Int32 = 2, Float32 = 3 };
/// How the tensor is laid out in DRAM. `Flat`: row-major as its shape says.
/// `Nchwc`: N, C/L, H, W, L with L = act row lanes, channels zero-padded to L.
/// `Packed` (inputs only; IoEntry::packing): an N, C, H, W image with few channels laid
/// out as N, H, width, L, neighbouring pixels side by side in one row, so that the
/// host's layout conversion does the packing a convolution with few input channels (the
/// RGB stem) would otherwise do on the NPU (docs/compiler/npu-layers.md, "Few input channels").
enum class Layout : std::uint8_t { Flat = 0, Nchwc = 1, Packed = 2, Patches = 3 };
/// Direction of an I/O tensor.
enum class IoDir : std::uint8_t { Input = 0, Output = 1 };
/// What a memory-map region holds.
enum class RegionKind : std::uint8_t { Const = 0, Input = 1, Output = 2, Scratch = 3 };

const char* toString(DType);
const char* toString(Layout);
const char* toString(IoDir);
const char* toString(RegionKind);
/// Parse the names above; return false if unknown.
bool parse(std::string_view s, DType& out);
bool parse(std::string_view s, Layout& out);
bool parse(std::string_view s, IoDir& out);
bool parse(std::string_view s, RegionKind& out);
/// Bytes of one element.
unsigned sizeOf(DType);

/// The geometry of a `Packed` input: row (n, h, xp) holds in lane dx * C + c (dx < pixels,
/// c < C) channel c of pixel x = xp * stride + dx - pad_left of line h, the zero point where
/// x is outside the image, and 0 in lanes from pixels * C on; xp < width.
struct IoPacking {
  std::uint16_t pixels = 0, stride = 0, pad_left = 0;
  std::uint32_t width = 0;
  bool operator==(const IoPacking& o) const {
    return pixels == o.pixels && stride == o.stride && pad_left == o.pad_left && width == o.width;
  }
};

/// The geometry of a `Patches` input (an im2col the host writes): the window of a
/// kernel_h x kernel_w convolution (strides, dilations, top / left padding) at each of its
/// out_h x out_w output pixels, laid out as an Nchwc tensor [N, C * kernel_h * kernel_w,
/// out_h, out_w]: channel `(kh * kernel_w + kw) * C + c` of pixel (oy, ox) holds channel c
/// of image pixel (oy * stride_h + kh * dilation_h - pad_top, ox * stride_w + kw *
/// dilation_w - pad_left), the zero point where that lies outside the image. The
/// convolution on it is a 1 x 1 one whose reduction fills whole lane blocks (the RGB stem:
/// 147 values in 10 rows of 16 lanes instead of 14 packed ones).
struct IoPatches {
  std::uint16_t kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0;
  std::uint16_t dilation_h = 0, dilation_w = 0, pad_top = 0, pad_left = 0;
  std::uint32_t out_h = 0, out_w = 0;
  bool operator==(const IoPatches& o) const {
    return kernel_h == o.kernel_h && kernel_w == o.kernel_w && stride_h == o.stride_h &&
           stride_w == o.stride_w && dilation_h == o.dilation_h && dilation_w == o.dilation_w &&
           pad_top == o.pad_top && pad_left == o.pad_left && out_h == o.out_h && out_w == o.out_w;
  }
};

/// One entry of the I/O table: a model input or output in DRAM.
struct IoEntry {
  std::string name;
  IoDir dir = IoDir::Input;
  DType dtype = DType::Int8;
  Layout layout = Layout::Flat;
  std::vector<std::int64_t> shape; ///< Logical shape (e.g. N, C, H, W), rank <= 8.
  double scale = 1.0;              ///< Quantization: real = scale * (q - zero_point).
  std::int32_t zero_point = 0;
  std::uint64_t dram_offset = 0; ///< Byte offset in the job's DRAM window.
  std::uint64_t size_bytes = 0;  ///< Bytes it occupies there (after padding/blocking).
  IoPacking packing;             ///< Layout::Packed only (all zero otherwise).
  IoPatches patches;             ///< Layout::Patches only (all zero otherwise).
  bool operator==(const IoEntry& o) const;
};

/// One region of the job's DRAM window.
struct MemRegion {
  std::string name;
  RegionKind kind = RegionKind::Scratch;
  std::uint64_t dram_offset = 0;
  std::uint64_t size_bytes = 0;
  bool operator==(const MemRegion& o) const {
    return name == o.name && kind == o.kind && dram_offset == o.dram_offset &&
           size_bytes == o.size_bytes;
  }
};

/// Instructions [first, first + count) come from graph node `node`.
struct DebugRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::string node;
  bool operator==(const DebugRange& o) const {
    return first == o.first && count == o.count && node == o.node;
  }
};

/// An NPU program with everything the runtime needs to run it.
struct Binary {
  std::string isa_name;                ///< Description it was built for.
  Sha256Digest isa_hash{};             ///< Its hash.
  std::vector<Instruction> code;       ///< Instruction stream (one queue-split stream).
  std::vector<std::uint8_t> constants; ///< Loaded at the `const` region's offset.
  std::vector<IoEntry> io;
  std::vector<MemRegion> memmap;
  std::vector<DebugRange> debug; ///< Sorted, non-overlapping.

  /// A binary for `isa` (name and hash filled in), otherwise empty.
  static Binary forIsa(const IsaDescription& isa);
  /// Graph node of instruction `index`, or nullptr.
  const std::string* nodeOf(std::size_t index) const;
  bool operator==(const Binary& o) const;
};

/// Checks a binary's tables against `isa` (regions inside DRAM and not overlapping; I/O
/// entries inside a region of their direction and consistent with shape/dtype; constants
/// fit the const region; debug ranges sorted and inside the code). Throws Error.
void validateBinary(const Binary& bin, const IsaDescription& isa, const std::string& file);
/// validateBinary for a binary whose code (`instructions` words) and constants
/// (`constants_size` bytes) are held elsewhere than bin.code and bin.constants
/// (ElfFile::tables()).
void validateBinary(const Binary& bin, std::uint64_t instructions, std::uint64_t constants_size,
                    const IsaDescription& isa, const std::string& file);

/// ELF image of `bin` (validates first).
std::vector<std::uint8_t> serializeElf(const Binary& bin, const IsaDescription& isa);
/// serializeElf(bin, isa) written to `out` (`size` bytes, elfImageSize(bin, isa); every
/// one is written, whatever it held): a device's DRAM gets the image without a copy in
/// between. Validates first; throws Error for another size.
void serializeElfInto(const Binary& bin, const IsaDescription& isa, std::uint8_t* out,
                      std::uint64_t size);
/// serializeElf(bin, isa).size() without building the image (validates first).
std::uint64_t elfImageSize(const Binary& bin, const IsaDescription& isa);
/// Writes the ELF atomically (temporary file in the same folder, then rename).
void writeElf(const std::string& path, const Binary& bin, const IsaDescription& isa);
/// Parses an ELF image; never trusts it: every offset, size, count and string is checked,
/// and a binary built for another description is rejected. `file` names it in errors.
Binary parseElf(const std::uint8_t* data, std::size_t size, const IsaDescription& isa,
                const std::string& file = "<memory>");
/// Reads and parses an ELF file.
Binary readElf(const std::string& path, const IsaDescription& isa);

/// A binary file read to be run (ember-sim, ember-run): read once into memory (a
/// LargeBuffer: huge pages where the host has them), checked exactly as readElf checks
/// it (every instruction word decoded), and kept as the file's bytes: its constants (most
/// of a model's file) are not copied out of them, its instruction words are neither kept
/// decoded nor re-encoded, and their CRC-32C digests, checked once, are not computed again
/// for its image.
class ElfFile {
public:
  /// Reads and checks `path` for `isa`; throws Error as readElf does.
  ElfFile(const std::string& path, const IsaDescription& isa);
  /// Everything readElf returns except the code and the constants: tables().code and
  /// tables().constants are empty; the file holds instructions() instruction words and
  /// the constants(). Enough to place and run the binary through a job ring (I/O table,
  /// memory map, debug map); binary() for what needs its instructions.
  const Binary& tables() const { return tables_; }
  /// The number of instructions of .ember.text.
  std::uint64_t instructions() const { return instructions_; }
  /// The bytes of .ember.const in the file (constantsSize() of them); null once moveImage
  /// moved them.
  const std::uint8_t* constants() const {
    return file_.data() ? file_.data() + const_offset_ : nullptr;
  }
  std::uint64_t constantsSize() const { return const_size_; }
  /// readElf's binary: tables() with the instructions decoded and the constants copied.
  Binary binary(const IsaDescription& isa) const;
  /// elfImageSize(binary(), isa), without building binary().
  std::uint64_t imageSize() const;
  /// serializeElfInto(binary(), isa, out, imageSize()) without building binary(): the
  /// file's instruction words and constants copied, their digests reused. For a file
  /// written by writeElf, the file's own bytes. `isa` is the description it was read for.
  void writeImage(const IsaDescription& isa, std::uint8_t* out) const;
  /// True when the file is byte for byte writeImage's image (as writeElf writes every
  /// binary; another writer may lay the same binary out otherwise).
  bool canonical(const IsaDescription& isa) const;
  /// writeImage by moving the file's pages to `out` (a page boundary in memory the caller
  /// mapped; LargeBuffer::moveTo) instead of copying them, when the file is canonical and
  /// the host can move them: true if it did. The ElfFile then holds its tables only:
  /// constants() is null, and binary() and writeImage throw std::logic_error.
  bool moveImage(const IsaDescription& isa, std::uint8_t* out);

private:
  LargeBuffer file_;
  Binary tables_;
  std::uint64_t instructions_ = 0;
  std::uint64_t text_offset_ = 0, text_size_ = 0, const_offset_ = 0, const_size_ = 0;
  std::uint32_t text_crc_ = 0, const_crc_ = 0;
};

/// A section as listed in the section header table (for ember-objdump).
struct SectionInfo {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0, offset = 0, size = 0, entsize = 0;
  bool has_digest = false;    ///< .ember.digest is readable and lists this section.
  std::uint32_t digest = 0;   ///< The CRC-32C .ember.digest stores for it.
  std::uint32_t computed = 0; ///< The CRC-32C of its bytes in the file.
  /// The stored digest matches the contents (false when there is none).
  bool digestOk() const { return has_digest && digest == computed; }
};
/// Section headers of a (structurally valid) Ember ELF image, with each section's stored
/// and computed digest. Does not verify the digests (parseElf does). Throws Error.
std::vector<SectionInfo> listSections(const std::uint8_t* data, std::size_t size,
                                      const std::string& file = "<memory>");

/// Recomputes the .ember.digest table of a structurally valid image in place (every
/// section's CRC-32C and the header CRC), as if the writer had produced its current bytes.
/// For tests and fuzzers that patch images on purpose. Throws Error.
void resealElf(std::vector<std::uint8_t>& image);

/// Whole file as bytes; throws Error on I/O failure.
std::vector<std::uint8_t> readFileBytes(const std::string& path);
/// Writes bytes atomically (temp file + rename); throws Error on failure.
void writeFileAtomic(const std::string& path, const void* data, std::size_t size);

} // namespace ember::isa
