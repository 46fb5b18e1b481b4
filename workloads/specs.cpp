// Derived values of the workload specs.
#include "workloads/specs.h"

#include <algorithm>

namespace clustersim::workloads {

// Counts every trainable tensor of a Megatron-style decoder:
//   GPT style (GELU MLP): linear biases, LayerNorm weight+bias, learned absolute position
//     embeddings (seq_len x hidden) -- as in GPT-2/GPT-3 and Megatron's GPTModel.
//   Llama style (SwiGLU MLP): no biases, RMSNorm weight only, rotary positions (no parameters).
// `positions` overrides the position-embedding choice (GPT-NeoX: GELU with rotary).
double ModelSpec::dense_layer_parameters() const {
  const double h = hidden;
  const double bias = mlp == MlpKind::Gelu ? 1.0 : 0.0;
  const double mlp_params = mlp == MlpKind::Gelu
                                ? 2.0 * h * ffn_hidden + bias * (ffn_hidden + h)
                                : 3.0 * h * ffn_hidden;
  return attention_parameters() + mlp_params + 2.0 * final_norm_parameters();
}

// MLA (DeepSeek-V2 arXiv:2405.04434 Sec. 2.1.2-2.1.3, Eq. 9-18; the Hugging Face DeepseekV3
// modelling code's q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm,
// kv_b_proj, o_proj, none with a bias): with H heads, nope/rope/v head sizes and ranks r_q, r_kv,
//   Q: h r_q + r_q + r_q H (nope + rope)   (r_q = 0: h H (nope + rope))
//   KV: h (r_kv + rope) + r_kv + r_kv H (nope + v)      O: H v h
// DeepSeek-V3 (h 7168, H 128, r_q 1536, r_kv 512, 128/64/128): 187.1 M per layer.
double ModelSpec::attention_parameters() const {
  const double h = hidden, heads_d = heads;
  const double sinks = attention_sinks ? heads_d : 0.0;
  if (is_mla()) {
    const double qk = qk_nope_head_dim + qk_rope_head_dim;
    const double q = q_lora_rank > 0 ? q_lora_rank * (h + 1.0 + heads_d * qk) : h * heads_d * qk;
    const double kv = h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank +
                      static_cast<double>(kv_lora_rank) * heads_d * (qk_nope_head_dim + v_head_dim);
    return q + kv + heads_d * v_head_dim * h + sinks;
  }
  const double kv_width = static_cast<double>(kv_heads > 0 ? kv_heads : heads) * head_dim();
  const double bias = mlp == MlpKind::Gelu ? 1.0 : 0.0;
  const double q_width = attention_width();
  const double qkv = (h + bias) * (q_width + 2.0 * kv_width);
  return qkv + q_width * h + bias * h + sinks;
}

double ModelSpec::tp_replicated_attention_parameters() const {
  if (!is_mla()) return 0.0;
  const double h = hidden;
  const double q_down = q_lora_rank > 0 ? q_lora_rank * (h + 1.0) : 0.0;
  return q_down + h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank;
}

// A SwiGLU expert has three hidden x moe_ffn_hidden matrices, a GELU expert two (no biases:
// Mixtral, Qwen-MoE and DeepSeek-V3 experts have none).
double ModelSpec::expert_parameters() const {
  const double per_expert = (mlp == MlpKind::Gelu ? 2.0 : 3.0) * expert_io_width() * static_cast<double>(moe_ffn_hidden);
  return experts * per_expert;
}

double ModelSpec::moe_block_parameters() const {
  const double h = hidden;
  const double shared = (mlp == MlpKind::Gelu ? 2.0 : 3.0) * h * static_cast<double>(moe_ffn_hidden) * shared_experts;
  const double router = h * experts;
  return shared + router + latent_projection_parameters();
}

double ModelSpec::moe_layer_dense_parameters() const {
  if (is_hybrid()) return moe_block_parameters() + final_norm_parameters();
  const double dense_mlp = (mlp == MlpKind::Gelu ? 2.0 : 3.0) * static_cast<double>(hidden) * ffn_hidden;
  return dense_layer_parameters() - dense_mlp + moe_block_parameters();
}

bool ModelSpec::is_moe_layer(int layer) const {
  if (!is_moe()) return false;
  if (is_hybrid()) return layer >= 0 && layer < static_cast<int>(hybrid_pattern.size()) && hybrid_pattern[layer] == 'E';
  return layer >= first_dense_layers && (layer - first_dense_layers) % moe_layer_freq == 0;
}

int ModelSpec::moe_layers_in(int first, int count) const {
  int n = 0;
  for (int l = first; l < first + count; ++l) n += is_moe_layer(l) ? 1 : 0;
  return n;
}

double ModelSpec::layer_parameters() const { return layer_parameters_per_ep_rank(1); }

double ModelSpec::layer_parameters_per_ep_rank(int ep) const {
  if (is_hybrid() && layers > 0) {
    const double moe = layers_of_kind_in(LayerKind::Moe, 0, layers);
    return (parameters_of_layers(0, layers) - moe * expert_parameters() * (1.0 - 1.0 / std::max(1, ep))) / layers;
  }
  if (!is_moe() || layers <= 0) return dense_layer_parameters();
  const double moe = moe_layers_in(0, layers);
  const double dense = layers - moe;
  const double moe_layer = moe_layer_dense_parameters() + expert_parameters() / std::max(1, ep);
  return (dense * dense_layer_parameters() + moe * moe_layer) / layers;
}

LayerKind ModelSpec::layer_kind(int layer) const {
  if (!is_hybrid()) return is_moe_layer(layer) ? LayerKind::MoeTransformer : LayerKind::Transformer;
  const char c = layer >= 0 && layer < static_cast<int>(hybrid_pattern.size()) ? hybrid_pattern[layer] : 'M';
  return c == '*' ? LayerKind::Attention : c == '-' ? LayerKind::Mlp : c == 'E' ? LayerKind::Moe : LayerKind::Mamba;
}

int ModelSpec::layers_of_kind_in(LayerKind kind, int first, int count) const {
  int n = 0;
  for (int l = first; l < first + count; ++l) n += layer_kind(l) == kind ? 1 : 0;
  return n;
}

// A hybrid model's layers are pre-norm blocks (no biases, Megatron's --disable-bias-linear):
//   Mamba-2 (Megatron-Core MambaMixer): in_proj hidden -> [z, x, B, C, dt] of widths d_inner,
//     d_inner, G*N, G*N, H; a depthwise conv1d over x, B, C (d_conv taps and a bias per channel);
//     A_log, D and dt_bias, one each per head; the gated RMSNorm over d_inner; out_proj
//     d_inner -> hidden; the layer's pre-norm (hidden).
//   Attention: the pre-norm, QKV and the out-projection; Mlp: the pre-norm and the MLP.
//   Moe: the pre-norm, the router (hidden -> experts), the shared experts and every routed expert.
double ModelSpec::layer_parameters_of(LayerKind kind) const {
  const double h = hidden, norm_params = final_norm_parameters();
  switch (kind) {
    case LayerKind::Transformer:
      return dense_layer_parameters();
    case LayerKind::MoeTransformer:
      return moe_layer_dense_parameters() + expert_parameters();
    case LayerKind::Attention: {
      const double kv_width = static_cast<double>(kv_heads > 0 ? kv_heads : heads) * head_dim();
      return h * (attention_width() + 2.0 * kv_width) + attention_width() * h + norm_params;
    }
    case LayerKind::Mlp:
      return (mlp == MlpKind::Gelu ? 2.0 : 3.0) * h * ffn_hidden + norm_params;
    case LayerKind::Moe:
      return moe_block_parameters() + expert_parameters() + norm_params;
    case LayerKind::Mamba: {
      const double inner = mamba_inner(), bc = 2.0 * mamba_groups * static_cast<double>(mamba_state);
      const double in_proj = h * (2.0 * inner + bc + mamba_heads);
      const double conv = (inner + bc) * (mamba_conv + 1.0);
      return in_proj + conv + 3.0 * mamba_heads + inner + inner * h + norm_params;
    }
  }
  return 0.0;
}

double ModelSpec::parameters_of_layers(int first, int count) const {
  double sum = 0;
  for (const LayerKind kind : kLayerKinds) sum += layers_of_kind_in(kind, first, count) * layer_parameters_of(kind);
  return sum;
}

double ModelSpec::final_norm_parameters() const {
  return norm == NormKind::LayerNorm ? 2.0 * hidden : static_cast<double>(hidden);
}

double ModelSpec::embedding_parameters() const {
  const double positions_params = learned_positions() ? static_cast<double>(seq_len) * hidden : 0.0;
  return static_cast<double>(vocab) * hidden + positions_params;
}

double ModelSpec::parameters() const {
  const double output = tied_embeddings ? 0.0 : static_cast<double>(vocab) * hidden;
  return layers * layer_parameters() + embedding_parameters() + final_norm_parameters() + output;
}

}  // namespace clustersim::workloads
