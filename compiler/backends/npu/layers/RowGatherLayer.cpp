// Gather of rows: Gather(x [R, C], idx, axis 0) with constant indices (what pass
// moves-to-gather makes of a windowed transformer's cyclic shift, window partition and
// reverse, head split and merge, and patch merging). A row of x is its CB channel blocks,
// CB consecutive NCHWc rows, so every selected row moves whole: a copy by DMA, codes
// unchanged (docs/numerics.md section 4.4). The indices are cut into runs of consecutive
// rows, and runs of one length whose starts advance by one stride into one strided row
// stream each (StreamSpec::groupRows / inGroupStride); or, when every row of x is taken at
// most once and that needs fewer streams, x's runs of consecutive rows whose result rows
// lie one stride apart are scattered (StreamSpec::outGroupStride, one stream per channel
// block: a transformer's merge of its heads). Every other Gather goes to the layer
// registered before this one (channel selection).
#include "../Stream.h"
#include "ember/graph/AttrViews.h"

#include <optional>

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

/// The row indices of `n`, negative ones counted from the end.
std::vector<int64_t> rowsOf(const Node& n) {
  const Tensor& t = n.input(1).node->payload();
  const int64_t R = n.input(0).dims()[0];
  std::vector<int64_t> idx(size_t(t.size()));
  for (int64_t k = 0; k < t.size(); ++k) {
    const int64_t i = t.getAsInt(k);
    idx[size_t(k)] = i < 0 ? i + R : i;
  }
  return idx;
}

/// Consecutive rows of x, from `first`, whose result rows lie `stride` apart from `out`.
struct Scatter {
  int64_t first = 0, len = 0, out = 0, stride = 1;
};

/// The scatter form of a gather that takes each row of x at most once, or nullopt.
std::optional<std::vector<Scatter>> scatterOf(const std::vector<int64_t>& idx, int64_t R) {
  std::vector<int64_t> dest(size_t(R), -1);
  for (size_t k = 0; k < idx.size(); ++k) {
    if (dest[size_t(idx[k])] >= 0)
      return std::nullopt;
    dest[size_t(idx[k])] = int64_t(k);
  }
  std::vector<Scatter> runs;
  for (int64_t i = 0; i < R; ++i) {
    const int64_t d = dest[size_t(i)];
    if (d < 0)
      continue;
    if (!runs.empty()) {
      Scatter& r = runs.back();
      const int64_t step = d - (r.out + (r.len - 1) * r.stride);
      if (r.first + r.len == i && step > 0 && (r.len == 1 || step == r.stride)) {
        r.stride = step;
        ++r.len;
        continue;
      }
    }
    runs.push_back({i, 1, d, 1});
  }
  return runs;
}

/// Streams of the scatter form: a run landing on consecutive rows is one copy, else one
/// strided stream per channel block.
int64_t scatterStreams(const std::vector<Scatter>& runs, int64_t CB) {
  int64_t n = 0;
  for (const Scatter& r : runs)
    n += r.len > 1 && r.stride > 1 ? CB : 1;
  return n;
}

std::vector<RowGroup> groupsOf(const Node& n) {
  std::vector<RowGroup> runs;
  const std::vector<int64_t> idx = rowsOf(n);
  for (size_t k = 0; k < idx.size(); ++k) {
    const int64_t i = idx[k];
    if (!runs.empty() && runs.back().first + runs.back().len == i)
      ++runs.back().len;
    else
      runs.push_back({i, 1, 0, 1, int64_t(k)});
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
    const DramTensor &x = ctx.tensor(n.input(0)), &y = ctx.tensor(resultOf(n));
    const std::vector<RowGroup> groups = groupsOf(n);
    const auto scatter = scatterOf(rowsOf(n), n.input(0).dims()[0]);
    LayerInfo info;
    if (scatter &&
        scatterStreams(*scatter, x.CB) < gatherStreams(groups, x, y, ctx.t, ctx.prog.depth())) {
      const int64_t streams = emitScatter(*scatter, x, y, ctx, info);
      info.tiling = std::to_string(streams) + " row streams (scatter of rows)";
      return info;
    }
    const int64_t streams = emitGather(groups, x, y, ctx, info);
    info.tiling = std::to_string(streams) + " row streams (gather of rows)";
    return info;
  }

private:
  /// The gather's group `g` of runs as rows of x (CB rows per row of x) and of the result.
  static RowRuns runsOf(const RowGroup& g, const DramTensor& x, const DramTensor& y, int64_t L) {
    const int64_t CB = x.CB;
    return {x.offset + uint64_t(g.first * CB * L),
            y.offset + uint64_t(g.out * CB * L),
            g.len * CB,
            g.count,
            g.stride * CB,
            g.len * CB};
  }

  /// x's run `r` of the scatter, channel block `cb` (the whole rows when r lands on
  /// consecutive rows: then cb is 0).
  static RowRuns runsOf(const Scatter& r, int64_t cb, const DramTensor& x, const DramTensor& y,
                        int64_t L) {
    const int64_t CB = x.CB;
    if (r.len == 1 || r.stride == 1)
      return {x.offset + uint64_t(r.first * CB * L),
              y.offset + uint64_t(r.out * CB * L),
              r.len * CB,
              1,
              0,
              0};
    return {x.offset + uint64_t((r.first * CB + cb) * L),
            y.offset + uint64_t((r.out * CB + cb) * L),
            1,
            r.len,
            CB,
            r.stride * CB};
  }

  static int64_t gatherStreams(const std::vector<RowGroup>& groups, const DramTensor& x,
                               const DramTensor& y, const Target& t, int depth) {
    int64_t n = 0;
    for (const RowGroup& g : groups)
      n += rowRunStreams(runsOf(g, x, y, t.lanes()), t, depth);
    return n;
  }

  /// The result's runs gathered: a group of runs one stride apart in x is one stream.
  static int64_t emitGather(const std::vector<RowGroup>& groups, const DramTensor& x,
                            const DramTensor& y, LayerCtx& ctx, LayerInfo& info) {
    int64_t streams = 0;
    for (const RowGroup& g : groups)
      streams += emitRowRuns(runsOf(g, x, y, ctx.t.lanes()), ctx, info);
    return streams;
  }

  /// x's runs scattered: a run whose rows land a stride apart is one stream per channel
  /// block (its rows CB apart in x, stride * CB apart in the result).
  static int64_t emitScatter(const std::vector<Scatter>& runs, const DramTensor& x,
                             const DramTensor& y, LayerCtx& ctx, LayerInfo& info) {
    int64_t streams = 0;
    for (const Scatter& r : runs)
      for (int64_t cb = 0; cb < (r.len == 1 || r.stride == 1 ? 1 : x.CB); ++cb)
        streams += emitRowRuns(runsOf(r, cb, x, y, ctx.t.lanes()), ctx, info);
    return streams;
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
