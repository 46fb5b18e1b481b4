// Multi-head latent attention and sliding-window attention (see attention_variants.h for the
// model and its sources).
#include "workloads/model/attention_variants.h"

#include <algorithm>

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

double causal_attended_pairs(double s, double w) {
  if (w >= s) return s * (s + 1.0) / 2.0;
  return w * (w + 1.0) / 2.0 + (s - w) * w;  // the first w queries ramp up, the rest see w keys
}

double attention_work_factor(const ModelSpec& m, bool sliding_layer, double s) {
  if (!sliding_layer || m.sliding_window <= 0 || s <= 0) return 1.0;
  return std::min(1.0, 2.0 * causal_attended_pairs(s, m.sliding_window) / (s * s));
}

double mean_attention_work_factor(const ModelSpec& m, double s) {
  if (m.sliding_window <= 0 || m.layers <= 0) return 1.0;
  double sum = 0.0;
  for (int l = 0; l < m.layers; ++l) sum += attention_work_factor(m, m.is_sliding_layer(l), s);
  return sum / m.layers;
}

double qk_head_dim(const ModelSpec& m) {
  return m.is_mla() ? static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim) : m.head_dim();
}

double v_head_dim(const ModelSpec& m) { return m.is_mla() ? static_cast<double>(m.v_head_dim) : m.head_dim(); }

namespace {

// RMSNorm over a latent of `width` for `tokens` tokens: fwd reads x, writes y; bwd reads x and dy,
// writes dx.
OpCost latent_norm(std::string_view name, double tokens, double width, double p) {
  return ops::pointwise(name, OpKind::Norm, tokens * width, kRmsNormFlopsPerElement, 2.0 * p, 3.0 * p);
}

}  // namespace

void mla_projection_ops(std::vector<OpCost>& out, const ModelSpec& m, const OpShape& sh) {
  const double tokens = static_cast<double>(sh.micro_batch) * sh.seq_len / std::max(1, sh.cp);
  // Duplicated down-projections: each rank's own s/t tokens with sequence parallelism, else all.
  const double down_tokens = tokens / (sh.sequence_parallel ? sh.tp : 1);
  const double heads = static_cast<double>(m.heads) / sh.tp, h = m.hidden, p = sh.precision_bytes;
  const double qk = qk_head_dim(m);
  if (m.q_lora_rank > 0) {
    out.push_back(ops::gemm("mla_q_down_proj", OpKind::Gemm, down_tokens, m.q_lora_rank, h, 1, p, true));
    out.push_back(latent_norm("mla_q_norm", down_tokens, m.q_lora_rank, p));
    out.push_back(ops::gemm("mla_q_up_proj", OpKind::Gemm, tokens, heads * qk, m.q_lora_rank, 1, p, true));
  } else {
    out.push_back(ops::gemm("mla_q_proj", OpKind::Gemm, tokens, heads * qk, h, 1, p, true));
  }
  out.push_back(ops::gemm("mla_kv_down_proj", OpKind::Gemm, down_tokens, m.kv_lora_rank + m.qk_rope_head_dim, h, 1,
                          p, true));
  out.push_back(latent_norm("mla_kv_norm", down_tokens, m.kv_lora_rank, p));
  out.push_back(ops::gemm("mla_kv_up_proj", OpKind::Gemm, tokens, heads * (m.qk_nope_head_dim + m.v_head_dim),
                          m.kv_lora_rank, 1, p, true));
}

OpCost mla_rotary(const ModelSpec& m, const OpShape& sh) {
  const double tokens = static_cast<double>(sh.micro_batch) * sh.seq_len / std::max(1, sh.cp);
  const double heads = static_cast<double>(m.heads) / sh.tp;
  const double rope = m.qk_rope_head_dim, nope = m.qk_nope_head_dim, v = m.v_head_dim;
  constexpr double kRotaryFlopsPerElement = 3.0;  // x*cos + rotate_half(x)*sin, as the standard kernel
  const double p = sh.precision_bytes;
  OpCost op = ops::pointwise("rotary_embedding", OpKind::Elementwise, tokens * (heads + 1.0) * rope,
                             kRotaryFlopsPerElement, 2.0 * p, 2.0 * p);
  // Megatron-Core's fused MLA RoPE (fusions/fused_mla_yarn_rope_apply.py, core_r0.16.0):
  // ApplyMLARotaryEmbQ rotates the queries' rope parts in place (read + write H x rope a token);
  // ApplyMLARotaryEmbKV reads kv_up's output [H x (nope + v)] and the shared rope key and writes
  // key [H x (nope + rope)] and value [H x v] as new tensors (`o_key` / `o_value`, l.633-634),
  // its backward reads dk, dv and writes d_kv and d_k_pe (l.701-702). The unfused path
  // (multi_latent_attention.py l.822-834: torch.cat and .contiguous()) copies at least as much.
  const double q_bytes = 2.0 * tokens * heads * rope * p;
  const double kv_bytes = tokens * (heads * (nope + v) + rope) * p + tokens * heads * (nope + rope + v) * p;
  op.fwd_bytes = sim::Bytes{q_bytes + kv_bytes};
  op.bwd_bytes = sim::Bytes{q_bytes + kv_bytes};
  op.fwd_host_ops = 1.0;  // the kv kernel beyond the op's own (the query's)
  op.bwd_host_ops = 1.0;
  return op;
}

}  // namespace clustersim::workloads
