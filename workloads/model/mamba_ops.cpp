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
// fp32 elements: the chunk states written by the chunk-state kernel, dt and its chunk cumsum, and
// the per-chunk C B^T tiles (CB) that mamba_ssm's _bmm_chunk_fwd writes in fp32.
inline constexpr double kFp32Bytes = 4.0;

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
  OpCost op;
  op.name = "ssd_scan";
  op.kind = OpKind::Attention;
  op.fwd_flops = sim::Flops{tokens * ssd_flops_per_token(local)};
  op.bwd_flops = op.fwd_flops * 2.0;
  const SsdBytes bytes = ssd_bytes_per_token(local, p);
  op.fwd_bytes = sim::Bytes{tokens * bytes.fwd};
  op.bwd_bytes = sim::Bytes{tokens * bytes.bwd};
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

SsdBytes ssd_bytes_per_token(const ModelSpec& m, double p) {
  const double d = m.mamba_inner(), h = m.mamba_heads, q = std::max(1, m.mamba_chunk);
  const double gn = static_cast<double>(m.mamba_groups) * m.mamba_state;  // B or C per token
  const double cb = kFp32Bytes * m.mamba_groups * q;                      // fp32 CB tile row per token
  const double s = d * m.mamba_state / q;                                 // chunk-state elements per token
  const double f = kFp32Bytes;
  SsdBytes b;
  // Forward (_mamba_chunk_scan_combined_fwd): chunk_cumsum (dt in; dt, dA_cumsum out in fp32),
  // chunk_state (B, x, dt, dA_cumsum in; fp32 states out), state_passing (fp32 states in, states
  // out in the activation dtype), bmm_chunk (C, B in; fp32 CB out), chunk_scan (CB, x, dt,
  // dA_cumsum, C, states, z in; out and out_x out).
  const double cumsum = h * (p + 2 * f);
  const double chunk_state = gn * p + d * p + 2 * h * f + f * s;
  const double bmm = 2 * gn * p + cb;
  b.fwd = cumsum + chunk_state + (f * s + p * s) + bmm + (cb + d * p + 2 * h * f + gn * p + p * s + d * p + 2 * d * p);
  // Backward (_mamba_chunk_scan_combined_bwd): the chunk cumsum, CB, chunk states and state passing
  // recomputed (states kept in fp32), then chunk_scan_bwd_dz (x, z, out_x, dout in; dz, dout out),
  // chunk_scan_bwd_dstates (C, dA, dout in; fp32 dstates out), state_passing_bwd (fp32 states and
  // dstates in, both out in the activation dtype), chunk_scan_chunk_state_bwd_dx (x, dt, dA, B, CB,
  // dout, dstates in; dx, ddt out), chunk_state_bwd_db (x, dt, dA, dstates, B in; dB out),
  // chunk_scan_bwd_dC (states, dA, dout, C in; dC out), chunk_scan_bwd_dcb (x, dt, dA, dout in; fp32
  // dCB out), two bmm_chunk_bwd (C or B, dCB, the dB or dC residual in; dB or dC out),
  // chunk_scan_bwd_ddAcs_stable (x, dt, dA, dout, CB in) and chunk_cumsum_bwd. Per-head fp32 terms
  // (dt, dA, their gradients) are counted per kernel that reads or writes them.
  const double recompute = cumsum + bmm + chunk_state + 2 * f * s;
  const double dz = 6 * d * p;
  const double dstates = gn * p + h * f + d * p + f * s;
  const double passing = 2 * f * s + 2 * p * s + h * f;
  const double dx = 3 * d * p + 2 * h * f + gn * p + cb + p * s + h * f;
  const double db = d * p + 2 * h * f + p * s + 2 * gn * p + h * f;
  const double dc = p * s + h * f + d * p + 2 * gn * p + h * f;
  const double dcb = 2 * d * p + 2 * h * f + cb;
  const double bmm_bwd = 2 * (cb + 3 * gn * p);
  const double ddacs = 2 * d * p + 2 * h * f + cb + h * f;
  const double cumsum_bwd = 2 * h * f + 2 * h * p;
  b.bwd = recompute + dz + dstates + passing + dx + db + dc + dcb + bmm_bwd + ddacs + cumsum_bwd;
  return b;
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
  const double in_width = 2.0 * inner + bc + heads;
  ops.push_back(matmul("mamba_in_proj", tokens, in_width, h, p, true));
  // MambaMixer._ssm_training's layout copies (megatron/core/ssm/mamba_mixer.py): zxBCdt
  // rearranged "l b d -> b l d" and y "b l d -> l b d", each .contiguous(), a read and a write of
  // the tensor when b > 1 (at b = 1 both views are already contiguous). Backward not counted: y's
  // gradient reaches the scan with unit inner stride (no copy in ssd_combined.py); a copy of
  // zxBCdt's gradient before in_proj's backward (Transformer Engine) was not checked.
  if (sh.micro_batch > 1) {
    const double copied = tokens * (in_width + inner);
    ops.push_back(streaming("mamba_layout_copies", OpKind::Elementwise, copied, 0.0, 2.0 * p * copied, 0.0));
  }
  // Conv + SiLU over x, B, C: fwd reads them and writes the result; bwd recomputes it (read, write:
  // mamba_split_conv1d_scan_combined saves only zxbcdt) and then reads the input and dy, writes dx.
  const double conv = tokens * (inner + bc);
  ops.push_back(streaming("mamba_conv1d", OpKind::Elementwise, conv, 2.0 * m.mamba_conv + kConvSiluFlopsPerElement,
                          2.0 * p * conv, (2.0 + 3.0) * p * conv));
  ops.push_back(ssd_scan(m, sh, tokens, p));
  // Gated norm: the SiLU(z) gate runs inside the scan's last kernel (z read there, dz written by
  // chunk_scan_bwd_dz), so the norm reads y and writes the out_proj input; bwd reads y, dy, writes dy'.
  const double gated = tokens * inner;
  ops.push_back(
      streaming("mamba_gated_norm", OpKind::Norm, gated, kGatedNormFlopsPerElement, 2.0 * p * gated, 3.0 * p * gated));
  ops.push_back(matmul("mamba_out_proj", tokens, h, inner, p, true));
  ops.push_back(streaming("mamba_residual", OpKind::Elementwise, residual, 1.0, 3.0 * p * residual, 3.0 * p * residual));
  ops.back().bwd_reads_input = false;  // a residual add: dx = dy
  for (OpCost& op : ops) op.graph_part = GraphPart::Mamba;
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

}  // namespace clustersim::workloads
