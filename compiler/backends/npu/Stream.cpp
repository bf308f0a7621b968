#include "Stream.h"

#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

int64_t emitStream(const StreamSpec& s, LayerCtx& ctx, LayerInfo& info) {
  const Target& t = ctx.t;
  Program& p = ctx.prog;
  const int64_t L = t.lanes(), D = p.depth();
  const int64_t nIn = static_cast<int64_t>(s.inputs.size());
  const int64_t slotsPerStep = nIn + (s.inPlace ? 0 : 1);
  // Largest tile that fits act (D slots per operand) and acc.
  int64_t T = (t.rows(Mem::Act) - s.actReserved) / (D * std::max<int64_t>(1, slotsPerStep));
  if (s.accPerRow > 0)
    T = std::min(T, (t.rows(Mem::Acc) - s.accReserved) / s.accPerRow);
  T = std::min(T, s.rows);
  if (T <= 0)
    throw Error("NPU backend", "a row stream does not fit the SRAMs");
  const int64_t slotRows = T * slotsPerStep;
  info.sram[0] = std::max(info.sram[0], s.actReserved + D * slotRows);
  info.sram[2] = std::max(info.sram[2], s.accReserved + s.accPerRow * T);
  info.tiling = "rows/tile=" + std::to_string(T);
  for (int64_t r0 = 0; r0 < s.rows; r0 += T) {
    const int64_t n = std::min(T, s.rows - r0);
    const int64_t base = s.actReserved + (p.stepIndex() % D) * slotRows;
    StreamStep ss;
    ss.rows = n;
    ss.tile = T;
    ss.first = r0 == 0;
    for (int64_t i = 0; i < nIn; ++i)
      ss.inAct.push_back(base + i * T);
    ss.outAct = s.inPlace ? base : base + nIn * T;
    Step st;
    if (ss.first && s.constants)
      s.constants(st);
    for (int64_t i = 0; i < nIn; ++i)
      for (auto& in :
           p.loadRows(Mem::Act, ss.inAct[size_t(i)], s.inputs[size_t(i)] + uint64_t(r0 * L), n))
        st.loads.push_back(in);
    if (s.compute)
      s.compute(ss, st);
    for (auto& in : p.storeRows(Mem::Act, ss.outAct, s.output + uint64_t(r0 * L), n))
      st.stores.push_back(in);
    p.commitStep(std::move(st));
  }
  return T;
}

} // namespace ember::npu
