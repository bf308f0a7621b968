// Gather of rows: Gather(x [R, C], idx, axis 0) with constant indices (what pass
// moves-to-gather makes of a windowed transformer's cyclic shift, window partition and
// reverse, head split and merge, and patch merging). A row of x is its CB channel blocks,
// CB consecutive NCHWc rows, so every selected row moves whole: a copy by DMA, codes
// unchanged (docs/numerics.md section 4.4). The indices are cut into runs of consecutive
// rows, and runs of one length whose starts advance by one stride into one strided row
// stream each (StreamSpec::groupRows / inGroupStride). Every other Gather goes to the layer
// registered before this one (channel selection).
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

namespace ember::npu {

namespace {

/// Runs of equal length whose starts advance by `stride` rows of x, landing at `out`.
struct RowGroup {
  int64_t first = 0, len = 0, stride = 0, count = 0, out = 0;
};

bool isRowGather(const Node& n) {
  if (n.kind() != NodeKind::Gather || n.input(0).dims().size() != 2 ||
      n.resultType(0).dims.size() != 2)
    return false;
  int64_t ax = axisOf(n.attrs()).axis;
  return (ax == 0 || ax == -2) && n.input(1).node->kind() == NodeKind::Constant &&
         n.input(1).dims().size() == 1;
}

std::vector<RowGroup> groupsOf(const Node& n) {
  const Tensor& t = n.input(1).node->payload();
  const int64_t R = n.input(0).dims()[0];
  std::vector<RowGroup> runs;
  for (int64_t k = 0; k < t.size(); ++k) {
    int64_t i = t.getAsInt(k);
    i = i < 0 ? i + R : i;
    if (!runs.empty() && runs.back().first + runs.back().len == i)
      ++runs.back().len;
    else
      runs.push_back({i, 1, 0, 1, k});
  }
  std::vector<RowGroup> groups;
  for (const RowGroup& r : runs) {
    if (!groups.empty()) {
      RowGroup& g = groups.back();
      const int64_t stride = r.first - (g.first + (g.count - 1) * g.stride);
      if (g.len == r.len && stride >= r.len && (g.count == 1 || stride == g.stride)) {
        g.stride = stride;
        ++g.count;
        continue;
      }
    }
    groups.push_back(r);
  }
  return groups;
}

class RowGatherLayer : public Layer {
public:
  explicit RowGatherLayer(std::shared_ptr<const Layer> other) : other_(std::move(other)) {}

  std::string check(const Node& n, const Target& t) const override {
    if (!isRowGather(n))
      return other_ ? other_->check(n, t) : "only a gather of rows (axis 0 of [R, C])";
    if (auto r = checkCodesMove(n); !r.empty())
      return r;
    for (int64_t k = 0; k < n.input(1).node->payload().size(); ++k) {
      const int64_t i = n.input(1).node->payload().getAsInt(k), R = n.input(0).dims()[0];
      if (i < -R || i >= R)
        return "row index " + std::to_string(i) + " outside the " + std::to_string(R) + " rows";
    }
    return checkStream(t, 2, 1, true, 0, 0, 0, ceilDiv(n.input(0).dims()[1], t.lanes()));
  }

  bool aliasesInput(const Node& n, const Target& t) const override {
    return !isRowGather(n) && other_ && other_->aliasesInput(n, t);
  }

  uint64_t tempBytes(const Node& n, const Target& t) const override {
    return !isRowGather(n) && other_ ? other_->tempBytes(n, t) : 0;
  }

  LayerInfo emit(const Node& n, LayerCtx& ctx) const override {
    if (!isRowGather(n))
      return other_->emit(n, ctx);
    const int64_t L = ctx.t.lanes();
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    const int64_t CB = x.CB;
    const int64_t tile = streamTileRows(ctx.t, ctx.prog.depth(), 1, true);
    LayerInfo info;
    int64_t streams = 0;
    for (const RowGroup& g : groupsOf(n)) {
      StreamSpec s;
      s.inPlace = true;
      s.inputs = {x.offset + uint64_t(g.first * CB * L)};
      s.output = y.offset + uint64_t(g.out * CB * L);
      s.rows = g.count * g.len * CB;
      if (g.count > 1 && g.len * CB <= tile) {
        s.groupRows = g.len * CB;
        s.inGroupStride = g.stride * CB;
        emitStream(s, ctx, info);
        ++streams;
        continue;
      }
      for (int64_t c = 0; c < g.count; ++c, ++streams) // each run contiguous
        emitRowCopy(x.offset + uint64_t((g.first + c * g.stride) * CB * L),
                    y.offset + uint64_t((g.out + c * g.len) * CB * L), g.len * CB, ctx, info);
    }
    info.tiling = std::to_string(streams) + " row streams (gather of rows)";
    return info;
  }

private:
  std::shared_ptr<const Layer> other_;
};

} // namespace

void registerRowGatherLayers() {
  registerLayer(NodeKind::Gather,
                std::make_shared<RowGatherLayer>(registeredLayer(NodeKind::Gather)));
}

} // namespace ember::npu
