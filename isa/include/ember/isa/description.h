// The NPU description (isa/*.json): load, validate, query.
#pragma once

#include "ember/isa/hash.h"
#include "ember/isa/semantic.h"

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::isa {

/// Bits [lsb, lsb + width) of an instruction word.
struct BitRange {
  unsigned lsb = 0;
  unsigned width = 0;
};

/// One field of one instruction: a role of its class placed at a bit range.
struct FieldDesc {
  std::string role;                                        ///< Role name (assembly key).
  RoleKind kind = RoleKind::Count;                         ///< From the class's RoleSpec.
  BitRange bits;                                           ///< Where it is encoded.
  bool is_signed = false;                                  ///< Two's complement?
  std::vector<std::pair<std::string, std::int64_t>> names; ///< Symbolic values (memory
                                                           ///< names, enum names).
  std::string doc;
  /// Smallest and largest encodable value.
  std::int64_t minValue() const;
  std::int64_t maxValue() const;
  /// Name of `value`, or nullptr when it has none.
  const std::string* nameOf(std::int64_t value) const;
};

/// Instruction-word format shared by all instructions.
struct EncodingDesc {
  unsigned instruction_bits = 0;
  BitRange opcode;
  unsigned bytes() const { return instruction_bits / 8; }
};

/// One instruction of the set.
struct InstrDesc {
  std::string name;               ///< Mnemonic.
  const ClassSpec* cls = nullptr; ///< Its semantic class (never null once loaded).
  std::uint64_t opcode = 0;
  std::vector<FieldDesc> fields;        ///< In the class's role order.
  std::map<std::string, double> timing; ///< Cycles, keys required by the class.
  std::map<std::string, double> energy; ///< pJ, keys required by the class.
  std::string op;                       ///< properties.op (vector classes) or empty.
  std::vector<std::string> memories;    ///< properties.memories (dma classes).
  std::int64_t table_offset = 0;        ///< properties.table_offset (lut).
  /// properties.background (gemm): the array runs it while the compute engine goes on
  /// (docs/simulator.md rule E6), so a requantize can overlap the next block's gemm.
  bool background = false;
  /// properties.overwrite (gemm, depthwise): the first accumulation into each acc row
  /// (gemm: in its i2 = 0 pass; depthwise: every output) writes the products instead of
  /// adding them, so no instruction has to initialise the accumulators.
  bool overwrite = false;
  /// properties.bias (requantize): adds the int32 row param_addr + 2 to each accumulator
  /// (wrapping) before the multiply: the per-channel bias of an overwriting gemm.
  bool bias = false;
  /// Param rows a requantize reads from param_addr on (docs/isa/instructions.md section
  /// 2.6): M and S, then the bias row with properties.bias. One definition for the
  /// simulator, the energy model and the compiler's parameter slots.
  unsigned paramRows() const { return bias ? 3u : 2u; }
  std::string doc;
  EncodingDesc encoding; ///< Copy of the description's encoding.
  std::string json_path; ///< e.g. "/instructions/3", for messages.

  /// Index of the field with role `role` in `fields`, or -1.
  int fieldIndex(std::string_view role) const;
  /// The field with role `role`, or nullptr.
  const FieldDesc* field(std::string_view role) const;
  /// Timing / energy entry (validated to exist for the class's keys; 0 otherwise).
  double timingOf(const std::string& key) const;
  double energyOf(const std::string& key) const;
};

/// One on-chip SRAM.
struct MemoryDesc {
  std::string name;
  unsigned id = 0;
  std::uint64_t size_bytes = 0, row_bytes = 0;
  unsigned elem_bits = 8, banks = 1, read_ports = 1, write_ports = 1;
  double read_pj_per_byte = 0, write_pj_per_byte = 0; ///< From the energy table.
  std::string doc;
  std::uint64_t rows() const { return row_bytes ? size_bytes / row_bytes : 0; }
  /// Elements of one row (row_bytes * 8 / elem_bits).
  std::uint64_t lanes() const { return row_bytes * 8 / elem_bits; }
};

/// hardware.* of the description.
struct HardwareDesc {
  std::uint64_t clock_hz = 0;
  struct {
    unsigned rows = 0, cols = 0, input_bits = 8, acc_bits = 32, weight_buffers = 1;
    std::uint64_t weight_load_cycles = 0, fill_cycles = 0, drain_cycles = 0;
    std::string dataflow;
  } mac;
  struct {
    unsigned lanes = 0, lane_bits = 32;
  } vector;
  struct {
    std::uint64_t size_bytes = 0, bytes_per_cycle = 0;
  } dram;
  struct {
    std::uint64_t latency_cycles = 0, burst_bytes = 0, max_outstanding = 0;
  } dma;
  struct {
    std::uint64_t load_depth = 0, compute_depth = 0, store_depth = 0, token_fifo_depth = 0;
  } queues;
  struct {
    /// Cycle at which the first instruction can be taken by its engine; fetch then
    /// dispatches one instruction per cycle (docs/simulator.md, rule F1).
    std::uint64_t latency_cycles = 1;
  } fetch;
  struct {
    /// NPU cycles one register read or write of the control core takes (docs/firmware.md).
    std::uint64_t register_access_cycles = 1;
    /// Period of the control core's timer: an idle core wakes at the IRQ or the next tick.
    std::uint64_t tick_cycles = 1;
    /// Cycles of the firmware's own instructions per job it takes (docs/firmware.md
    /// section 6); 0 when the description leaves them out.
    std::uint64_t job_cycles = 0;
    /// Cycles of the firmware's own instructions per instruction word its DMA_EXTENT
    /// rule reads.
    std::uint64_t check_cycles_per_instruction = 0;
  } control;
  /// The host <-> NPU link a partitioned model's boundary tensors cross (docs/isa/tables.md):
  /// B bytes take latency_cycles + ceil(B / bytes_per_cycle) cycles.
  struct {
    std::uint64_t bytes_per_cycle = 1, latency_cycles = 0;
  } host_link;
};

/// The global energy table (pJ). Per-SRAM figures live in MemoryDesc.
struct EnergyTable {
  double mac_int8 = 0, dram_read_per_byte = 0, dram_write_per_byte = 0, leakage_per_cycle = 0;
};

/// One memory-mapped register of the control core.
struct RegisterDesc {
  struct Field {
    std::string name;
    BitRange bits;
    std::string doc;
  };
  std::string name;
  std::uint32_t offset = 0;
  std::string access; ///< rw, ro, wo, w1c
  std::uint32_t reset = 0;
  std::string doc;
  std::vector<Field> fields; ///< Sorted by lsb.
};

/// A loaded and validated NPU description. Cheap to copy (shared, immutable); pointers
/// and references it hands out stay valid while any copy lives.
class IsaDescription {
public:
  /// Loads and validates `path`. Throws `Error` naming the file, JSON path and reason.
  static IsaDescription loadFile(const std::string& path);
  /// The largest description file loadFile reads (16 MiB; ember-v1.json is ~20 KB): a
  /// FIFO, a device or a huge file is refused with the file and the limit.
  static constexpr std::uint64_t kMaxDescriptionBytes = std::uint64_t(16) << 20;
  /// Loads and validates JSON text; `label` stands for the file name in errors.
  static IsaDescription loadString(std::string_view text, const std::string& label = "<string>");
  /// The description a tool uses without `--isa`: `$EMBER_ISA` if set; else, for an
  /// installed Ember, the prefix's share/ember/isa/ember-v1.json (found from where the
  /// code holding this function lies); else the source tree's isa/ember-v1.json (a
  /// compile definition of the library).
  static std::string defaultPath();
  /// `explicit_path` if non-empty, else `defaultPath()`.
  static IsaDescription loadDefault(const std::string& explicit_path = "");
  /// The file loadDefault(`explicit_path`) reads: an input of every run, even when no
  /// --isa names it, so that no output may land on it.
  static std::string resolvedPath(const std::string& explicit_path);

  const std::string& name() const;
  const std::string& version() const;
  const std::string& descriptionText() const;
  /// File (or label) the description was loaded from.
  const std::string& file() const;
  const HardwareDesc& hw() const;
  const EnergyTable& energy() const;
  const EncodingDesc& encoding() const;
  unsigned instructionBytes() const { return encoding().bytes(); }

  /// SRAMs, sorted by id.
  const std::vector<MemoryDesc>& memories() const;
  /// The SRAM named `name`, or nullptr.
  const MemoryDesc* findMemory(std::string_view name) const;
  /// The SRAM named `name`; throws Error if absent.
  const MemoryDesc& memory(std::string_view name) const;
  /// The SRAM with `id`, or nullptr.
  const MemoryDesc* memoryById(std::int64_t id) const;

  /// Instructions in file order.
  const std::vector<InstrDesc>& instructions() const;
  const InstrDesc* findInstruction(std::string_view name) const;
  const InstrDesc* findOpcode(std::uint64_t opcode) const;

  const std::vector<RegisterDesc>& registers() const;

  /// SHA-256 of the canonical serialisation (nlohmann dump, sorted keys, no whitespace,
  /// without the top-level "$schema" key). Binaries record it.
  const Sha256Digest& hash() const;
  std::string hashHex() const;
  /// The parsed JSON document.
  const nlohmann::json& json() const;

  /// Derived figures for summaries and cost models.
  std::uint64_t peakMacsPerCycle() const;
  double dramBytesPerCycle() const;
  /// Roofline ridge point in MACs per DRAM byte (peak MAC/cycle / DRAM bytes/cycle).
  double ridgePoint() const;

  struct Data;

private:
  std::shared_ptr<const Data> d_;
};

} // namespace ember::isa
