#pragma once
/// \file
/// ember-dse --area: the NPU's area per point, from the RTL (docs/rtl/area.md section 8). Each
/// valid point's SystemVerilog package and decoder are generated in process (the
/// generators `ember-isa gen` runs), then rtl/cmake/area.py runs Yosys' generic synthesis
/// of the hand-written NPU (rtl/src, top ember_npu, the SRAM macros as black boxes) and
/// reports its generic cells, flip-flops and the description's SRAM bits. Results are
/// cached by a content hash (areaKey), so a sweep run again synthesizes nothing it
/// synthesized before.

#include "ember/session/dse/Sweep.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::dse {

/// Where ember-dse --area finds its tools and what it asked for on the command line.
struct AreaRequest {
  std::string yosys = "yosys"; ///< A path, or a name looked up on PATH.
  std::string rtlDir;          ///< rtl/ of the sources ("" = the one ember-dse was built from).
  std::string cacheDir;        ///< "" = defaultAreaCache().
};

/// The tools and sources of the area flow, found and read once per sweep.
struct AreaTools {
  std::string yosys;                ///< Absolute path of the Yosys binary.
  std::string yosysVersion;         ///< Its `yosys -V` line (part of the cache key).
  std::string python;               ///< The Python that runs area.py.
  std::string areaScript;           ///< rtl/cmake/area.py.
  std::vector<std::string> sources; ///< The NPU's hand-written files in read order.
  std::vector<std::string> macros;  ///< Files read as black boxes (SRAM macros).
  std::string cacheDir;
  /// SHA-256 of area.py, every source and macro file and the Yosys version: the part of
  /// every point's key that is the same for the whole sweep.
  std::string flowDigest;
};

/// The default cache folder: $XDG_CACHE_HOME/ember/area, else $HOME/.cache/ember/area,
/// else ".ember-area-cache" in the working folder.
std::string defaultAreaCache();

/// Finds Yosys (on PATH unless a path is given), Python, area.py and the NPU's sources
/// (rtl/src/sources.txt), reads Yosys' version and hashes the flow. Throws ember::Error
/// naming what is missing (e.g. "Yosys not found: no 'yosys' on PATH").
AreaTools findAreaTools(const AreaRequest& request);

/// The cache key of one description: SHA-256 (hex) of the description's canonical JSON
/// (keys sorted, no whitespace), the SystemVerilog package and decoder generated from it
/// and `tools.flowDigest`. Throws ember::Error if the description does not load.
std::string areaKey(const nlohmann::json& description, const std::string& file,
                    const AreaTools& tools);

/// The area of one point's NPU.
struct PointArea {
  enum class State {
    Ok,      ///< synthesized now or read from the cache
    Failed,  ///< Yosys or area.py failed (message says why)
    Skipped, ///< the description is invalid: nothing to synthesize
  };
  State state = State::Skipped;
  std::uint64_t cells = 0;     ///< Generic cells of logic, flip-flops excluded.
  std::uint64_t flipFlops = 0; ///< Flip-flops and latches.
  std::uint64_t sramBits = 0;  ///< The description's SRAMs, in bits (macros, not cells).
  double seconds = 0;          ///< Yosys' elapsed seconds when it was synthesized.
  bool cached = false;         ///< Read from the cache (no Yosys run in this sweep).
  std::string key;             ///< areaKey ("" for a skipped point).
  std::string message;         ///< Why, when not Ok.
  nlohmann::json detail;       ///< area.py's record (per-module rows), for OUT/area/pN.json.
};

/// "ok", "failed", "skipped".
const char* areaStateName(PointArea::State s);

/// The area of an invalid point: Skipped, saying so.
PointArea skippedArea();

/// Progress of synthesizeAreas: points settled, points in all, from the cache, running.
using AreaProgress = std::function<void(std::size_t done, std::size_t total, std::size_t cached,
                                        std::size_t running)>;

/// The area of every point (indexed like `points`): invalid points Skipped, cached keys
/// read, the others synthesized by area.py in child processes, at most `jobs` at a time
/// (points with one key synthesized once), each success written to the cache. `scratch`
/// holds the generated files and logs while they run. Never throws for one point's
/// failure: that point is Failed with the reason.
std::vector<PointArea> synthesizeAreas(const std::vector<Point>& points, const AreaTools& tools,
                                       unsigned jobs, const std::string& scratch,
                                       const AreaProgress& progress);

/// The JSON cache record of a synthesized area (what OUT/area/pN.json holds too).
nlohmann::json toJson(const PointArea& a);

/// The PointArea of a toJson record (a Dask worker's answer). Throws ember::Error naming
/// the field when the record lacks one.
PointArea areaFromJson(const nlohmann::json& j);

/// The area of one valid point on this machine, as a Dask worker computes it for
/// ember-dse --area --scheduler: the tools of `request` found here (once per request and
/// process), the synthesis in a scratch folder of its own under the system's temporary
/// folder, the cache of `request` read and written as a local sweep does. Never throws
/// for the point's own failure (the area is Failed with the reason); throws
/// ember::Error when the tools are missing on this machine.
PointArea synthesizeAreaHere(const Point& point, const AreaRequest& request);

} // namespace ember::dse
