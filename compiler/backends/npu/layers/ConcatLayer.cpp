// Concat along channels (docs/numerics.md section 4.4: codes move unchanged, so every
// input must share the result's parameters). In NCHWc an input whose channel offset is a
// multiple of L is a contiguous run of rows per image in the result, copied through act
// by DMA. An offset inside a block would need byte-level channel moves that DMA (whole
// rows) cannot do, so every input but the last must have a multiple of L channels.
#include "../Stream.h"

namespace ember::npu {

namespace {

class ConcatLayer : public Layer {
public:
  std::string check(const Node& n, const Target& t) const override {
    if (auto r = checkActivation(resultOf(n), "the result"); !r.empty())
      return r;
    const int64_t rank = int64_t(n.resultType(0).rank());
    int64_t axis = n.attrs().getInt("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis != 1)
      return "only concatenation along channels (axis 1) runs on the NPU";
    for (size_t i = 0; i < n.numInputs(); ++i) {
      if (auto r = checkActivation(n.input(i), "an input"); !r.empty())
        return r;
      if (n.input(i).type().quant != n.resultType(0).quant)
        return "input " + std::to_string(i) +
               " has other quantization parameters than the result (insert a Rescale)";
      if (i + 1 < n.numInputs() && n.input(i).dims()[1] % t.lanes() != 0)
        return "input " + std::to_string(i) + " has " + std::to_string(n.input(i).dims()[1]) +
               " channels, not a multiple of the " + std::to_string(t.lanes()) +
               " lanes: the next input would start inside a channel block, which DMA (whole "
               "rows) cannot write";
    }
    return "";
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    const int64_t L = ctx.t.lanes();
    const DramTensor& y = ctx.tensor(resultOf(n));
    LayerInfo info;
    int64_t cbOff = 0;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      const DramTensor& x = ctx.tensor(n.input(i));
      for (int64_t b = 0; b < x.N; ++b) {
        StreamSpec s;
        s.inputs = {x.at(L, b, 0, 0, 0)};
        s.output = y.at(L, b, cbOff, 0, 0);
        s.rows = x.CB * x.H * x.W;
        s.inPlace = true;
        emitStream(s, ctx, info);
      }
      cbOff += x.CB;
    }
    info.tiling = "copies";
    return info;
  }
};

} // namespace

void registerConcatLayers() {
  registerLayer(NodeKind::Concat, std::make_shared<ConcatLayer>());
}

} // namespace ember::npu
