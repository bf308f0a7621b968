#include "Stream.h"
#include "ember/isa/roles.h"

#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

namespace {

/// Rows per tile of a stream: the largest T that fits act (`slots` buffers per operand)
/// and acc.
int64_t tileRows(const Target& t, int64_t D, int64_t nIn, bool inPlace, int64_t actReserved,
                 int64_t accPerRow, int64_t accReserved) {
  const int64_t slotsPerStep = nIn + (inPlace ? 0 : 1);
  // In place, the store of step k reads the buffer the load of step k + D would refill:
  // the token protocol orders that load after the store of step k - D only, so an
  // in-place stream cycles through 2 D buffers.
  const int64_t slots = inPlace ? 2 * D : D;
  int64_t T = (t.rows(Mem::Act) - actReserved) / (slots * std::max<int64_t>(1, slotsPerStep));
  if (accPerRow > 0)
    T = std::min(T, (t.rows(Mem::Acc) - accReserved) / accPerRow);
  return T;
}

} // namespace

int64_t streamTileRows(const Target& t, int depth, int64_t nIn, bool inPlace, int64_t actReserved,
                       int64_t accPerRow, int64_t accReserved) {
  return tileRows(t, depth, nIn, inPlace, actReserved, accPerRow, accReserved);
}

std::string checkStream(const Target& t, int depth, int64_t nIn, bool inPlace, int64_t actReserved,
                        int64_t accPerRow, int64_t accReserved, int64_t minTileRows) {
  if (tileRows(t, depth, nIn, inPlace, actReserved, accPerRow, accReserved) >= minTileRows)
    return "";
  if (depth > 1) // single-buffered, the figures then those of one buffer
    return checkStream(t, 1, nIn, inPlace, actReserved, accPerRow, accReserved, minTileRows);
  const int64_t m = minTileRows;
  const int64_t slots = (inPlace ? 2 : 1) * depth * std::max<int64_t>(1, nIn + (inPlace ? 0 : 1));
  return "a row stream does not fit the SRAMs: " + std::to_string(m) + " row(s) per buffer need " +
         std::to_string(actReserved + m * slots) + " act rows (has " +
         std::to_string(t.rows(Mem::Act)) + ")" +
         (accPerRow > 0 ? " and " + std::to_string(accReserved + m * accPerRow) +
                              " acc rows (has " + std::to_string(t.rows(Mem::Acc)) + ")"
                        : std::string());
}

int64_t emitStream(const StreamSpec& s, LayerCtx& ctx, LayerInfo& info) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t nIn = static_cast<int64_t>(s.inputs.size());
  // Single-buffered when no tile fits the layer's buffers (checkStream's fallback).
  if (p.depth() > 1 && p.stepIndex() == 0 &&
      tileRows(t, p.depth(), nIn, s.inPlace, s.actReserved, s.accPerRow, s.accReserved) <
          std::max<int64_t>(1, s.groupRows))
    p.setLayerDepth(1);
  const int64_t L = t.lanes(), D = p.depth();
  const int64_t slotsPerStep = nIn + (s.inPlace ? 0 : 1);
  const int64_t slots = s.inPlace ? 2 * D : D;
  int64_t T = tileRows(t, D, nIn, s.inPlace, s.actReserved, s.accPerRow, s.accReserved);
  if (T <= 0)
    throw Error("NPU backend",
                checkStream(t, int(D), nIn, s.inPlace, s.actReserved, s.accPerRow, s.accReserved));
  const int64_t banks = int64_t(t.isa().memory(isa::mem::kAct).banks);
  if (s.skewBanks && banks > 1 && T > 1 && T % banks == 0)
    --T;
  // Buffers are placed by capacity, not by this stream's length, so that several streams
  // of one layer (Concat) agree on where each buffer lies.
  const int64_t cap = T, slotRows = cap * slotsPerStep;
  const int64_t g = s.groupRows;
  if (g > 0) {
    if (g > T)
      throw Error("NPU backend", "a group of " + std::to_string(g) +
                                     " rows does not fit a stream tile of " + std::to_string(T));
    T = T / g * g;
  }
  T = std::min(T, s.rows);
  info.sram[0] = std::max(info.sram[0], s.actReserved + slots * slotRows);
  info.sram[2] = std::max(info.sram[2], s.accReserved + s.accPerRow * T);
  info.tiling = "rows/tile=" + std::to_string(T);
  for (int64_t r0 = 0; r0 < s.rows; r0 += T) {
    const int64_t n = std::min(T, s.rows - r0);
    const int64_t base = s.actReserved + (p.stepIndex() % slots) * slotRows;
    StreamStep ss;
    ss.rows = n;
    ss.row0 = r0;
    ss.tile = cap;
    ss.first = r0 == 0;
    for (int64_t i = 0; i < nIn; ++i)
      ss.inAct.push_back(base + i * cap);
    ss.outAct = s.inPlace ? base : base + nIn * cap;
    Step st;
    if (ss.first && s.constants)
      s.constants(st);
    for (int64_t i = 0; i < nIn; ++i) {
      const uint64_t from = s.inputs[size_t(i)];
      for (auto& in : g > 0 ? p.loadGroups(Mem::Act, ss.inAct[size_t(i)],
                                           from + uint64_t(r0 / g * s.inGroupStride * L), g,
                                           ceilDiv(n, g), s.inGroupStride)
                            : p.loadRows(Mem::Act, ss.inAct[size_t(i)], from + uint64_t(r0 * L), n))
        st.loads.push_back(in);
    }
    if (s.compute)
      s.compute(ss, st);
    const int64_t og = std::max<int64_t>(1, g); // rows per stored group
    for (auto& in : s.stores ? s.stores(ss, r0)
                    : s.outGroupStride > 0
                        ? p.storeGroups(Mem::Act, ss.outAct,
                                        s.output + uint64_t(r0 / og * s.outGroupStride * L), og,
                                        ceilDiv(n, og), s.outGroupStride)
                        : p.storeRows(Mem::Act, ss.outAct, s.output + uint64_t(r0 * L), n))
      st.stores.push_back(in);
    p.commitStep(std::move(st));
  }
  return T;
}

void emitRowCopy(uint64_t from, uint64_t to, int64_t rows, LayerCtx& ctx, LayerInfo& info) {
  StreamSpec s;
  s.inputs = {from};
  s.output = to;
  s.rows = rows;
  s.inPlace = true;
  emitStream(s, ctx, info);
}

namespace {

/// Whether the runs of `r` lie back to back on the input side, and on the result side.
bool denseIn(const RowRuns& r) {
  return r.count <= 1 || r.inStride == r.len;
}
bool denseOut(const RowRuns& r) {
  return r.count <= 1 || r.outStride == r.len;
}

} // namespace

int64_t rowRunStreams(const RowRuns& r, const Target& t, int depth) {
  if (r.len <= 0 || r.count <= 0)
    return 0;
  if ((denseIn(r) && denseOut(r)) || r.len <= streamTileRows(t, depth, 1, true))
    return 1;
  return r.count;
}

int64_t emitRowRuns(const RowRuns& r, LayerCtx& ctx, LayerInfo& info) {
  const int64_t streams = rowRunStreams(r, ctx.t, ctx.prog.depth());
  const int64_t L = ctx.t.lanes();
  if (streams == 0)
    return 0;
  if (denseIn(r) && denseOut(r)) {
    emitRowCopy(r.from, r.to, r.len * r.count, ctx, info);
    return 1;
  }
  if (streams > 1) { // a run does not fit a tile: each one a contiguous copy, in tiles
    for (int64_t i = 0; i < r.count; ++i)
      emitRowCopy(r.from + uint64_t(i * r.inStride * L), r.to + uint64_t(i * r.outStride * L),
                  r.len, ctx, info);
    return streams;
  }
  StreamSpec s;
  s.inputs = {r.from};
  s.output = r.to;
  s.rows = r.len * r.count;
  s.inPlace = true;
  // Groups on the input side when the runs lie apart there, or when the result's groups
  // need the tiles to hold whole runs.
  if (!denseIn(r) || (!denseOut(r) && r.len > 1)) {
    s.groupRows = r.len;
    s.inGroupStride = r.inStride;
  }
  if (!denseOut(r))
    s.outGroupStride = r.outStride;
  emitStream(s, ctx, info);
  return 1;
}

} // namespace ember::npu
