// The architectures of the modern rows' models that the tables leave out (mixtures of experts from
// their Hugging Face configs, hybrid Mamba models as the workloads' presets): the facts the row ->
// scenario mapping (modern_rows.cpp) fills in, each with its source.
#include "analysis/modern_row_archs.h"

#include <cctype>
#include <cstdlib>

#include "workloads/model/model_presets.h"

namespace clustersim::analysis::modern_detail {

bool has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

namespace {

// The MoE architectures the tables leave out (they give layers, hidden and heads only), from each
// model's Hugging Face config.json: Mixtral-8x7B / 8x22B (mistralai, num_local_experts 8,
// num_experts_per_tok 2, intermediate_size per expert), Llama-4-Maverick (meta-llama
// Llama-4-Maverick-17B-128E: num_local_experts 128, top-1, 1 shared expert, intermediate_size 8192
// per expert, intermediate_size_mlp 16384 in the dense layers, interleave_moe_layer_step 2: layers
// 1, 3, 5, ... are MoE), Llama-4-Scout (meta-llama Llama-4-Scout-17B-16E config.json: 48 layers,
// hidden 5120, 40 heads of 128, 8 KV heads, num_local_experts 16, top-1, 1 shared expert,
// intermediate_size 8192, interleave_moe_layer_step 1: every layer MoE; its chunked attention
// (attention_chunk_size 8192) equals full causal attention at the row's 8192 tokens), Grok-1
// (xai-org/grok-1 model.py and run.py: 64 layers, emb 6144, 48 query heads of 128, 8 KV heads,
// 8 experts, num_selected_experts 2, widening_factor 8 -> ffn_size 32768 per expert, every layer
// MoE, no shared expert, gated-GELU MLP (three matrices, the "swiglu" kind's shapes), RMSNorm,
// rotary positions; xAI's output layer is the input embedding transposed (InOutEmbed.decode), but
// every Grok-1 row ran NeMo's configuration, which unties them: share_embeddings_and_output_weights
// false in dgxc-benchmarking grok1/grok1_314b.yaml (v24.11.1 - v25.02, NeMo 1) and in NeMo's
// MixtralConfig, the base of scripts/performance/llm/pretrain_grok1_314b.py at 7a8f1cc7 (v25.05)),
// Qwen3-30B-A3B and Qwen3-235B-A22B (Qwen/Qwen3-30B-A3B, Qwen/Qwen3-235B-A22B config.json:
// num_experts 128, num_experts_per_tok 8, moe_intermediate_size 768 / 1536, no shared expert,
// decoder_sparse_step 1 and no mlp_only_layers: every layer MoE, head_dim 128 (Q 4096 / 8192 wide,
// twice hidden), tie_word_embeddings false; their per-head QK RMSNorm is a pointwise op over Q and
// K, not modelled). The Megatron-Bridge rows route with force-balanced token distribution (the
// page's footnote), so their "tokendrop" variants drop nothing at capacity >= 1 and run the same
// expert GEMMs as the dropless ones: both are modelled dropless.
// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json: 256 experts top-8 of width 2048, 1 shared,
// first_k_dense_replace 3 with intermediate_size 18432) and Kimi-K2 (moonshotai/Kimi-K2-Instruct
// config.json: 384 experts top-8 of width 2048, 1 shared, first_k_dense_replace 1, intermediate
// 18432) attend through multi-head latent attention (q_lora_rank 1536, kv_lora_rank 512,
// qk_nope/rope head dims 128/64, v_head_dim 128 in both configs). GPT-OSS-120B
// (openai/gpt-oss-120b config.json: num_local_experts 128, experts_per_token 4, intermediate_size
// 2880 per expert, no shared expert, every layer MoE, head_dim 64, tie_word_embeddings false)
// slides a 128-token window on every other layer (layer_types: sliding, full, ...) with learned
// attention sinks. Kimi-K2's rows train with Muon (their notes), modelled as Adam: Muon keeps one
// moment instead of two and adds its Newton-Schulz iterations, neither of which is modelled.
// Every architecture here has gated three-matrix MLPs and RMSNorm; `tied` is its config's
// tie_word_embeddings, `head_dim` its head width when not hidden / heads (0 otherwise),
// `attention` the [model] lines of its attention variant (and routing groups), each after a newline (workloads/model/attention_variants.h).
// Llama 4 multiplies the dispatched tokens by their router probability before the experts
// (`probs_on_input`: Megatron-Core moe_apply_probs_on_input, which NeMo's Llama4Config sets,
// nemo/collections/llm/gpt/model/llama.py 7a8f1cc7 / v2.4.0; Hugging Face's Llama4TextMoe scales
// the routed input by the router scores likewise); the other architectures weight the experts'
// activation (Megatron-Core's default).
// Rows of other MoE models stay skipped (other_moe_reason says why).
constexpr const char* kDeepSeekMla =
    "\nq_lora_rank = 1536\nkv_lora_rank = 512\nqk_nope_head_dim = 128\nqk_rope_head_dim = 64\nv_head_dim = 128";
// DeepSeek-V3's group-limited routing (config.json n_group 8, topk_group 4, which Megatron-Bridge
// maps to moe_router_num_groups / moe_router_group_topk: src/megatron/bridge/models/conversion/
// model_bridge.py); Kimi-K2's n_group 1 is no limit.
constexpr const char* kDeepSeekV3Lines =
    "\nq_lora_rank = 1536\nkv_lora_rank = 512\nqk_nope_head_dim = 128\nqk_rope_head_dim = 64\nv_head_dim = 128"
    "\nrouter_groups = 8\nrouter_group_topk = 4";
constexpr const char* kGptOssAttention = "\nsliding_window = 128\nfull_attention_every = 2\nattention_sinks = true\nexpert_bias = true\nyarn_rope = true\nglu_clamp = true";
constexpr MoeArch kMoeArchs[] = {
    {"Mixtral-8x7B", 8, 2, 14336, 0, 0, 1, 14336, false, 0, "", false},
    {"Mixtral-8x22B", 8, 2, 16384, 0, 0, 1, 16384, false, 0, "", false},
    {"Llama4-Maverick", 128, 1, 8192, 1, 1, 2, 16384, false, 0, "", true},
    {"Llama4-Scout", 16, 1, 8192, 1, 0, 1, 16384, false, 0, "", true},
    {"Grok-1", 8, 2, 32768, 0, 0, 1, 32768, false, 0, "", false},
    {"Qwen3-30B-A3B", 128, 8, 768, 0, 0, 1, 6144, false, 128, "", false},
    {"Qwen3-235B-A22B", 128, 8, 1536, 0, 0, 1, 12288, false, 128, "", false},
    {"DeepSeek-V3", 256, 8, 2048, 1, 3, 1, 18432, false, 0, kDeepSeekV3Lines, false},
    {"Kimi-K2", 384, 8, 2048, 1, 1, 1, 18432, false, 0, kDeepSeekMla, false},
    {"GPT-OSS-120B", 128, 4, 2880, 0, 0, 1, 2880, false, 64, kGptOssAttention, false},
};

}  // namespace

const MoeArch* moe_arch_of(const ModernRow& r) {
  for (const MoeArch& a : kMoeArchs)
    if (has(r.model, a.model)) return &a;
  return nullptr;
}

// "EP=8", "ETP=1" in the row's notes; 0 when not stated.
int notes_int(const ModernRow& r, const std::string& key) {
  std::size_t at = 0;
  while ((at = r.notes.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || !std::isalpha(static_cast<unsigned char>(r.notes[at - 1]))) {
      return std::atoi(r.notes.c_str() + at + key.size() + 1);
    }
    at += key.size();
  }
  return 0;
}

// The MoE models the tables name that are not scored, and why:
//   * DeepSeek-V4-Flash: no published architecture in the row (its shape columns are empty).
std::string other_moe_reason(const std::string& model) {
  if (has(model, "DeepSeek-V4")) return "mixture of experts without a published architecture (DeepSeek-V4)";
  return "mixture of experts whose architecture is not in kMoeArchs (analysis/modern_row_archs.cpp; issue #11)";
}

// Hybrid Mamba models the tables name, as the workloads' presets (model/model_presets.cpp: the
// Nemotron-H 8B/47B/56B shapes from arXiv 2504.03624 and Megatron-Bridge's NemotronH providers).
// dgxc-benchmarking's Nemotron-H rows state only the layer count ("arch fields beyond layers not
// filled"); the preset supplies the rest. Nemotron 3 interleaves Mamba-2 with MoE layers ('E' in
// the pattern) and its rows state no architecture: Nano is the nemotron-3-nano-30b-a3b preset
// (its Hugging Face config.json), Super the nemotron-3-super-120b-a12b preset (LatentMoE; its
// sources in model/model_presets.cpp), Ultra the nemotron-3-ultra-550b-a55b preset (LatentMoE;
// Megatron-LM examples/post_training/modelopt/conf/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh).
// Nemotron 3.5 Lightning is Nano's shape with an MTP module: Megatron-Bridge r0.6.0 recipes/
// nemotronh/h100/nemotron_3_nano.py nemotron_3_5_lightning_pretrain_config() starts from Nano's
// HybridModelProvider (the same pattern, hidden 2688, 128 experts of 1856, top-6, shared 3712) and
// adds mtp_num_layers 2 ("*E", repeated), as its GB200 performance recipe does (perf_recipes/
// nemotronh/gb200/nemotronh.py _build_nemotron_3_5_lightning_gb200_mxfp8 over Nano's MXFP8 build);
// Megatron-LM's functional test nemotron3_5_lightning_nightly_tp1_pp1_cp1_ep8_dgx_gb200 states the
// same shape; the verification card's 32,913,266,240 parameters (examples/model_verification_cards/
// nemotron-3.5-lightning/card.yaml) are Nano's plus one "*E" module and 24 x 128 router biases.
const char* hybrid_preset_of(const ModernRow& r) {
  if (has(r.model, "Nemotron-H 56B")) return "nemotron-h-56b";
  if (has(r.model, "Nemotron-H 47B")) return "nemotron-h-47b";
  if (has(r.model, "Nemotron-H 8B")) return "nemotron-h-8b";
  if (has(r.model, "Nemotron_3_Nano") || has(r.model, "Nemotron_3_5_Lightning")) return "nemotron-3-nano-30b-a3b";
  if (has(r.model, "Nemotron_3_Super")) return "nemotron-3-super-120b-a12b";
  if (has(r.model, "Nemotron_3_Ultra")) return "nemotron-3-ultra-550b-a55b";
  return nullptr;
}

// A row whose model has routed experts: an MoE architecture above, or a hybrid MoE preset.
bool has_experts(const ModernRow& r) {
  if (moe_arch_of(r) != nullptr) return true;
  const char* id = hybrid_preset_of(r);
  const workloads::ModelSpec* m = id != nullptr ? workloads::find_model_preset(id) : nullptr;
  return m != nullptr && m->is_moe();
}

// The row with the preset's shape where the table leaves it empty (hybrid rows only).
ModernRow with_hybrid_shape(const ModernRow& r) {
  const char* id = hybrid_preset_of(r);
  const workloads::ModelSpec* m = id != nullptr ? workloads::find_model_preset(id) : nullptr;
  if (m == nullptr) return r;
  ModernRow shaped = r;
  if (shaped.layers <= 0) shaped.layers = m->layers;
  if (shaped.hidden <= 0) shaped.hidden = m->hidden;
  if (shaped.heads <= 0) shaped.heads = m->heads;
  if (shaped.kv_heads <= 0) shaped.kv_heads = m->kv_heads;
  if (shaped.ffn_hidden <= 0) shaped.ffn_hidden = m->ffn_hidden;
  if (shaped.vocab <= 0) shaped.vocab = m->vocab;
  return shaped;
}

}  // namespace clustersim::analysis::modern_detail
