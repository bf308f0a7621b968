// Rescaled Add of two int8 tensors (docs/numerics.md section 4.2), with a
// fused ReLU / Clip. With a quantized-add instruction in the description: one qadd per
// row run. Without: in the accumulators t = (a - zp_a) * M_a + (b - zp_b) * M_b by vsub
// (act rows minus a zero-point row), vmul (times a multiplier row) and vadd, then requant
// with M = 1 and the shift S. An operand of shape [N, C, 1, 1] against a full [N, C, H, W]
// one (a per-channel offset), or a constant scalar, goes through the broadcasting binary
// loop (Binary.h). A
// residual Add right after a convolution is fused into its epilogue (Compile.cpp).
#include "../Binary.h"
#include "../Stream.h"

#include "ember/quantization/Numerics.h"

namespace ember::npu {

namespace {

/// Acc rows kept below the stream's tiles: the two multiplier rows and one spare, which
/// makes the two tiles' distance odd (see the compute) when T is even; an acc SRAM of
/// four rows has no spare row and runs tiles of one row (odd, no spare needed).
int64_t accReservedRows(const Target& t) {
  return t.rows(Mem::Acc) >= 5 ? 3 : 2;
}

class AddLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    for (const auto& r : {checkActivation(resultOf(n), "the result"), checkBinaryShapes(n)})
      if (!r.empty())
        return r;
    quant::addMultipliers(scaleOf(n.input(0)), scaleOf(n.input(1)),
                          n.resultType(0).quant.scales[0]);
    if (n.input(0).dims() != n.input(1).dims())
      return checkBinary(t, 2, true);
    if (t.quantizedAdd())
      return checkStream(t, 2, 2, false);
    return checkStream(t, 2, 2, false, 2, 2, accReservedRows(t));
  }

  /// One qadd per chunk of each tile's rows; its scalars in param rows 0 and 1.
  static LayerInfo emitQuantizedAdd(const Node& n, LayerCtx& ctx) {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const NodeValue a = n.input(0), b = n.input(1), y = resultOf(n);
    const quant::AddMultipliers m = quant::addMultipliers(scaleOf(a), scaleOf(b), scaleOf(y));
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    const uint64_t pC = ctx.consts.addInt32(qaddParamRows(
        t.lanes(), m.Ma, m.Mb, m.S, zeroPointOf(y), zeroPointOf(a), zeroPointOf(b), bd.lo, bd.hi));
    StreamSpec s;
    s.inputs = {ctx.tensor(a).offset, ctx.tensor(b).offset};
    s.output = ctx.tensor(y).offset;
    s.rows = ctx.tensor(y).rows();
    s.skewBanks = true;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Param, 0, pC, 2))
        st.loads.push_back(in);
    };
    s.compute = [&](const StreamStep& ss, Step& st) {
      for (const auto& c : Program::rowChunks(*t.quantizedAdd(), ss.rows)) {
        const int64_t o = c[0], n0 = c[1], n1 = c[2];
        st.computes.push_back(p.qadd({ss.outAct + o, 1, n0}, {ss.inAct[0] + o, 1, n0},
                                     {ss.inAct[1] + o, 1, n0}, 0, n0, n1));
      }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[3] = 2;
    return info;
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const int64_t L = t.lanes();
    const NodeValue a = n.input(0), b = n.input(1), y = resultOf(n);
    const quant::AddMultipliers m = quant::addMultipliers(scaleOf(a), scaleOf(b), scaleOf(y));
    if (a.dims() != b.dims()) {
      BinaryOp op;
      op.combine = "add";
      op.scaleOperands = true;
      op.Ma = m.Ma;
      op.Mb = m.Mb;
      op.requantM = 1;
      op.requantS = m.S;
      return emitBinary(op, n, ctx);
    }
    if (t.quantizedAdd())
      return emitQuantizedAdd(n, ctx);
    const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
    // Constants: act rows zp_a, zp_b (int8 lanes); acc rows M_a, M_b; param rows 1, S.
    std::vector<uint8_t> zpRows(size_t(2 * L));
    for (int64_t l = 0; l < L; ++l) {
      zpRows[size_t(l)] = static_cast<uint8_t>(zeroPointOf(a));
      zpRows[size_t(L + l)] = static_cast<uint8_t>(zeroPointOf(b));
    }
    std::vector<int32_t> mRows(size_t(2 * L)), qRows(size_t(2 * L));
    for (int64_t l = 0; l < L; ++l) {
      mRows[size_t(l)] = m.Ma;
      mRows[size_t(L + l)] = m.Mb;
      qRows[size_t(l)] = 1;
      qRows[size_t(L + l)] = m.S;
    }
    const uint64_t zpC = ctx.consts.add(zpRows), mC = ctx.consts.addInt32(mRows),
                   qC = ctx.consts.addInt32(qRows);
    const DramTensor &ta = ctx.tensor(a), &tb = ctx.tensor(b), &ty = ctx.tensor(y);
    StreamSpec s;
    s.inputs = {ta.offset, tb.offset};
    s.output = ty.offset;
    s.rows = ty.rows();
    s.actReserved = 2;
    s.accReserved = accReservedRows(t);
    s.accPerRow = 2;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Act, 0, zpC, 2))
        st.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Acc, 0, mC, 2))
        st.loads.push_back(in);
      for (auto& in : p.loadRows(Mem::Param, 0, qC, 2))
        st.loads.push_back(in);
    };
    s.compute = [&](const StreamStep& ss, Step& st) {
      // Bank-aware: an odd distance between the two regions keeps vadd's reads of row i
      // of each in different acc banks.
      const int64_t A = 2, B = 2 + ss.tile + (ss.tile % 2 == 0 ? 1 : 0);
      // Every instruction of the chunk walks the same n0/n1: chunks fit all of them.
      for (const auto& c : Program::rowChunks(
               {&t.vecBinary("add"), &t.vecBinary("sub"), &t.vecBinary("mul"), &t.requant()},
               ss.rows)) {
        const int64_t o = c[0], n0 = c[1], n1 = c[2];
        const Program::Walk zA{0, 0, 0}, zB{1, 0, 0}, mA{0, 0, 0}, mB{1, 0, 0};
        st.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {A + o, 1, n0},
                                          {ss.inAct[0] + o, 1, n0}, zA, n0, n1));
        st.computes.push_back(
            p.vecBinary("mul", Mem::Acc, Mem::Acc, {A + o, 1, n0}, {A + o, 1, n0}, mA, n0, n1));
        st.computes.push_back(p.vecBinary("sub", Mem::Acc, Mem::Act, {B + o, 1, n0},
                                          {ss.inAct[1] + o, 1, n0}, zB, n0, n1));
        st.computes.push_back(
            p.vecBinary("mul", Mem::Acc, Mem::Acc, {B + o, 1, n0}, {B + o, 1, n0}, mB, n0, n1));
        st.computes.push_back(p.vecBinary("add", Mem::Acc, Mem::Acc, {A + o, 1, n0}, {A + o, 1, n0},
                                          {B + o, 1, n0}, n0, n1));
        st.computes.push_back(p.requant({ss.outAct + o, 1, n0}, {A + o, 1, n0}, 0, zeroPointOf(y),
                                        bd.lo, bd.hi, n0, n1));
      }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[3] = 2;
    return info;
  }
};

} // namespace

void registerAddLayers() {
  registerLayer(NodeKind::Add, std::make_shared<AddLayer>());
}

} // namespace ember::npu
