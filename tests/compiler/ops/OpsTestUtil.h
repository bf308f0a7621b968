#pragma once
// Helpers of the operator tests: build one node over constant operands (the shared
// graph builder), evaluate it with the interpreter's kernel, compare with hand-computed values.
#include "GraphBuilder.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ember {
namespace test {

/// Creates node `kind` over constants `ins` in a fresh module and evaluates it.
inline std::vector<Tensor> evalNode(NodeKind kind, const std::vector<Tensor>& ins,
                                    const Attrs& attrs = {}) {
  GraphBuilder g;
  std::vector<NodeValue> vals;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    vals.push_back(g.constant("c" + std::to_string(i), ins[i]));
    ptrs.push_back(&vals.back().node->payload());
  }
  return evaluateNode(*g.multi(kind, "node", vals, attrs), ptrs);
}

inline Tensor eval1(NodeKind kind, const std::vector<Tensor>& ins, const Attrs& attrs = {}) {
  return evalNode(kind, ins, attrs).at(0);
}

template <typename T> Tensor T_(Shape d, std::vector<T> v) {
  return Tensor::fromVector<T>(std::move(d), v);
}
inline Tensor F(Shape d, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(d), v);
}
inline Tensor I64(Shape d, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(std::move(d), v);
}

/// Expects `got` to have shape `dims` and float values within 1e-5 of `want`.
inline void expectFloats(const Tensor& got, const Shape& dims, const std::vector<float>& want) {
  ASSERT_EQ(got.kind(), ElemKind::Float32);
  ASSERT_EQ(got.dims(), dims);
  std::vector<float> g = got.toVector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-5 + 1e-6 * std::fabs(want[i])) << "element " << i;
}

/// Expects exact equality of kind, shape and values.
template <typename T> void expectExact(const Tensor& got, const Shape& dims, std::vector<T> want) {
  ASSERT_EQ(got.kind(), ElemKindOf<T>::value);
  ASSERT_EQ(got.dims(), dims);
  EXPECT_EQ(got.toVector<T>(), want);
}

} // namespace test
} // namespace ember
