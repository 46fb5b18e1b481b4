// Derived values of the workload specs.
#include "workloads/specs.h"

namespace clustersim::workloads {

// Counts every trainable tensor of a Megatron-style decoder:
//   GPT style (GELU MLP): linear biases, LayerNorm weight+bias, learned absolute position
//     embeddings (seq_len x hidden) -- as in GPT-2/GPT-3 and Megatron's GPTModel.
//   Llama style (SwiGLU MLP): no biases, RMSNorm weight only, rotary positions (no parameters).
// `positions` overrides the position-embedding choice (GPT-NeoX: GELU with rotary).
double ModelSpec::layer_parameters() const {
  const double h = hidden;
  const double kv_width = static_cast<double>(kv_heads > 0 ? kv_heads : heads) * head_dim();
  const double bias = mlp == MlpKind::Gelu ? 1.0 : 0.0;
  const double qkv = h * (h + 2.0 * kv_width) + bias * (h + 2.0 * kv_width);
  const double attn_out = h * h + bias * h;
  const double mlp_params = mlp == MlpKind::Gelu
                                ? 2.0 * h * ffn_hidden + bias * (ffn_hidden + h)
                                : 3.0 * h * ffn_hidden;
  return qkv + attn_out + mlp_params + 2.0 * final_norm_parameters();
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
