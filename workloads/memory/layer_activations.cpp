// The tensors one transformer layer saves for its backward pass, per micro-batch (memory_model.h:
// "Activations", after Korthikanti et al. 2022 Table 2, FlashAttention, Transformer Engine's FP8
// copies, MLA and selective recompute): what each tensor is and its bytes on one GPU.
#include "workloads/memory/memory_lines.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "workloads/compute/compute_model.h"
#include "workloads/memory/mamba_memory.h"

namespace clustersim::workloads {

ActivationBytes activation_bytes_for(topology::Precision precision) {
  if (!mixed_precision(precision)) return {4.0, 4.0};
  // Transformer Engine keeps the GEMM inputs for backward in the GEMM's format: fp8 (1 byte), or
  // NVFP4's column-wise copy for the weight gradient (E2M1 + block scales).
  if (precision == topology::Precision::Nvfp4) return {2.0, workloads::kNvfp4BytesPerElement};
  return {2.0, precision == topology::Precision::Fp8 ? 1.0 : 2.0};
}

namespace {

// What Megatron-Core's MLASelfAttention keeps for the backward (multi_latent_attention.py, no
// recompute): each latent twice, as its RMSNorm's input (the rank's s/r tokens) and as the
// up-projection's input (all tokens: the column-parallel up-projection needs every token), then
// per local head Q and K over nope + rope (the shared rope key is expanded to every head before
// the fused kernel) and V over v_head_dim. `sb` = s x b tokens.
void add_mla_latents_and_qkv(std::vector<SavedTensor>& x, const ModelSpec& m, double sb, double t, double r,
                             const ActivationBytes& bytes) {
  const double e = bytes.element, g = bytes.gemm_input, heads = m.heads / t;
  if (m.q_lora_rank > 0)
    x.insert(x.end(), {{"MLA q latent (norm input)", e * sb * m.q_lora_rank / r},
                       {"MLA q latent (up-projection input)", g * sb * m.q_lora_rank}});
  x.insert(x.end(), {{"MLA kv latent (norm input)", e * sb * m.kv_lora_rank / r},
                     {"MLA kv latent (up-projection input)", g * sb * m.kv_lora_rank},
                     {"Q", e * sb * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)},
                     {"K", e * sb * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)},
                     {"V", e * sb * heads * m.v_head_dim}});
}

// [training] recompute_save under full recompute: the output of each op the forward keeps, as the
// op writes it on this GPU (model/transformer_ops.cpp's shapes): the fused QKV projection's
// column-parallel output (query heads and the kv heads, replicated when fewer than t), fc1's
// halves e*sbf/t, the row-parallel GEMMs' output hidden state e*sbh/r (reduce-scattered under SP),
// and the flash attention core's output over the local heads e*sb*(a/t)*d (d the head dim: the
// loader keeps "flash_attention" out of MLA layers, whose V width differs) with its fp32
// log-sum-exp 4*sb*(a/t) (what its backward reads besides Q, K and V).
void add_recompute_saved_outputs(std::vector<SavedTensor>& x, const ModelSpec& m, double sb, double t, double r,
                                 double e, unsigned save) {
  const double kv = std::max(1.0, (m.kv_heads > 0 ? m.kv_heads : m.heads) / t);
  const double h = m.hidden, f = m.ffn_hidden;
  if ((save & kSaveQkvProj) != 0) x.push_back({"qkv_proj output (recompute_save)", e * sb * (m.heads / t + 2.0 * kv) * m.head_dim()});
  if ((save & kSaveAttentionOutProj) != 0) x.push_back({"attention_out_proj output (recompute_save)", e * sb * h / r});
  if ((save & kSaveMlpFc1) != 0) x.push_back({"mlp_fc1 output (recompute_save)", e * sb * f / t});
  if ((save & kSaveMlpGate) != 0) x.push_back({"mlp_gate output (recompute_save)", e * sb * f / t});
  if ((save & kSaveMlpUp) != 0) x.push_back({"mlp_up output (recompute_save)", e * sb * f / t});
  if ((save & kSaveMlpFc2) != 0) x.push_back({"mlp_fc2 output (recompute_save)", e * sb * h / r});
  if ((save & kSaveMlpDown) != 0) x.push_back({"mlp_down output (recompute_save)", e * sb * h / r});
  if ((save & kSaveFlashAttention) != 0)
    x.push_back({"flash_attention output and log-sum-exp (recompute_save)", (e * m.head_dim() + 4.0) * sb * m.heads / t});
}

}  // namespace

std::vector<SavedTensor> saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                             bool sequence_parallel, Recompute recompute, const ActivationBytes& bytes,
                                             unsigned recompute_save) {
  if (model.is_hybrid()) return hybrid_saved_layer_tensors(model, micro_batch, tp, sequence_parallel, recompute, bytes);
  const double s = model.seq_len, b = micro_batch, h = model.hidden, a = model.heads, t = tp;
  const double e = bytes.element, g = bytes.gemm_input, sbh = s * b * h, sbf = s * b * model.ffn_hidden;
  const double r = sequence_parallel && tp > 1 ? t : 1.0;  // SP shards the non-GEMM regions
  if (recompute == Recompute::Full) {
    std::vector<SavedTensor> x = {{"layer input (checkpoint)", e * sbh / r}};
    add_recompute_saved_outputs(x, model, s * b, t, r, e, recompute_save);
    return x;
  }
  const bool flash = model.flash_attention;
  const bool dropout = has_dropout(model);
  const bool fp8 = g < e;
  const int kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const double q_width = model.attention_width();
  double sbq = s * b * q_width;  // sbh unless head_dim is set
  const double kv_width = flash ? static_cast<double>(kv) * model.head_dim() : q_width;  // non-flash repeats groups
  const double scores = a * s * s * b / t;
  std::vector<SavedTensor> x = {{"attention norm input", e * sbh / r}, {"QKV GEMM input", g * sbh / r}};
  if (model.is_mla()) {
    add_mla_latents_and_qkv(x, model, s * b, t, r, bytes);
  } else {
    x.insert(x.end(), {{"Q", e * sbq / t}, {"K", e * s * b * kv_width / t}, {"V", e * s * b * kv_width / t}});
  }
  if (!flash && recompute == Recompute::None) {
    x.push_back({"softmax output", e * scores});
    if (dropout) x.insert(x.end(), {{"attention dropout mask", scores}, {"attention dropout output", e * scores}});
  }
  if (model.is_mla()) sbq = s * b * a * model.v_head_dim;  // the out-projection's input is H x v wide
  x.push_back({"attention output (out-projection input)", e * sbq / t});
  if (fp8) x.push_back({"out-projection input, FP8 copy", g * sbq / t});
  if (flash && recompute == Recompute::None) x.push_back({"softmax logsumexp (fp32)", 4.0 * a * s * b / t});
  if (dropout) x.push_back({"attention-output dropout mask", sbh / r});
  x.insert(x.end(), {{"MLP norm input", e * sbh / r}, {"MLP input", g * sbh / r}});
  if (model.mlp == MlpKind::Gelu) {
    x.insert(x.end(), {{"fc1 output (GELU input)", e * sbf / t}, {"fc2 input (GELU output)", g * sbf / t}});
  } else {
    x.insert(x.end(), {{"fc1 output (gate and up)", 2.0 * e * sbf / t}, {"fc2 input (SwiGLU output)", g * sbf / t}});
  }
  if (dropout) x.push_back({"MLP dropout mask", sbh / r});
  return x;
}

bool recomputed_by_modules(const SavedTensor& tensor, unsigned recompute_modules) {
  const std::string_view name = tensor.name;
  // "mla_up_proj": MLA's up-projection outputs after the rotary embedding (the attention kernel's
  // Q, K and V) are freed after the forward and rebuilt from the saved latents before the backward
  // (Megatron-Core multi_latent_attention.py, CheckpointWithoutOutput); the latents stay. The
  // loader accepts the module only for MLA models, whose Q, K and V these names are.
  if ((recompute_modules & kRecomputeMlaUpProj) != 0 && (name == "Q" || name == "K" || name == "V")) return true;
  if ((recompute_modules & kRecomputeLayernorm) == 0) return false;
  return name == "QKV GEMM input" || name == "MLP input";
}

sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute, const ActivationBytes& bytes,
                                      unsigned recompute_save) {
  double sum = 0;
  for (const SavedTensor& x : saved_layer_tensors(model, micro_batch, tp, sequence_parallel, recompute, bytes, recompute_save)) {
    sum += x.bytes;
  }
  return sim::Bytes{sum};
}

}  // namespace clustersim::workloads
