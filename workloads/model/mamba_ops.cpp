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

// One mamba_ssm SSD kernel (model/mamba_ops.h): per-token FLOPs and HBM bytes of each pass and
// the kernels each pass launches (0: the pass runs none of it).
struct SsdKernel {
  std::string_view name;
  bool matmul;  // tl.dot tiles (the tensor path at mamba_scan_eff); otherwise elementwise / scan work
  double fwd_flops, fwd_bytes;
  int fwd_kernels;
  double bwd_flops, bwd_bytes;
  int bwd_kernels;
};

// Elementwise FLOPs per element of the SSD's small kernels: the dt path (bias add, softplus's
// exp and log1p, the dt_limit clamp, the multiply by A, the in-chunk cumsum add) and its backward,
// the gate's backward (sigmoid, its derivative, the products), one multiply-add per chunk-state
// element and chunk in the state passing (two in its backward).
inline constexpr double kDtPathFlops = 6.0;
inline constexpr double kGateBwdFlops = 10.0;

std::vector<SsdKernel> ssd_kernels(const ModelSpec& m, double p) {
  const double d = m.mamba_inner(), h = m.mamba_heads, q = std::max(1, m.mamba_chunk);
  const double n = m.mamba_state, g = m.mamba_groups;
  const double gn = g * n;              // B or C per token
  const double cb = kFp32Bytes * g * q;  // fp32 C B^T tile row per token
  const double s = d * n / q;            // chunk-state elements per token
  const double f = kFp32Bytes;
  const double cumsum = h * (p + 2 * f), chunk_state = gn * p + d * p + 2 * h * f + f * s, bmm = 2 * gn * p + cb;
  return {
      // Forward (_mamba_chunk_scan_combined_fwd), each rerun by the backward
      // (_mamba_chunk_scan_combined_bwd recomputes dA_cumsum, CB, the chunk states and their
      // passing), the chunk scan excepted.
      {"ssd_chunk_cumsum", false, kDtPathFlops * h, cumsum, 1, kDtPathFlops * h, cumsum, 1},
      {"ssd_chunk_state", true, 2 * n * d, chunk_state, 1, 2 * n * d, chunk_state, 1},
      // forward: fp32 states in, states out in the activation dtype; the backward's rerun keeps
      // them in fp32 (_state_passing_fwd without out_dtype).
      {"ssd_state_passing", false, 2 * s, f * s + p * s, 1, 2 * s, 2 * f * s, 1},
      {"ssd_bmm_chunk", true, 2 * q * n * g, bmm, 1, 2 * q * n * g, bmm, 1},
      // CB, x, dt, dA_cumsum, C, states, z in; out and out_x out. Not rerun: the backward reads the
      // saved out_x.
      {"ssd_chunk_scan", true, 2 * q * d + 2 * n * d, cb + d * p + 2 * h * f + gn * p + p * s + d * p + 2 * d * p, 1, 0,
       0, 0},
      // Backward only.
      // _chunk_scan_bwd_dz: x, z, out_x, dout in; dz, gated dout out; then dD's partial sums reduced.
      {"ssd_chunk_scan_bwd_dz", false, 0, 0, 0, kGateBwdFlops * d, 6 * d * p, 2},
      // _chunk_scan_bwd_dstates: C, dA_cumsum, dout in; fp32 dstates out.
      {"ssd_chunk_scan_bwd_dstates", true, 0, 0, 0, 2 * n * d, gn * p + h * f + d * p + f * s, 1},
      // _state_passing_bwd: fp32 states and dstates in; both out in the activation dtype.
      {"ssd_state_passing_bwd", false, 0, 0, 0, 4 * s, 2 * f * s + 2 * p * s + h * f, 1},
      // _chunk_scan_chunk_state_bwd_dx: x, dt, dA_cumsum, B, CB, dout, dstates in; dx and the
      // fp32 ddt (zeroed first: the autotuner's init_to_zero pre-hook) out; dD reduced.
      {"ssd_chunk_scan_chunk_state_bwd_dx", true, 0, 0, 0, 2 * q * d + 2 * n * d,
       3 * d * p + 2 * h * f + gn * p + cb + p * s + 2 * h * f, 3},
      // _chunk_state_bwd_db: x, dt, dA_cumsum, dstates, B in; fp32 dB and ddA (zeroed first) out;
      // dB.sum over the head splits (one split counted: a read and a write of the fp32 dB).
      {"ssd_chunk_state_bwd_db", true, 0, 0, 0, 2 * n * d,
       d * p + 2 * h * f + p * s + gn * p + gn * f + 2 * h * f + 2 * gn * f, 3},
      // _chunk_scan_bwd_dC: states, dA_cumsum, dout, C in; fp32 dC and ddA_prev (zeroed) out;
      // dC.sum over the head splits.
      {"ssd_chunk_scan_bwd_dC", true, 0, 0, 0, 2 * n * d,
       p * s + h * f + d * p + gn * p + gn * f + 2 * h * f + 2 * gn * f, 3},
      // _chunk_scan_bwd_dcb: x, dt, dA_cumsum, dout in; fp32 dCB out; dcb.sum over the head splits.
      {"ssd_chunk_scan_bwd_dcb", true, 0, 0, 0, 2 * q * d, 2 * d * p + 2 * h * f + cb + 2 * cb, 2},
      // _bmm_chunk_bwd twice (dB from C, dC from B): the operand, dCB and the fp32 residual in; dB
      // or dC out in the activation dtype.
      {"ssd_bmm_chunk_bwd", true, 0, 0, 0, 2 * 2 * q * n * g, 2 * (2 * gn * p + cb + gn * f), 2},
      // _chunk_scan_bwd_ddAcs_stable: x, dt, dA_cumsum, dout, CB in; fp32 ddA out.
      {"ssd_chunk_scan_bwd_ddAcs", true, 0, 0, 0, 2 * q * d, 2 * d * p + 2 * h * f + cb + h * f, 1},
      // _chunk_cumsum_bwd: ddA, ddt, dt in; ddt out (dA and ddt_bias zeroed first, two memsets).
      {"ssd_chunk_cumsum_bwd", false, 0, 0, 0, kDtPathFlops * h, 2 * h * f + 2 * h * p, 3},
      // The torch ops between them: dt.clone(); ddA_cumsum_prev[..., -1] += ...; flip, cumsum, flip
      // of ddA_cumsum_prev; ddA += ddA_next + ddA_prev (two kernels). fp32 [heads, chunk] tensors.
      {"ssd_bwd_torch_ops", false, 0, 0, 0, 2 * h, 2 * h * p + 12 * h * f, 7},
  };
}

// The SSD kernels on this GPU: its heads and groups are 1/t of the model's.
std::vector<OpCost> ssd_ops(const ModelSpec& m, const OpShape& sh, double tokens, double p) {
  ModelSpec local = m;
  local.mamba_heads = std::max(1, m.mamba_heads / sh.tp);
  local.mamba_groups = std::max(1, m.mamba_groups / sh.tp);
  std::vector<OpCost> ops;
  for (const SsdKernel& k : ssd_kernels(local, p)) {
    OpCost op;
    op.name = k.name;
    op.kind = k.matmul ? OpKind::Attention : OpKind::Elementwise;
    op.fwd_flops = sim::Flops{tokens * k.fwd_flops};
    op.bwd_flops = sim::Flops{tokens * k.bwd_flops};
    op.fwd_bytes = sim::Bytes{tokens * k.fwd_bytes};
    op.bwd_bytes = sim::Bytes{tokens * k.bwd_bytes};
    op.fwd_kernels = k.fwd_kernels;
    op.bwd_kernels = k.bwd_kernels;
    if (k.matmul) {  // the chunk tiles' shape (for reports): [Q, P] outputs over N per head
      op.m = m.mamba_chunk;
      op.n = m.mamba_head_dim;
      op.k = m.mamba_state;
      op.batch = static_cast<int>(std::max(1.0, tokens / std::max(1, m.mamba_chunk) * local.mamba_heads));
    }
    ops.push_back(op);
  }
  return ops;
}

}  // namespace

double ssd_flops_per_token(const ModelSpec& m) {
  double sum = 0;
  for (const SsdKernel& k : ssd_kernels(m, 2.0))
    if (k.matmul) sum += k.fwd_flops;
  return sum;
}

SsdBytes ssd_bytes_per_token(const ModelSpec& m, double p) {
  SsdBytes b;
  for (const SsdKernel& k : ssd_kernels(m, p)) {
    b.fwd += k.fwd_bytes;
    b.bwd += k.bwd_bytes;
  }
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
  for (OpCost& op : ssd_ops(m, sh, tokens, p)) ops.push_back(op);
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
