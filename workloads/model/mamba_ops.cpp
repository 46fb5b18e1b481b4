// Ops of a hybrid Mamba model's layers; the model and its sources are in mamba_ops.h.
#include "workloads/model/mamba_ops.h"

#include <algorithm>
#include <string_view>

namespace clustersim::workloads {
namespace {

// SiLU after the conv: sigmoid (exp, add, divide) and a multiply.
inline constexpr double kConvSiluFlopsPerElement = 4.0;
// y * SiLU(z) then RMSNorm: the gate (5) and the norm (kRmsNormFlopsPerElement).
inline constexpr double kGatedNormFlopsPerElement = 5.0 + kRmsNormFlopsPerElement;
// The SSD kernels keep the chunk states in fp32 (mamba_ssm's Triton kernels).
inline constexpr double kStateBytes = 4.0;
// Chunk-state passes through HBM in the forward: written by the chunk-state kernel, read and
// written by state passing, read by the chunk-scan kernel.
inline constexpr double kStatePasses = 4.0;

OpCost matmul(std::string_view name, double m, double n, double k, double p, bool fp8) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::Gemm;
  op.fwd_flops = sim::Flops{2.0 * m * n * k};
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_bytes = sim::Bytes{p * (m * k + k * n + m * n)};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  op.m = static_cast<int>(m);
  op.n = static_cast<int>(n);
  op.k = static_cast<int>(k);
  op.batch = 1;
  op.fp8_eligible = fp8;
  return op;
}

OpCost streaming(std::string_view name, OpKind kind, double elements, double flops_per_element, double fwd_bytes,
                 double bwd_bytes) {
  OpCost op;
  op.name = name;
  op.kind = kind;
  op.fwd_flops = sim::Flops{elements * flops_per_element};
  op.bwd_flops = op.fwd_flops;
  op.fwd_bytes = sim::Bytes{fwd_bytes};
  op.bwd_bytes = sim::Bytes{bwd_bytes};
  return op;
}

// The SSD scan on this GPU: its heads and groups are 1/t of the model's.
OpCost ssd_scan(const ModelSpec& m, const OpShape& sh, double tokens, double p) {
  ModelSpec local = m;
  local.mamba_heads = std::max(1, m.mamba_heads / sh.tp);
  local.mamba_groups = std::max(1, m.mamba_groups / sh.tp);
  const double inner = local.mamba_inner(), bc = 2.0 * local.mamba_groups * static_cast<double>(m.mamba_state);
  OpCost op;
  op.name = "ssd_scan";
  op.kind = OpKind::Attention;
  op.fwd_flops = sim::Flops{tokens * ssd_flops_per_token(local)};
  op.bwd_flops = op.fwd_flops * 2.0;
  const double io = p * (2.0 * inner + bc) + 4.0 * local.mamba_heads;  // x, y, B, C; dt in fp32
  const double states = kStatePasses * kStateBytes * inner * m.mamba_state / std::max(1, m.mamba_chunk);
  op.fwd_bytes = sim::Bytes{tokens * (io + states)};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  // The chunk GEMMs' shape (for reports): [Q, P] outputs over N per head.
  op.m = m.mamba_chunk;
  op.n = m.mamba_head_dim;
  op.k = m.mamba_state;
  op.batch = static_cast<int>(std::max(1.0, tokens / std::max(1, m.mamba_chunk) * local.mamba_heads));
  return op;
}

}  // namespace

double ssd_flops_per_token(const ModelSpec& m) {
  const double q = m.mamba_chunk, n = m.mamba_state, g = m.mamba_groups, inner = m.mamba_inner();
  return 2.0 * q * n * g + 2.0 * q * inner + 4.0 * n * inner + 2.0 * n * inner / std::max(1.0, q);
}

std::vector<OpCost> mamba_layer_ops(const ModelSpec& m, const OpShape& sh) {
  const double tokens = static_cast<double>(sh.micro_batch) * sh.seq_len / std::max(1, sh.cp);
  const double p = sh.precision_bytes, t = sh.tp, h = m.hidden;
  const double residual = tokens * h / (sh.sequence_parallel ? t : 1.0);
  const double inner = m.mamba_inner() / t;
  const double bc = 2.0 * m.mamba_groups * static_cast<double>(m.mamba_state) / t;
  const double heads = static_cast<double>(m.mamba_heads) / t;
  const double norm_flops = m.norm == NormKind::LayerNorm ? kLayerNormFlopsPerElement : kRmsNormFlopsPerElement;
  std::vector<OpCost> ops;
  ops.push_back(streaming("mamba_norm", OpKind::Norm, residual, norm_flops, 2.0 * p * residual, 3.0 * p * residual));
  ops.push_back(matmul("mamba_in_proj", tokens, 2.0 * inner + bc + heads, h, p, true));
  // Conv + SiLU over x, B, C: fwd reads them and writes the result; bwd reads both and dy, writes dx.
  const double conv = tokens * (inner + bc);
  ops.push_back(streaming("mamba_conv1d", OpKind::Elementwise, conv, 2.0 * m.mamba_conv + kConvSiluFlopsPerElement,
                          2.0 * p * conv, 3.0 * p * conv));
  ops.push_back(ssd_scan(m, sh, tokens, p));
  // Gated norm: fwd reads y and z, writes the out_proj input; bwd reads y, z, dy, writes dy', dz.
  const double gated = tokens * inner;
  ops.push_back(
      streaming("mamba_gated_norm", OpKind::Norm, gated, kGatedNormFlopsPerElement, 3.0 * p * gated, 5.0 * p * gated));
  ops.push_back(matmul("mamba_out_proj", tokens, h, inner, p, true));
  ops.push_back(streaming("mamba_residual", OpKind::Elementwise, residual, 1.0, 3.0 * p * residual, 3.0 * p * residual));
  return ops;
}

std::vector<OpCost> layer_ops_of_kind(const ModelSpec& model, const OpShape& shape, LayerKind kind) {
  switch (kind) {
    case LayerKind::Transformer: return layer_ops(model, shape, false);
    case LayerKind::MoeTransformer: return layer_ops(model, shape, true);
    case LayerKind::Mamba: return mamba_layer_ops(model, shape);
    case LayerKind::Attention:
    case LayerKind::Mlp:
    case LayerKind::Moe: break;
  }
  const std::vector<OpCost> full = layer_ops(model, shape, kind == LayerKind::Moe);
  const auto split = std::find_if(full.begin(), full.end(), [](const OpCost& op) { return op.name == "post_attention_norm"; });
  std::vector<OpCost> half;
  if (kind == LayerKind::Mlp || kind == LayerKind::Moe) return {split, full.end()};
  for (auto it = full.begin(); it != split; ++it) {
    if (model.positions == PositionKind::None && it->name == "rotary_embedding") continue;
    half.push_back(*it);
  }
  return half;
}

double tensor_parallel_share(LayerKind kind) {
  return kind == LayerKind::Transformer || kind == LayerKind::MoeTransformer ? 1.0 : 0.5;
}

}  // namespace clustersim::workloads
