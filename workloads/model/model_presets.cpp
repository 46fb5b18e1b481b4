// Model presets and where their numbers come from.
//
// GPT-3 family: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1
// (n_layers, d_model, n_heads), context 2048. Two table entries are not self-consistent and are
// corrected the way every reimplementation (Megatron-LM, EleutherAI) does:
//   gpt3-1.3b lists 24 heads with d_head 128 and d_model 2048; 2048/128 = 16 heads are used.
//   gpt3-13b lists d_model 5140; 40 heads x d_head 128 = 5120 is used.
// Vocabulary: GPT-2's BPE has 50257 tokens; Megatron-LM pads it to a multiple of
// make-vocab-size-divisible-by (128) x tp, giving 51200 for tp up to 8. We use 51200 because the
// published Megatron throughput and memory numbers (Narayanan et al. SC'21, Korthikanti et al.
// 2022) and the SC'21 FLOPs formula are for the padded vocabulary; the padded rows are real
// parameters and real GEMM work.
//
// megatron-1t: Narayanan et al. SC'21 Table 1 (128 layers, hidden 25600, 160 heads), seq 2048,
// vocab 51200 (same GPT-2 tokenizer, padded).
//
// Llama 2: Touvron et al. 2023 and the Hugging Face configs meta-llama/Llama-2-{7b,70b}-hf
// config.json (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads,
// vocab_size 32000, max_position_embeddings 4096, tie_word_embeddings false, RMSNorm, SwiGLU).
// Llama 3: Meta's model cards and meta-llama/Meta-Llama-3-{8B,70B} and Llama-3.1-405B config.json
// (vocab_size 128256, GQA with 8 KV heads, tie_word_embeddings false). Llama 3.1's configs allow
// 131072 positions via RoPE scaling; pre-training used 8192, which is the sequence length here.
//
// Mixtral (Jiang et al. 2024, "Mixtral of Experts"): mistralai/Mixtral-8x7B-v0.1 and
// Mixtral-8x22B-v0.1 config.json (num_local_experts 8, num_experts_per_tok 2, intermediate_size is
// each expert's width, no shared expert, every layer MoE). Their configs allow 32768 / 65536
// positions; 4096 is the sequence length of NVIDIA's Mixtral 8x7B pre-training benchmarks
// (NeMo performance summary) and is used for both; scenarios set seq_len to change it.
// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437; deepseek-ai/DeepSeek-V3 config.json): 61 layers,
// hidden 7168, 128 heads, vocab 129280, dense intermediate 18432 in the first 3 layers
// (first_k_dense_replace), then 256 routed experts of width 2048, top-8, plus 1 shared expert;
// multi-head latent attention with q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128 (report Sec. 4.2: "we set ... d_c 512, d_c' 1536, d_h^R 64");
// pre-training sequence length 4096 (Sec. 4.2). 671 B parameters, 37 B activated per token (Sec.
// 4.2), group-limited routing over 8 groups of 32 experts, 4 groups a token (config.json n_group 8,
// topk_group 4; Sec. 2.1.2 node-limited routing; Megatron-Bridge maps them to moe_router_num_groups /
// moe_router_group_topk, src/megatron/bridge/models/conversion/model_bridge.py), plus one multi-token-prediction module (config.json num_nextn_predict_layers 1, Sec. 2.2;
// model/mtp.h), which the released weights count as 14 B more (685 B). This preset gives 670.8 B
// and 37.5 B without the module (tests/workloads/attention_variants_test.cpp) and 684.3 B as
// released (tests/workloads/mtp_test.cpp).
// Kimi-K2 (Moonshot AI 2025, arXiv:2507.20534; moonshotai/Kimi-K2-Instruct config.json, the
// DeepseekV3 architecture): 61 layers, hidden 7168, 64 heads, vocab 163840, 1 dense first layer
// (intermediate 18432), 384 routed experts of width 2048, top-8, 1 shared expert, the same MLA
// ranks and head sizes; sequence 4096 (Megatron-Bridge's pre-training rows). 1.04 T / 32 B.
// GPT-OSS (OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card"; openai/gpt-oss-120b and
// gpt-oss-20b config.json): hidden 2880, 64 query heads of head_dim 64 (Q 4096 wide), 8 KV
// heads, every layer MoE with experts of width 2880 (intermediate_size), top-4, no shared expert,
// vocab 201088, untied embeddings, RMSNorm, gated SwiGLU experts; layer_types alternate
// sliding_attention (window 128) and full_attention starting with a sliding layer; learned
// attention sinks. 120b: 36 layers, 128 experts (116.8 B total, 5.1 B active); 20b: 24 layers,
// 32 experts (20.9 B, 3.6 B). initial_context_length 4096 is the sequence here. The attention
// and expert biases (5 k and 1.1 M per layer, < 0.05% of the total) are left out.
//
// Nemotron-H (NVIDIA 2025, "Nemotron-H: A Family of Accurate and Efficient Hybrid
// Mamba-Transformer Models", arXiv 2504.03624; Megatron-Bridge NemotronHModelProvider 8B/47B/56B
// and the Hugging Face configs nvidia/Nemotron-H-{8B,47B,56B}-Base-8K): hybrid_override_pattern
// one character per layer (52 / 98 / 118 layers: 24 / 45 / 54 Mamba-2, 4 / 5 / 10 attention, 24 /
// 48 / 54 MLP), hidden 4096 / 8192 / 8192, ffn 21504 / 30720 / 32768, attention 32 / 64 / 64 heads
// of 128 with 8 KV groups, Mamba-2 with 128 / 256 / 256 heads of 64 (d_inner = 2 x hidden), 8
// groups, state 128 / 256 / 256, conv 4; squared-ReLU MLP (two matrices: the "gelu" kind's
// shapes), RMSNorm, no biases, no position embedding, untied output layer, vocab 131072, seq 8192,
// no dropout. SSD chunk 128 (Megatron-Core MambaMixer's chunk_size; mamba_ssm's Mamba2 module
// defaults to 256). Counted here: 8.10 B, 46.8 B and 56.3 B parameters.
//
// Nemotron 3 Nano 30B-A3B (NVIDIA 2025, Hugging Face nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B
// config.json, model_type nemotron_h): hybrid_override_pattern of 52 layers, 23 Mamba-2 ('M'),
// 23 MoE ('E') and 6 attention ('*'); hidden 2688; attention 32 heads of head_dim 128 with 2 KV
// heads; Mamba-2 mamba_num_heads 64 of mamba_head_dim 64, n_groups 8, ssm_state_size 128,
// conv_kernel 4, chunk_size 128; MoE n_routed_experts 128, num_experts_per_tok 6,
// moe_intermediate_size 1856, one shared expert of moe_shared_expert_intermediate_size 3712
// (= 2 x 1856: shared_experts 2 in this spec's units); mlp_hidden_act relu2 (two matrices per
// expert), RMSNorm, no biases, untied embeddings, vocab 131072. Megatron-Bridge's Nemotron 3 Nano
// pretraining recipe trains it at seq 8192. The model card gives 31.6 B parameters, 3.2 B active
// (3.6 B with embeddings); counted here: 31.6 B and 3.58 B (nemotron_3_active_parameters test).
//
// Nemotron 3 Super 120B-A12B (NVIDIA 2026, "Nemotron 3 Super: Open, Efficient Mixture-of-Experts
// Hybrid Mamba-Transformer Model for Agentic Reasoning", arXiv 2604.12374; Hugging Face
// nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16; Megatron-LM examples/post_training/modelopt/conf/
// nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16.sh and tests/functional_tests/test_cases/nemotron/
// nemotron3_super_release_gb200/model_config.yaml; Megatron-Bridge Nemotron3SuperProvider):
// hybrid_layer_pattern of 88 layers, 40 Mamba-2, 40 LatentMoE ('E') and 8 attention; hidden 4096;
// attention 32 heads (--num-attention-heads 32) of kv_channels 128 with 2 query groups; Mamba-2
// 128 heads of 64 (d_inner 8192 = 2 x hidden), state 128 (mamba_state_dim), conv 4, 8 groups
// (NemotronH default; the 120.6 B total pins it: 16 groups would give 121.0 B); 512 routed
// squared-ReLU experts of 2688, top-22, moe_latent_size 1024, one shared expert of 5376 (= 2 x
// 2688); no biases, no position embedding, RMSNorm, untied embeddings, vocab 131072. The model card
// and report give 120.6 B total, 12.7 B active (emergentmind's summary of the report); counted
// here: 120.6 B and 12.8 B with embeddings (nemotron_3_super_parameters test). MTP is not part of
// the preset: the checkpoint has one shared "*E" module (num_nextn_predict_layers 1) that the
// pretraining recipe runs twice (mtp_num_layers 2, mtp_use_repeated_layer); rows set it.
//
// Nemotron 3 Ultra 550B-A55B (NVIDIA 2026, "Nemotron 3 Ultra: Open, Efficient Mixture-of-Experts
// Hybrid Mamba-Transformer Model for Agentic Reasoning", arXiv 2606.15007; Hugging Face
// nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16; Megatron-LM examples/post_training/modelopt/conf/
// nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh, "Nemotron Ultra config for ModelOpt
// examples" PR #5159): hybrid pattern of 108 layers (--num-layers 108), 48 Mamba-2, 48
// LatentMoE and 12 attention; hidden 8192; attention 64 heads of kv_channels 128 with 2 query
// groups; Mamba-2 256 heads of 64 (d_inner 16384 = 2 x hidden); 512 squared-ReLU experts of 5120
// (--ffn-hidden-size), top-22, moe_latent_size 2048, one shared expert of 10240 (= 2 x 5120); no
// biases, no position embedding, RMSNorm, untied embeddings. The script leaves the Mamba state,
// groups and conv and the vocabulary unset: Megatron-Core's TransformerConfig defaults
// (mamba_state_dim 128, mamba_num_groups 8, MambaMixer d_conv 4), which must match the Hugging Face
// checkpoint the script loads; vocab 131072 is the Nemotron 3 tokenizer's (Nano's and Super's
// config.json; Ultra's was not at hand: UNSURE, 1 % of the embedding's 2.1 B per 1,300 tokens).
// The model card and report give 550 B total, 55 B active; counted here: 549.3 B and 56.1 B with
// embeddings, 53.9 B without (nemotron_3_ultra_parameters test). MTP as Super's: one shared "*E"
// module run twice in pretraining (Megatron-Bridge recipes/nemotronh/nemotron_3_ultra.py,
// mtp_num_layers 2, mtp_use_repeated_layer); rows set it.
#include "workloads/model/model_presets.h"

#include <array>
#include <string>

namespace clustersim::workloads {
namespace {

// The dimensions a preset names; MLP, norm and tied embeddings are its family's (below).
ModelSpec shaped(const char* id, int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, int seq) {
  ModelSpec m;
  m.id = id;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.seq_len = seq;
  m.vocab = vocab;
  return m;
}

// GPT-3: multi-head attention, a 4 x hidden GELU MLP, LayerNorm, tied embeddings.
ModelSpec gpt3(const char* id, int layers, int hidden, int heads) {
  ModelSpec m = shaped(id, layers, hidden, heads, heads, 4 * hidden, 51200, 2048);
  m.mlp = MlpKind::Gelu;
  m.norm = NormKind::LayerNorm;
  m.tied_embeddings = true;
  return m;
}

// Llama: SwiGLU MLP, RMSNorm, untied embeddings.
ModelSpec llama(const char* id, int layers, int hidden, int heads, int kv_heads, int ffn,
                int vocab, int seq) {
  ModelSpec m = shaped(id, layers, hidden, heads, kv_heads, ffn, vocab, seq);
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.tied_embeddings = false;
  return m;
}

// A Llama-style model whose MLPs are mixtures of `experts` experts of width `moe_ffn`, top-k.
ModelSpec moe(ModelSpec m, int experts, int top_k, int moe_ffn, int shared, int first_dense) {
  m.experts = experts;
  m.experts_per_token = top_k;
  m.moe_ffn_hidden = moe_ffn;
  m.shared_experts = shared;
  m.first_dense_layers = first_dense;
  return m;
}

// A Nemotron-H hybrid (above): `pattern` of Mamba-2 ('M'), attention ('*') and MLP ('-') layers.
ModelSpec nemotron_h(const char* id, const char* pattern, int hidden, int heads, int ffn, int mamba_heads,
                     int mamba_state) {
  const std::string p = pattern;
  ModelSpec m = shaped(id, static_cast<int>(p.size()), hidden, heads, 8, ffn, 131072, 8192);
  m.mlp = MlpKind::Gelu;  // squared ReLU: two matrices like GELU's
  m.norm = NormKind::RmsNorm;
  m.tied_embeddings = false;
  m.positions = PositionKind::None;
  m.dropout = false;
  m.attention_head_dim = 128;
  m.hybrid_pattern = p;
  m.mamba_heads = mamba_heads;
  m.mamba_head_dim = 64;
  m.mamba_groups = 8;
  m.mamba_state = mamba_state;
  m.mamba_conv = 4;
  m.mamba_chunk = 128;
  return m;
}

// `layers` multi-token-prediction modules (DeepSeek-V3: 1; Kimi-K2's config has none).
ModelSpec with_mtp(ModelSpec m, int layers) {
  m.mtp_layers = layers;
  return m;
}

// Group-limited routing (ModelSpec::router_groups).
ModelSpec router_grouped(ModelSpec m, int groups, int group_topk) {
  m.router_groups = groups;
  m.router_group_topk = group_topk;
  return m;
}

// Multi-head latent attention with DeepSeek-V3's ranks and head sizes (Kimi-K2 shares them).
ModelSpec deepseek_mla(ModelSpec m) {
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  return m;
}

// GPT-OSS: head_dim 64, sliding window 128 on every other layer (the first slides), sinks.
ModelSpec gpt_oss(ModelSpec m) {
  m.attention_head_dim = 64;
  m.sliding_window = 128;
  m.full_attention_every = 2;
  m.attention_sinks = true;
  m.expert_bias = true;  // add_bias_linear: the experts' linears carry biases
  m.yarn_rope = true;    // rope_scaling: yarn
  m.glu_clamp = true;    // activation_func_clamp_value 7.0 (swiglu_limit)
  return m;
}

// A Nemotron 3 hybrid MoE (above): `pattern` of Mamba-2 ('M'), attention ('*') and MoE ('E')
// layers, the Nemotron-H layer shapes with MoE blocks of `experts` relu2 experts, top-k.
ModelSpec nemotron_3(const char* id, const char* pattern, int hidden, int heads, int kv_heads, int mamba_heads,
                     int experts, int top_k, int moe_ffn, int shared_ffn) {
  ModelSpec m = nemotron_h(id, pattern, hidden, heads, moe_ffn, mamba_heads, 128);
  m.kv_heads = kv_heads;
  m.experts = experts;
  m.experts_per_token = top_k;
  m.moe_ffn_hidden = moe_ffn;
  m.shared_experts = shared_ffn / moe_ffn;
  return m;
}

// LatentMoE (ModelSpec::moe_latent_size): the routed experts work at `latent` width.
ModelSpec latent_moe(ModelSpec m, int latent) {
  m.moe_latent_size = latent;
  return m;
}

const std::array<ModelSpec, 24>& presets() {
  static const std::array<ModelSpec, 24> kPresets = {
      gpt3("gpt3-125m", 12, 768, 12),
      gpt3("gpt3-1.3b", 24, 2048, 16),
      gpt3("gpt3-2.7b", 32, 2560, 32),
      gpt3("gpt3-6.7b", 32, 4096, 32),
      gpt3("gpt3-13b", 40, 5120, 40),
      gpt3("gpt3-175b", 96, 12288, 96),
      gpt3("megatron-1t", 128, 25600, 160),
      //     id            layers hidden heads kv  ffn    vocab   seq
      llama("llama2-7b",   32,  4096,  32,  32, 11008, 32000,  4096),
      llama("llama2-70b",  80,  8192,  64,  8,  28672, 32000,  4096),
      llama("llama3-8b",   32,  4096,  32,  8,  14336, 128256, 8192),
      llama("llama3-70b",  80,  8192,  64,  8,  28672, 128256, 8192),
      llama("llama3-405b", 126, 16384, 128, 8,  53248, 128256, 8192),
      //                                                                experts top-k width shared dense
      moe(llama("mixtral-8x7b",  32, 4096, 32,  8,   14336, 32000,  4096), 8,   2, 14336, 0, 0),
      moe(llama("mixtral-8x22b", 56, 6144, 48,  8,   16384, 32768,  4096), 8,   2, 16384, 0, 0),
      with_mtp(router_grouped(deepseek_mla(moe(llama("deepseek-v3", 61, 7168, 128, 128, 18432, 129280, 4096), 256, 8, 2048, 1, 3)), 8, 4), 1),
      deepseek_mla(moe(llama("kimi-k2",     61, 7168, 64,  64,  18432, 163840, 4096), 384, 8, 2048, 1, 1)),
      gpt_oss(moe(llama("gpt-oss-120b",     36, 2880, 64,  8,   2880,  201088, 4096), 128, 4, 2880, 0, 0)),
      gpt_oss(moe(llama("gpt-oss-20b",      24, 2880, 64,  8,   2880,  201088, 4096), 32,  4, 2880, 0, 0)),
      //         id                pattern                                               hidden heads ffn  mamba heads, state
      nemotron_h("nemotron-h-8b", "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", 4096, 32, 21504, 128, 128),
      nemotron_h("nemotron-h-47b",
                 "M-M-M-M-M-M-M-M-M*-M-M-M-M-M-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-M-M---MM---M-M*-M-M-M-M-M-",
                 8192, 64, 30720, 256, 256),
      nemotron_h("nemotron-h-56b",
                 "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-"
                 "M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
                 8192, 64, 32768, 256, 256),
      //         id                         pattern                                  hidden heads kv mamba experts k ffn shared
      nemotron_3("nemotron-3-nano-30b-a3b", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", 2688, 32, 2, 64, 128, 6,
                 1856, 3712),
      latent_moe(nemotron_3("nemotron-3-super-120b-a12b",
                            "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME", 4096,
                            32, 2, 128, 512, 22, 2688, 5376),
                 1024),
      latent_moe(nemotron_3("nemotron-3-ultra-550b-a55b",
                            "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*"
                            "EMEMEMEM*EMEMEMEME",
                            8192, 64, 2, 256, 512, 22, 5120, 10240),
                 2048),
  };
  return kPresets;
}

}  // namespace

const ModelSpec* find_model_preset(std::string_view id) {
  for (const ModelSpec& m : presets()) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

std::span<const ModelSpec> all_model_presets() { return presets(); }

}  // namespace clustersim::workloads
