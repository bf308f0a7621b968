// Lut (docs/numerics.md section 4.6): the 256-byte table is loaded into the parameter
// SRAM at the first table the `lut` instruction can select (table 0 + table_offset),
// then y = T[x + 128] row by row, in place in the input tile.
#include "../ConvCore.h"
#include "../Stream.h"

namespace ember::npu {

namespace {

class LutLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkInputAndResult(n); !r.empty())
      return r;
    const NodeValue tab = n.input(1);
    if (tab.node->kind() != NodeKind::Constant || tab.type().kind != ElemKind::Int8 ||
        tab.type().size() != 256)
      return "the table must be a constant int8[256]";
    if (lutTableRow(t, 0) + lutTableRows(t) > t.rows(Mem::Param))
      return "the description's lut table lies outside the param SRAM";
    return checkStream(t, 2, 1, true);
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const Target& t = ctx.t;
    Program& p = ctx.prog;
    const NodeValue x = n.input(0), y = resultOf(n);
    const Tensor& tab = n.input(1).node->payload();
    const uint64_t tC = ctx.consts.add(std::vector<uint8_t>(tab.raw(), tab.raw() + 256));
    const int64_t row = lutTableRow(t, 0), rows = lutTableRows(t);
    StreamSpec s;
    s.inputs = {ctx.tensor(x).offset};
    s.output = ctx.tensor(y).offset;
    s.rows = ctx.tensor(y).rows();
    s.inPlace = true;
    s.constants = [&](Step& st) {
      for (auto& in : p.loadRows(Mem::Param, row, tC, rows))
        st.loads.push_back(in);
    };
    s.compute = [&](const StreamStep& ss, Step& st) {
      for (const auto& c : Program::rowChunks(t.lut(), ss.rows)) {
        const int64_t o = c[0], n0 = c[1], n1 = c[2];
        st.computes.push_back(p.lut(0, {ss.outAct + o, 1, n0}, {ss.inAct[0] + o, 1, n0}, n0, n1));
      }
    };
    LayerInfo info;
    emitStream(s, ctx, info);
    info.sram[3] = row + rows;
    return info;
  }
};

} // namespace

void registerLutLayers() {
  registerLayer(NodeKind::Lut, std::make_shared<LutLayer>());
}

} // namespace ember::npu
