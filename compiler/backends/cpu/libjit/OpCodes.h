// Op codes shared by the libjit kernels (compiled to bitcode) and the code generators that
// call them: one definition, so the two sides cannot disagree on a number.
#pragma once

#include <cstdint>

namespace ember::jitops {

/// Unary maps of ember_unary_f32 (libjit/Elementwise.cpp).
enum UnaryOp : int32_t {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kErf,
  kNeg,
  kAbs,
  kReciprocal,
  kFloor,
  kCeil,
  kLeakyRelu,
  kClip,
  kHardSigmoid,
  kHardSwish,
  kSilu,
  kGelu,
  kSoftplus,
  kElu,
  kRound,
  kSign,
  // Evaluated in double precision, as the interpreter does.
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kSoftsign,
  kCelu,
  kThresholdedRelu,
  kShrink,
};

/// Binary operators of ember_binary_f32.
enum BinaryOp : int32_t { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu };

/// Comparisons (float32) and logic (bool) of ember_compare.
enum CompareOp : int32_t {
  kEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor
};

namespace reduce {
/// Reductions of libjit/Reduce.cpp.
enum ReduceOp : int32_t { kSum, kMean, kMax, kMin, kSumSquare, kL2, kL1, kProd, kLogSum };
} // namespace reduce

} // namespace ember::jitops
