// The [model] section: a preset, an imported Hugging Face config.json (hf_config), or a shape
// given field by field; fields given next to a preset or an import modify it. Derived defaults
// (kv_heads = heads, the FFN width of GELU and SwiGLU MLPs) apply only to a model without a base.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"

namespace clustersim::scenarios {
namespace {

using workloads::MlpKind;
using workloads::ModelSpec;

constexpr std::string_view kModelKeys[] = {"preset",     "layers",  "hidden", "heads",     "kv_heads", "head_dim",
                                           "ffn_hidden", "seq_len", "vocab",  "hf_config", "mlp",
                                           "norm",       "tied_embeddings", "flash_attention", "dropout",
                                           "experts", "experts_per_token", "moe_ffn_hidden", "shared_experts",
                                           "first_dense_layers", "moe_layer_freq", "capacity_factor", "expert_bias", "moe_apply_probs_on_input", "glu_clamp", "router_groups", "router_group_topk", "moe_latent_size",
                                           "hybrid_pattern", "mamba_heads", "mamba_head_dim", "mamba_expand",
                                           "mamba_groups", "mamba_state", "mamba_conv", "mamba_chunk",
                                           "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                           "v_head_dim", "sliding_window", "full_attention_every", "attention_sinks", "yarn_rope", "eager_squared_relu",
                                           "eager_layer_ops", "attention_kernel",
                                           "mtp_layers", "packed_sample_len"};

// What [model] starts from: a preset's shape, an imported config's, or nothing.
struct ModelBase {
  std::optional<ModelSpec> spec;
  bool imported = false;
};

// The fields of [model], each absent unless given (and valid).
struct ModelFields {
  std::optional<int> layers, hidden, heads, kv_heads, head_dim, ffn, seq_len, vocab;
  std::optional<MlpKind> mlp;
  std::optional<workloads::NormKind> norm;
  std::optional<bool> tied, flash, dropout;
  // Mixture of experts (workloads::ModelSpec); 0 experts turns an MoE base dense.
  std::optional<int> experts, experts_per_token, moe_ffn, shared_experts, first_dense, moe_freq, router_groups,
      router_group_topk, moe_latent;
  std::optional<double> capacity_factor;
  std::optional<bool> expert_bias, glu_clamp;
  std::optional<bool> moe_apply_probs_on_input;
  // Hybrid Mamba models (workloads::ModelSpec::hybrid_pattern); checked in hybrid_checks.cpp.
  std::optional<std::string> hybrid_pattern;
  std::optional<int> mamba_heads, mamba_head_dim, mamba_expand, mamba_groups, mamba_state, mamba_conv, mamba_chunk;
  // Multi-head latent attention and sliding-window attention (workloads/model/attention_variants.h).
  std::optional<int> q_lora_rank, kv_lora_rank, qk_nope, qk_rope, v_head_dim, sliding_window, full_every;
  std::optional<bool> attention_sinks, yarn_rope;
  std::optional<workloads::AttentionKernel> attention_kernel;  // which fused kernel (checked against the GPU in cross_checks.cpp)
  std::optional<bool> eager_squared_relu;  // the MLP activation as eager torch ops (model/eager_squared_relu.h)
  std::optional<bool> eager_layer_ops;     // a plain PyTorch Llama block in eager mode (model/eager_layer_ops.h)
  std::optional<int> mtp_layers;  // multi-token prediction modules (workloads/model/mtp.h)
  std::optional<double> packed_sample_len;  // packed sequences (ModelSpec::packed_sample_len)
};

// preset = "..." and hf_config = "..." (not both).
ModelBase read_model_base(LoadContext& ctx, Section& s) {
  ModelBase base;
  ScenarioSpec& spec = ctx.spec();
  if (auto id = s.string("preset", "gpt3-175b")) {
    if (const ModelSpec* preset = workloads::find_model_preset(*id)) {
      base.spec = *preset;
      spec.model_preset = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& p : workloads::all_model_presets()) ids.push_back(p.id);
      std::string message = "unknown model preset " + quote_str(*id);
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      ctx.error_at_key("model.preset", std::move(message), "valid model presets: " + join(ids, ", "));
    }
  }
  if (auto path = s.string("hf_config", "config.json")) {
    spec.hf_config = resolve_relative(spec.file, *path);
    if (s.has("preset")) {
      ctx.error_at_key("model.hf_config", "[model] takes a preset or an hf_config, not both",
                       "remove preset, or remove hf_config");
    } else {
      try {
        base.spec = workloads::load_hf_config(spec.hf_config);
        base.imported = true;
      } catch (const workloads::HfConfigError& e) {
        ctx.error_at_key("model.hf_config", "cannot import hf_config: " + std::string(e.what()),
                         "the path is relative to the scenario file; dense Llama/Mistral/Qwen2, GPT-2 and GPT-NeoX configs and "
                         "mixture-of-experts Mixtral, Qwen-MoE and DeepSeek-V3 configs are understood");
      }
    }
  }
  return base;
}

ModelFields read_model_fields(Section& s) {
  ModelFields f;
  f.layers = s.integer("layers", 1, 100000, "96");
  f.hidden = s.integer("hidden", 1, 1 << 24, "12288");
  f.heads = s.integer("heads", 1, 1 << 16, "96");
  f.kv_heads = s.integer("kv_heads", 1, 1 << 16, "8");
  f.head_dim = s.integer("head_dim", 1, 1 << 16, "128");
  f.mlp = s.choice("mlp", workloads::kMlpKindNames);
  f.ffn = s.integer("ffn_hidden", 1, 1 << 26, "49152");
  f.seq_len = s.integer("seq_len", 1, 1 << 24, "2048");
  f.vocab = s.integer("vocab", 1, 1 << 24, "51200");
  f.norm = s.choice("norm", workloads::kNormKindNames);
  f.tied = s.boolean("tied_embeddings");
  f.flash = s.boolean("flash_attention");
  f.dropout = s.boolean("dropout");
  f.experts = s.integer("experts", 0, 1 << 20, "8");
  f.experts_per_token = s.integer("experts_per_token", 1, 1 << 20, "2");
  f.moe_ffn = s.integer("moe_ffn_hidden", 1, 1 << 26, "14336");
  f.shared_experts = s.integer("shared_experts", 0, 1 << 10, "1");
  f.first_dense = s.integer("first_dense_layers", 0, 100000, "3");
  f.moe_freq = s.integer("moe_layer_freq", 1, 100000, "1");
  f.capacity_factor = s.number("capacity_factor", 0.0, false, "1.25");
  f.expert_bias = s.boolean("expert_bias");
  f.moe_apply_probs_on_input = s.boolean("moe_apply_probs_on_input");
  f.glu_clamp = s.boolean("glu_clamp");
  f.router_groups = s.integer("router_groups", 1, 1 << 20, "8");
  f.router_group_topk = s.integer("router_group_topk", 1, 1 << 20, "4");
  f.moe_latent = s.integer("moe_latent_size", 0, 1 << 20, "1024");
  f.hybrid_pattern = s.string("hybrid_pattern", "M-M-M*-M-");
  f.mamba_heads = s.integer("mamba_heads", 1, 1 << 20, "128");
  f.mamba_head_dim = s.integer("mamba_head_dim", 1, 1 << 16, "64");
  f.mamba_expand = s.integer("mamba_expand", 1, 64, "2");
  f.mamba_groups = s.integer("mamba_groups", 1, 1 << 16, "8");
  f.mamba_state = s.integer("mamba_state", 1, 1 << 16, "128");
  f.mamba_conv = s.integer("mamba_conv", 1, 64, "4");
  f.mamba_chunk = s.integer("mamba_chunk", 1, 1 << 16, "128");
  f.q_lora_rank = s.integer("q_lora_rank", 0, 1 << 20, "1536");
  f.kv_lora_rank = s.integer("kv_lora_rank", 0, 1 << 20, "512");
  f.qk_nope = s.integer("qk_nope_head_dim", 1, 1 << 16, "128");
  f.qk_rope = s.integer("qk_rope_head_dim", 0, 1 << 16, "64");
  f.v_head_dim = s.integer("v_head_dim", 1, 1 << 16, "128");
  f.sliding_window = s.integer("sliding_window", 0, 1 << 24, "128");
  f.full_every = s.integer("full_attention_every", 0, 100000, "2");
  f.attention_sinks = s.boolean("attention_sinks");
  f.yarn_rope = s.boolean("yarn_rope");
  f.attention_kernel = s.choice("attention_kernel", workloads::kAttentionKernelNames);
  f.eager_squared_relu = s.boolean("eager_squared_relu");
  f.eager_layer_ops = s.boolean("eager_layer_ops");
  f.mtp_layers = s.integer("mtp_layers", 0, 16, "1");
  f.packed_sample_len = s.number("packed_sample_len", 0.0, false, "205.7");
  return f;
}

// The attention-variant fields over the base (a preset or import may already set them).
void apply_attention_fields(const ModelFields& f, ModelSpec& m) {
  if (f.q_lora_rank) m.q_lora_rank = *f.q_lora_rank;
  if (f.kv_lora_rank) m.kv_lora_rank = *f.kv_lora_rank;
  if (f.qk_nope) m.qk_nope_head_dim = *f.qk_nope;
  if (f.qk_rope) m.qk_rope_head_dim = *f.qk_rope;
  if (f.v_head_dim) m.v_head_dim = *f.v_head_dim;
  if (f.sliding_window) m.sliding_window = *f.sliding_window;
  if (f.full_every) m.full_attention_every = *f.full_every;
  if (f.attention_sinks) m.attention_sinks = *f.attention_sinks;
  if (f.yarn_rope) m.yarn_rope = *f.yarn_rope;
  if (f.attention_kernel) m.attention_kernel = *f.attention_kernel;
  if (f.eager_squared_relu) m.eager_squared_relu = *f.eager_squared_relu;
  if (f.eager_layer_ops) m.eager_layer_ops = *f.eager_layer_ops;
  if (f.mtp_layers) m.mtp_layers = *f.mtp_layers;
  if (f.packed_sample_len) m.packed_sample_len = *f.packed_sample_len;
}

// MLA needs its head sizes; its other keys mean nothing without kv_lora_rank.
void check_attention_fields(LoadContext& ctx, const ModelSpec& m) {
  const bool mla_key = m.q_lora_rank > 0 || m.qk_nope_head_dim > 0 || m.v_head_dim > 0;
  if (!m.is_mla() && mla_key)
    ctx.error_at_key(m.q_lora_rank > 0 ? "model.q_lora_rank" : m.qk_nope_head_dim > 0 ? "model.qk_nope_head_dim" : "model.v_head_dim",
                     "multi-head latent attention settings without kv_lora_rank",
                     "MLA (DeepSeek-V2/V3) needs kv_lora_rank > 0, e.g. kv_lora_rank = 512; remove the MLA keys for standard attention");
  if (m.is_mla() && (m.qk_nope_head_dim <= 0 || m.v_head_dim <= 0))
    ctx.error_at_key("model.kv_lora_rank", "multi-head latent attention without its head sizes",
                     "give qk_nope_head_dim, qk_rope_head_dim and v_head_dim (DeepSeek-V3: 128, 64, 128)");
  // A hybrid MoE model's MTP module is an attention and an MoE block (Nemotron 3 Super:
  // Megatron-Bridge Nemotron3SuperProvider mtp_hybrid_override_pattern "*E"; Megatron-LM
  // tests/functional_tests/test_cases/nemotron/nemotron3_super_release_gb200: pattern ".../*E/*E"),
  // costed as the decoder's attention + MoE layer (model/mtp.h); a dense hybrid's is not known.
  if (m.mtp_layers > 0 && m.is_hybrid() && !m.is_moe())
    ctx.error_at_key("model.mtp_layers", "multi-token prediction on a hybrid Mamba model without experts is not modelled",
                     "remove mtp_layers (a hybrid MoE model's module is an attention and an MoE block, \"*E\"; a dense hybrid's is not known)");
  if (m.eager_squared_relu && m.mlp != MlpKind::Gelu)
    ctx.error_at_key("model.eager_squared_relu", "eager squared ReLU on a gated MLP",
                     "squared ReLU is the activation of a two-matrix MLP: set mlp = \"gelu\" (the two-matrix kind), or remove eager_squared_relu");
  if (m.eager_layer_ops && (m.is_moe() || m.is_hybrid() || m.is_mla()))
    ctx.error_at_key("model.eager_layer_ops", "eager layer ops are modelled for a dense transformer layer only",
                     "eager_layer_ops is a plain PyTorch Llama block (torchtitan's, Hugging Face's); remove it for mixture-of-experts, "
                     "Mamba or MLA layers");
  if (m.sliding_window <= 0 && m.full_attention_every > 0)
    ctx.error_at_key("model.full_attention_every", "full_attention_every without a sliding window",
                     "give sliding_window (tokens, e.g. 128), or remove full_attention_every");
  if (m.packed_sample_len > m.seq_len)
    ctx.error_at_key("model.packed_sample_len", "packed_sample_len exceeds seq_len",
                     "a pack's samples are at most seq_len tokens long: give a value up to seq_len, or 0 for unpacked sequences");
  if (m.packed_sample_len > 0 && !m.flash_attention)
    ctx.error_at_key("model.packed_sample_len", "packed sequences without a fused attention kernel",
                     "packed samples attend through the fused kernel's cu_seqlens (THD layout): set flash_attention = true, or remove packed_sample_len");
}

// The mixture-of-experts fields over the base; an expert's width defaults to ffn_hidden (Mixtral:
// intermediate_size is the expert's) and top-k to 2 (Mixtral, GShard). The loader checks them
// against each other and the layout in moe_checks.cpp.
void apply_moe_fields(const ModelFields& f, ModelSpec& m) {
  if (f.experts) m.experts = *f.experts;
  if (f.experts_per_token) m.experts_per_token = *f.experts_per_token;
  if (f.moe_ffn) m.moe_ffn_hidden = *f.moe_ffn;
  if (f.shared_experts) m.shared_experts = *f.shared_experts;
  if (f.first_dense) m.first_dense_layers = *f.first_dense;
  if (f.moe_freq) m.moe_layer_freq = *f.moe_freq;
  if (f.capacity_factor) m.capacity_factor = *f.capacity_factor;
  if (f.expert_bias) m.expert_bias = *f.expert_bias;
  if (f.moe_apply_probs_on_input) m.moe_apply_probs_on_input = *f.moe_apply_probs_on_input;
  if (f.glu_clamp) m.glu_clamp = *f.glu_clamp;
  if (f.router_groups) m.router_groups = *f.router_groups;
  if (f.router_group_topk) m.router_group_topk = *f.router_group_topk;
  if (f.moe_latent) m.moe_latent_size = *f.moe_latent;
  if (!m.is_moe()) return;
  if (m.experts_per_token == 0) m.experts_per_token = std::min(2, m.experts);
  if (m.moe_ffn_hidden == 0) m.moe_ffn_hidden = f.ffn ? *f.ffn : m.ffn_hidden;
}

// The hybrid fields over the base. The pattern sets the layer count; without mamba_heads the
// heads follow from d_inner = mamba_expand x hidden (Megatron's default expand 2) over the head
// width.
void apply_hybrid_fields(const ModelFields& f, ModelSpec& m) {
  if (f.hybrid_pattern) {
    m.hybrid_pattern = *f.hybrid_pattern;
    if (!f.layers && !m.hybrid_pattern.empty()) m.layers = static_cast<int>(m.hybrid_pattern.size());
  }
  if (f.mamba_head_dim) m.mamba_head_dim = *f.mamba_head_dim;
  if (f.mamba_groups) m.mamba_groups = *f.mamba_groups;
  if (f.mamba_state) m.mamba_state = *f.mamba_state;
  if (f.mamba_conv) m.mamba_conv = *f.mamba_conv;
  if (f.mamba_chunk) m.mamba_chunk = *f.mamba_chunk;
  if (f.mamba_heads) m.mamba_heads = *f.mamba_heads;
  else if (m.is_hybrid() && (f.mamba_expand || m.mamba_heads == 0) && m.mamba_head_dim > 0)
    m.mamba_heads = f.mamba_expand.value_or(2) * m.hidden / m.mamba_head_dim;
}

// The fields over the base; without a base, kv_heads and ffn_hidden default from the shape.
void apply_model_fields(const ModelFields& f, bool have_base, ModelSpec& m) {
  if (f.layers) m.layers = *f.layers;
  if (f.hidden) m.hidden = *f.hidden;
  if (f.heads) m.heads = *f.heads;
  if (f.mlp) m.mlp = *f.mlp;
  if (f.norm) m.norm = *f.norm;
  if (f.seq_len) m.seq_len = *f.seq_len;
  if (f.vocab) m.vocab = *f.vocab;
  if (f.tied) m.tied_embeddings = *f.tied;
  if (f.flash) m.flash_attention = *f.flash;
  if (f.dropout) m.dropout = *f.dropout;
  if (f.kv_heads) m.kv_heads = *f.kv_heads;
  else if (!have_base) m.kv_heads = m.heads;
  if (f.head_dim) m.attention_head_dim = *f.head_dim;
  if (f.ffn) {
    m.ffn_hidden = *f.ffn;
  } else if (!have_base) {
    m.ffn_hidden = m.mlp == MlpKind::SwiGlu ? (8 * m.hidden / 3 + 255) / 256 * 256 : 4 * m.hidden;
  }
  apply_moe_fields(f, m);
  apply_hybrid_fields(f, m);
  apply_attention_fields(f, m);
}

// The base's id when nothing changed it; "<import> (modified)" for a changed import; else "custom".
std::string model_id(const ModelSpec& m, const ModelBase& base) {
  if (!base.spec) return "custom";
  const ModelSpec& b = *base.spec;
  const bool same = m.layers == b.layers && m.hidden == b.hidden && m.heads == b.heads && m.kv_heads == b.kv_heads &&
                    m.attention_head_dim == b.attention_head_dim &&
                    m.ffn_hidden == b.ffn_hidden && m.seq_len == b.seq_len && m.vocab == b.vocab && m.mlp == b.mlp &&
                    m.norm == b.norm && m.tied_embeddings == b.tied_embeddings &&
                    m.flash_attention == b.flash_attention && m.trains_with_dropout() == b.trains_with_dropout() &&
                    m.experts == b.experts && m.experts_per_token == b.experts_per_token &&
                    m.moe_ffn_hidden == b.moe_ffn_hidden && m.shared_experts == b.shared_experts &&
                    m.first_dense_layers == b.first_dense_layers && m.moe_layer_freq == b.moe_layer_freq &&
                    m.capacity_factor == b.capacity_factor && m.expert_bias == b.expert_bias && m.glu_clamp == b.glu_clamp &&
                    m.moe_apply_probs_on_input == b.moe_apply_probs_on_input &&
                    m.router_groups == b.router_groups && m.router_group_topk == b.router_group_topk &&
                    m.moe_latent_size == b.moe_latent_size && m.hybrid_pattern == b.hybrid_pattern &&
                    m.mamba_heads == b.mamba_heads && m.mamba_head_dim == b.mamba_head_dim &&
                    m.mamba_groups == b.mamba_groups && m.mamba_state == b.mamba_state &&
                    m.mamba_conv == b.mamba_conv && m.mamba_chunk == b.mamba_chunk &&
                    m.q_lora_rank == b.q_lora_rank &&
                    m.kv_lora_rank == b.kv_lora_rank && m.qk_nope_head_dim == b.qk_nope_head_dim &&
                    m.qk_rope_head_dim == b.qk_rope_head_dim && m.v_head_dim == b.v_head_dim &&
                    m.sliding_window == b.sliding_window && m.full_attention_every == b.full_attention_every &&
                    m.attention_sinks == b.attention_sinks && m.yarn_rope == b.yarn_rope && m.attention_kernel == b.attention_kernel &&
                    m.eager_squared_relu == b.eager_squared_relu && m.eager_layer_ops == b.eager_layer_ops && m.mtp_layers == b.mtp_layers &&
                    m.packed_sample_len == b.packed_sample_len;
  return same ? b.id : base.imported ? b.id + " (modified)" : "custom";
}

}  // namespace

bool Loader::read_model(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "model", kModelKeys);
  const ModelBase base = read_model_base(*this, s);
  const ModelFields fields = read_model_fields(s);
  s.finish();
  if (error_count() != before) return false;

  if (!base.spec) {
    for (std::string_view k : {"layers", "hidden", "heads"}) {
      if (!s.has(k) && !(k == "layers" && s.has("hybrid_pattern")))  // a hybrid's pattern gives its layers
        error(origin_of("model", t->source()), "missing '" + std::string(k) + "' in [model]",
              "give layers, hidden and heads, or start from a preset, e.g. preset = \"gpt3-175b\", or an hf_config");
    }
    if (error_count() != before) return false;
  }
  ModelSpec m = base.spec ? *base.spec : ModelSpec{};
  apply_model_fields(fields, base.spec.has_value(), m);
  m.id = model_id(m, base);
  check_attention_fields(*this, m);
  if (error_count() != before) return false;
  spec_.model = m;
  return true;
}

}  // namespace clustersim::scenarios
