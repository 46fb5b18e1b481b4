// Derived values of the workload specs.
#include "workloads/specs.h"

namespace clustersim::workloads {

// Counts every trainable tensor of a Megatron-style decoder:
//   GPT style (GELU MLP): linear biases, LayerNorm weight+bias, learned absolute position
//     embeddings (seq_len x hidden) -- as in GPT-2/GPT-3 and Megatron's GPTModel.
//   Llama style (SwiGLU MLP): no biases, RMSNorm weight only, rotary positions (no parameters).
// `positions` overrides the position-embedding choice (GPT-NeoX: GELU with rotary).
// The two families are told apart by the MLP kind because that is how every preset and every
// imported config pairs them (NormKind decides the norm parameters independently).
double ModelSpec::parameters() const {
  const double h = hidden;
  const double kv_width = static_cast<double>(kv_heads > 0 ? kv_heads : heads) * head_dim();
  const bool gpt_style = mlp == MlpKind::Gelu;
  const double bias = gpt_style ? 1.0 : 0.0;
  const double norm_params = norm == NormKind::LayerNorm ? 2.0 * h : h;

  const double qkv = h * (h + 2.0 * kv_width) + bias * (h + 2.0 * kv_width);
  const double attn_out = h * h + bias * h;
  const double mlp_params = mlp == MlpKind::Gelu
                                ? 2.0 * h * ffn_hidden + bias * (ffn_hidden + h)
                                : 3.0 * h * ffn_hidden;
  const double per_layer = qkv + attn_out + mlp_params + 2.0 * norm_params;

  const double embedding = static_cast<double>(vocab) * h;
  const bool learned = positions == PositionKind::Learned ||
                       (positions == PositionKind::Auto && gpt_style);
  const double position_params = learned ? static_cast<double>(seq_len) * h : 0.0;
  const double output = tied_embeddings ? 0.0 : static_cast<double>(vocab) * h;
  return layers * per_layer + embedding + position_params + norm_params + output;
}

}  // namespace clustersim::workloads
