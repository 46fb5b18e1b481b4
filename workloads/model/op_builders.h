// The two op shapes every layer is built from: a (batched) GEMM and a memory-bound pointwise op,
// with the cost conventions of transformer_ops.h (a GEMM costs 2mnk FLOPs per batch entry, its
// backward twice that; bytes read A and B and write C once). Shared by the transformer layer and
// its attention variants so both cost a GEMM the same way.
#pragma once

#include <string_view>

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads::ops {

// C[m,n] = A[m,k] * B[k,n], `batch` times, p bytes per element. Backward: dA = dC * B^T and
// dB = A^T * dC.
inline OpCost gemm(std::string_view name, OpKind kind, double m, double n, double k, double batch, double p,
                   bool fp8) {
  OpCost op;
  op.name = name;
  op.kind = kind;
  op.fwd_flops = sim::Flops{2.0 * m * n * k * batch};
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_bytes = sim::Bytes{p * batch * (m * k + k * n + m * n)};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  op.m = static_cast<int>(m);
  op.n = static_cast<int>(n);
  op.k = static_cast<int>(k);
  op.batch = static_cast<int>(batch);
  op.fp8_eligible = fp8;
  return op;
}

// A memory-bound op over `elements` values; bytes are given per element for each pass.
inline OpCost pointwise(std::string_view name, OpKind kind, double elements, double flops_per_element,
                        double fwd_bytes_per_element, double bwd_bytes_per_element) {
  OpCost op;
  op.name = name;
  op.kind = kind;
  op.fwd_flops = sim::Flops{elements * flops_per_element};
  op.bwd_flops = op.fwd_flops;
  op.fwd_bytes = sim::Bytes{elements * fwd_bytes_per_element};
  op.bwd_bytes = sim::Bytes{elements * bwd_bytes_per_element};
  return op;
}

}  // namespace clustersim::workloads::ops
