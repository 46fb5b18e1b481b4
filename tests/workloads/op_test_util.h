// Helpers for the workloads tests that list a layer's ops (model/transformer_ops.h) and cost them
// on a catalog GPU (compute/compute_model.h): an op looked up by name, one micro-batch's shape
// under expert parallelism, a GPU of the catalog, a compute-bound square GEMM, an MoE model's
// active parameters, and Qwen3-30B-A3B's shape.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "topology/catalog.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::testing {

// The op of that name, or nullptr when the layer has none.
inline const workloads::OpCost* find_op(const std::vector<workloads::OpCost>& ops, std::string_view name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const workloads::OpCost& op) { return op.name == name; });
  return it == ops.end() ? nullptr : &*it;
}

// The op of that name; the test stops when there is none. A reference into `ops`: keep them alive.
inline const workloads::OpCost& op_named(const std::vector<workloads::OpCost>& ops, std::string_view name) {
  const workloads::OpCost* op = find_op(ops, name);
  REQUIRE_MESSAGE(op != nullptr, name);
  return *op;
}

// One micro-batch of one 4096-token sequence over `ep` expert-parallel ranks (no tp, cp).
inline workloads::OpShape shape_with_ep(int ep) {
  workloads::OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 4096;
  sh.ep = ep;
  return sh;
}

// A GPU of the catalog by id; the test stops when the id is unknown.
inline const topology::GpuSpec& gpu(std::string_view id) {
  const topology::GpuSpec* g = topology::find_gpu(id);
  REQUIRE(g != nullptr);
  return *g;
}

// A GEMM of a transformer linear (fp8/nvfp4-eligible), m x n x k in 16 bits: 2mnk FLOPs forward,
// twice that backward; its three operands read or written once forward, twice backward.
inline workloads::OpCost gemm_op(double m, double n, double k) {
  workloads::OpCost op;
  op.name = "gemm";
  op.kind = workloads::OpKind::Gemm;
  op.m = static_cast<int>(m);
  op.n = static_cast<int>(n);
  op.k = static_cast<int>(k);
  op.batch = 1;
  op.fwd_flops = sim::Flops{2.0 * m * n * k};
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_bytes = sim::Bytes{2.0 * (m * k + k * n + m * n)};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  op.fp8_eligible = true;
  return op;
}

// A large square one, n x n x n: compute-bound on every GPU for n in the thousands.
inline workloads::OpCost square_gemm(double n) { return gemm_op(n, n, n); }

// Parameters one token runs through, as the MoE model cards count them (embeddings included):
// every MoE layer's routed experts beyond its top-k's share left out.
inline double active_parameters(const workloads::ModelSpec& m) {
  const double unused = 1.0 - static_cast<double>(m.experts_per_token) / m.experts;
  return m.parameters() - m.moe_layers_in(0, m.layers) * m.expert_parameters() * unused;
}

// Qwen3-30B-A3B's shape (its config.json), two layers: hidden 2048, 32 heads of 128, 4 KV heads,
// 128 experts of width 768, top-8, sequence 4096; `shared_experts` of the experts' width added so
// that a test can see shared-expert ops (Qwen3 has none).
inline workloads::ModelSpec qwen3_30b_moe_model(int shared_experts = 0) {
  workloads::ModelSpec m;
  m.layers = 2;
  m.hidden = 2048;
  m.heads = 32;
  m.kv_heads = 4;
  m.attention_head_dim = 128;
  m.ffn_hidden = 6144;
  m.seq_len = 4096;
  m.vocab = 151936;
  m.mlp = workloads::MlpKind::SwiGlu;
  m.norm = workloads::NormKind::RmsNorm;
  m.experts = 128;
  m.experts_per_token = 8;
  m.moe_ffn_hidden = 768;
  m.shared_experts = shared_experts;
  return m;
}

}  // namespace clustersim::testing
