#include "workloads/model/hf_config.h"
#include "workloads/model/input_file.h"

#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

namespace clustersim::workloads {
namespace {

using nlohmann::json;

enum class Family { Llama, Gpt2, GptNeoX, NemotronH };

class Reader {
 public:
  Reader(const json& j, std::string origin) : j_(j), origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw HfConfigError(origin_ + ": field '" + field + "': " + what);
  }

  bool has(const char* field) const { return j_.contains(field) && !j_.at(field).is_null(); }

  int positive_int(const char* field) const {
    if (!j_.contains(field)) fail(field, "missing; expected a positive integer");
    return checked_int(field);
  }

  std::optional<int> optional_positive_int(const char* field) const {
    if (!has(field)) return std::nullopt;
    return checked_int(field);
  }

  bool optional_bool(const char* field, bool fallback) const {
    if (!has(field)) return fallback;
    const json& v = j_.at(field);
    if (!v.is_boolean()) fail(field, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }

  // A positive number, or none where the field is absent or null.
  std::optional<double> optional_positive_number(const char* field) const {
    if (!has(field)) return std::nullopt;
    const json& v = j_.at(field);
    if (!v.is_number() || !(v.get<double>() > 0)) fail(field, "expected a positive number, got " + v.dump());
    return v.get<double>();
  }

  std::string optional_string(const char* field) const {
    if (!has(field)) return {};
    const json& v = j_.at(field);
    if (!v.is_string()) fail(field, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }

  const json& json_object() const { return j_; }

 private:
  int checked_int(const char* field) const {
    const json& v = j_.at(field);
    if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 1'000'000'000) {
      fail(field, "expected a positive integer, got " + v.dump());
    }
    return static_cast<int>(v.get<long long>());
  }

  const json& j_;
  std::string origin_;
};

Family detect_family(const Reader& r) {
  const std::string type = r.optional_string("model_type");
  if (type == "gpt2") return Family::Gpt2;
  if (type == "gpt_neox") return Family::GptNeoX;
  if (type == "nemotron_h") return Family::NemotronH;
  if (!type.empty()) return Family::Llama;  // llama, mistral, qwen2, ... share the field names
  if (r.has("n_embd")) return Family::Gpt2;
  if (r.has("rotary_pct") || r.has("use_parallel_residual")) return Family::GptNeoX;
  return Family::Llama;
}

bool is_gated_activation(const std::string& act) {
  return act == "silu" || act == "swish" || act == "swiglu";
}

// Where a family's config.json keeps each dimension and what it leaves implicit. A null
// kv_heads field means multi-head attention (kv_heads = heads); a null ffn default means the
// field is required, else its absence means 4 x hidden.
struct FamilyFields {
  const char* hidden;
  const char* layers;
  const char* heads;
  const char* kv_heads;
  const char* ffn;
  bool ffn_required;
  const char* seq_len;
  bool tied_by_default;
  MlpKind mlp;
  NormKind norm;
  PositionKind positions;
};

// Llama, Mistral, Qwen2, ...: GQA, SwiGLU, RMSNorm, rotary, untied.
constexpr FamilyFields kLlamaFields{"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                    "intermediate_size", true, "max_position_embeddings", false,
                                    MlpKind::SwiGlu, NormKind::RmsNorm, PositionKind::Rotary};
// GPT-2: GELU, LayerNorm, learned positions, tied.
constexpr FamilyFields kGpt2Fields{"n_embd", "n_layer", "n_head", nullptr, "n_inner", false, "n_positions", true,
                                   MlpKind::Gelu, NormKind::LayerNorm, PositionKind::Learned};
// GPT-NeoX (Pythia): GELU, LayerNorm, rotary, untied.
constexpr FamilyFields kNeoxFields{"hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
                                   "intermediate_size", false, "max_position_embeddings", false,
                                   MlpKind::Gelu, NormKind::LayerNorm, PositionKind::Rotary};

// Reads the dimensions in a fixed order, so the first bad field is the one reported.
ModelSpec read_family(const Reader& r, const FamilyFields& f) {
  ModelSpec m;
  m.hidden = r.positive_int(f.hidden);
  m.layers = r.positive_int(f.layers);
  m.heads = r.positive_int(f.heads);
  m.kv_heads = f.kv_heads != nullptr ? r.optional_positive_int(f.kv_heads).value_or(m.heads) : m.heads;
  // Qwen3, Gemma and Mistral configs state head_dim; kept only where it differs from hidden / heads.
  if (const int head_dim = r.optional_positive_int("head_dim").value_or(0); head_dim > 0 && head_dim * m.heads != m.hidden)
    m.attention_head_dim = head_dim;
  m.ffn_hidden = f.ffn_required ? r.positive_int(f.ffn) : r.optional_positive_int(f.ffn).value_or(4 * m.hidden);
  m.vocab = r.positive_int("vocab_size");
  m.seq_len = r.positive_int(f.seq_len);
  m.tied_embeddings = r.optional_bool("tie_word_embeddings", f.tied_by_default);
  m.mlp = f.mlp;
  m.norm = f.norm;
  m.positions = f.positions;
  return m;
}

ModelSpec read_llama(const Reader& r) {
  ModelSpec m = read_family(r, kLlamaFields);
  const std::string act = r.optional_string("hidden_act");
  if (!act.empty() && !is_gated_activation(act)) {
    r.fail("hidden_act", "expected \"silu\" (SwiGLU MLP) for a Llama-family model, got \"" + act + "\"");
  }
  return m;
}

// NemotronH (transformers' NemotronHConfig; nvidia/Nemotron-H-*-Base-8K): Llama-style attention
// fields, a squared-ReLU MLP (mlp_hidden_act "relu2": two matrices, the "gelu" kind's shapes), no
// position embedding, and the hybrid layer pattern with the Mamba-2 mixer's fields
// (workloads::ModelSpec::hybrid_pattern).
constexpr FamilyFields kNemotronHFields{"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                       "intermediate_size", true, "max_position_embeddings", false,
                                       MlpKind::Gelu, NormKind::RmsNorm, PositionKind::None};

ModelSpec read_nemotron_h(const Reader& r) {
  ModelSpec m = read_family(r, kNemotronHFields);
  const std::string act = r.optional_string("mlp_hidden_act");
  if (!act.empty() && act != "relu2") r.fail("mlp_hidden_act", "expected \"relu2\" (squared ReLU), got \"" + act + "\"");
  m.hybrid_pattern = r.optional_string("hybrid_override_pattern");
  if (m.hybrid_pattern.empty()) r.fail("hybrid_override_pattern", "expected the layer pattern, e.g. \"M-M-M*-\"");
  // 'E' (MoE) layers need the expert fields (Nemotron 3: n_routed_experts; check_hybrid_experts).
  if (m.hybrid_pattern.find_first_not_of("M*-E") != std::string::npos)
    r.fail("hybrid_override_pattern", "expected only 'M' (Mamba-2), '*' (attention), '-' (MLP) and 'E' (MoE) layers");
  if (static_cast<int>(m.hybrid_pattern.size()) != m.layers)
    r.fail("hybrid_override_pattern", "expected one character per layer (" + std::to_string(m.layers) + ")");
  m.mamba_heads = r.positive_int("mamba_num_heads");
  m.mamba_head_dim = r.positive_int("mamba_head_dim");
  m.mamba_state = r.positive_int("ssm_state_size");
  m.mamba_groups = r.positive_int("n_groups");
  m.mamba_conv = r.optional_positive_int("conv_kernel").value_or(4);
  m.mamba_chunk = r.optional_positive_int("chunk_size").value_or(128);
  m.dropout = false;
  return m;
}

void check_shape(const Reader& r, const ModelSpec& m, Family f) {
  const char* heads_field = f == Family::Gpt2 ? "n_head" : "num_attention_heads";
  if (m.hidden % m.heads != 0) {
    r.fail(heads_field, "expected a divisor of the hidden size " + std::to_string(m.hidden) +
                            ", got " + std::to_string(m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    r.fail("num_key_value_heads", "expected a divisor of num_attention_heads " +
                                      std::to_string(m.heads) + ", got " + std::to_string(m.kv_heads));
  }
}

// Mixture-of-experts fields, by family. Mixtral: num_local_experts, num_experts_per_tok, and the
// expert's width is intermediate_size. Qwen2-MoE / Qwen3-MoE: num_experts, num_experts_per_tok,
// moe_intermediate_size, shared_expert_intermediate_size (a multiple of the expert width),
// decoder_sparse_step (layer i is MoE when (i + 1) % step == 0). DeepSeek-V2/V3: n_routed_experts,
// num_experts_per_tok, moe_intermediate_size, n_shared_experts, first_k_dense_replace,
// moe_layer_freq; intermediate_size is the dense layers' MLP.
constexpr const char* kExpertCountFields[] = {"num_local_experts", "num_experts", "n_routed_experts"};
// Top-k: num_experts_per_tok in Mixtral, Qwen-MoE and DeepSeek; experts_per_token in GPT-OSS.
constexpr const char* kTopKFields[] = {"num_experts_per_tok", "experts_per_token"};
// Keys that only change how tokens are routed or how the router is trained, not what runs or is
// stored (score function, aux-loss weights, logging): accepted, ignored; n_group / topk_group
// (group-limited routing) are read into ModelSpec::router_groups below.
// num_nextn_predict_layers (DeepSeek-V3's multi-token-prediction modules) is listed here so the
// expert check accepts it, and read into ModelSpec::mtp_layers by read_mtp (model/mtp.h).
constexpr const char* kRoutingOnlyFields[] = {
    "num_experts_per_tok", "experts_per_token", "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob",
    "n_group", "topk_group", "routed_scaling_factor", "scoring_func", "topk_method", "aux_loss_alpha", "seq_aux",
    "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step", "n_shared_experts",
    "first_k_dense_replace", "moe_layer_freq", "num_local_experts", "num_experts", "n_routed_experts", "ep_size",
    "mlp_only_layers", "num_nextn_predict_layers", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "moe_shared_expert_intermediate_size", "moe_latent_size",
    "moe_shared_expert_overlap"};

bool known_moe_field(const std::string& key) {
  for (const char* k : kRoutingOnlyFields) {
    if (key == k) return true;
  }
  return false;
}

// A key that names experts or routing which clustersim does not read: never a silent dense model.
void reject_unknown_moe_fields(const Reader& r) {
  std::string unknown;
  for (const auto& item : r.json_object().items()) {
    const std::string& key = item.key();
    const bool moe_like = key.find("expert") != std::string::npos || key.find("moe") != std::string::npos ||
                          key.find("router") != std::string::npos || key.find("topk") != std::string::npos ||
                          key.find("sparse") != std::string::npos;
    if (moe_like && !known_moe_field(key)) unknown += (unknown.empty() ? "" : ", ") + key;
  }
  if (!unknown.empty())
    r.fail(unknown, "mixture-of-experts settings clustersim does not model; it reads Mixtral (num_local_experts), "
                    "Qwen-MoE (num_experts, moe_intermediate_size) and DeepSeek-V3 (n_routed_experts) configs");
}

void read_experts(const Reader& r, ModelSpec& m) {
  reject_unknown_moe_fields(r);
  const char* count_field = nullptr;
  for (const char* f : kExpertCountFields) {
    if (r.has(f)) count_field = f;
  }
  if (count_field == nullptr) {
    for (const char* f : kTopKFields)
      if (r.has(f)) r.fail(f, "an expert setting without an expert count; expected num_local_experts, num_experts or n_routed_experts");
    if (r.has("moe_intermediate_size"))
      r.fail("moe_intermediate_size",
             "an expert setting without an expert count; expected num_local_experts, num_experts or n_routed_experts");
    return;
  }
  m.experts = r.positive_int(count_field);
  const char* top_k_field = r.has("experts_per_token") ? "experts_per_token" : "num_experts_per_tok";
  m.experts_per_token = r.positive_int(top_k_field);
  if (m.experts_per_token > m.experts) r.fail(top_k_field, "expected at most " + std::to_string(m.experts));
  m.moe_ffn_hidden = r.optional_positive_int("moe_intermediate_size").value_or(m.ffn_hidden);
  if (r.has("mlp_only_layers") && !r.json_object().at("mlp_only_layers").empty())
    r.fail("mlp_only_layers", "dense layers at arbitrary positions are not modelled; expected an empty list");
  if (auto shared = r.optional_positive_int("shared_expert_intermediate_size")) {
    if (*shared % m.moe_ffn_hidden != 0)
      r.fail("shared_expert_intermediate_size", "expected a multiple of moe_intermediate_size " + std::to_string(m.moe_ffn_hidden));
    m.shared_experts = *shared / m.moe_ffn_hidden;
  }
  // Nemotron 3 (model_type nemotron_h; Megatron-Bridge nemotron_h_bridge.py maps it to
  // moe_shared_expert_intermediate_size): the shared expert's width, a multiple of the expert's.
  if (auto shared = r.optional_positive_int("moe_shared_expert_intermediate_size")) {
    if (*shared % m.moe_ffn_hidden != 0)
      r.fail("moe_shared_expert_intermediate_size", "expected a multiple of moe_intermediate_size " + std::to_string(m.moe_ffn_hidden));
    m.shared_experts = *shared / m.moe_ffn_hidden;
  }
  // LatentMoE (Nemotron 3 Super: 1024; null or absent: none), as nemotron_h_bridge.py reads it.
  if (auto latent = r.optional_positive_int("moe_latent_size")) {
    if (*latent >= m.hidden)
      r.fail("moe_latent_size", "expected a latent narrower than hidden_size " + std::to_string(m.hidden));
    m.moe_latent_size = *latent;
  }
  if (auto shared = r.optional_positive_int("n_shared_experts")) m.shared_experts = *shared;
  if (auto step = r.optional_positive_int("decoder_sparse_step")) {
    m.first_dense_layers = *step - 1;
    m.moe_layer_freq = *step;
  }
  if (r.has("first_k_dense_replace")) {
    const json& v = r.json_object().at("first_k_dense_replace");
    if (!v.is_number_integer() || v.get<long long>() < 0) r.fail("first_k_dense_replace", "expected an integer >= 0");
    m.first_dense_layers = static_cast<int>(v.get<long long>());
  }
  if (auto freq = r.optional_positive_int("moe_layer_freq")) m.moe_layer_freq = *freq;
  // Group-limited routing (DeepSeek-V3: n_group 8, topk_group 4; one group = no limit), as
  // Megatron-Bridge maps them (moe_router_num_groups / moe_router_group_topk).
  if (auto groups = r.optional_positive_int("n_group"); groups && *groups > 1) {
    m.router_groups = *groups;
    m.router_group_topk = r.optional_positive_int("topk_group").value_or(*groups);
  }
  if (m.first_dense_layers >= m.layers)
    r.fail("first_k_dense_replace", "expected fewer than num_hidden_layers = " + std::to_string(m.layers));
}

// Multi-token prediction (DeepseekV3 configs: num_nextn_predict_layers, 1 in DeepSeek-V3's).
void read_mtp(const Reader& r, ModelSpec& m) {
  if (!r.has("num_nextn_predict_layers")) return;
  const json& v = r.json_object().at("num_nextn_predict_layers");
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 16)
    r.fail("num_nextn_predict_layers", "expected an integer from 0 to 16");
  m.mtp_layers = static_cast<int>(v.get<long long>());
}

// Multi-head latent attention (DeepseekV3 configs: kv_lora_rank, q_lora_rank (null: no query
// compression), qk_nope_head_dim, qk_rope_head_dim, v_head_dim).
void read_mla(const Reader& r, ModelSpec& m) {
  if (!r.has("kv_lora_rank")) {
    for (const char* f : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (r.has(f)) r.fail(f, "a multi-head latent attention setting without kv_lora_rank");
    return;
  }
  m.kv_lora_rank = r.positive_int("kv_lora_rank");
  m.q_lora_rank = r.optional_positive_int("q_lora_rank").value_or(0);
  m.qk_nope_head_dim = r.positive_int("qk_nope_head_dim");
  m.qk_rope_head_dim = r.positive_int("qk_rope_head_dim");
  m.v_head_dim = r.positive_int("v_head_dim");
}

// The period of a layer_types list whose every period is sliding layers then one full layer
// (GPT-OSS: sliding, full: 2); 0 when every layer slides, -1 when no such period fits.
int full_attention_period(const json& types) {
  const auto sliding = [&](std::size_t i) { return types.at(i).get<std::string>() == "sliding_attention"; };
  const std::size_t n = types.size();
  for (std::size_t period = 1; period <= n; ++period) {
    bool fits = true;
    for (std::size_t i = 0; i < n && fits; ++i) fits = sliding(i) == ((i + 1) % period != 0);
    if (fits) return static_cast<int>(period);
  }
  bool all_sliding = true;
  for (std::size_t i = 0; i < n; ++i) all_sliding = all_sliding && sliding(i);
  return all_sliding ? 0 : -1;
}

// Sliding-window attention: sliding_window with layer_types (GPT-OSS, Gemma), or on every layer
// (Mistral 7B v0.1); Qwen2's use_sliding_window = false leaves it off. GPT-OSS's learned
// attention sinks come with its model type (no config key names them).
void read_sliding_window(const Reader& r, ModelSpec& m) {
  m.attention_sinks = r.optional_string("model_type") == "gpt_oss";
  m.expert_bias = m.attention_sinks;  // GPT-OSS's experts carry biases (mlp1_bias, mlp2_bias)
  m.yarn_rope = m.attention_sinks;    // and its rope_scaling is yarn
  // GPT-OSS's swiglu_limit is Megatron-Core's activation_func_clamp_value, clamped eagerly around
  // the quick-GeGLU kernel (glu_clamp.h); other models' SwiGLU fusion takes no clamp.
  m.glu_clamp = m.attention_sinks && r.optional_positive_number("swiglu_limit").has_value();
  if (!r.has("sliding_window") || !r.optional_bool("use_sliding_window", true)) return;
  const int window = r.positive_int("sliding_window");
  if (!r.has("layer_types")) {
    m.sliding_window = window;
    return;
  }
  const json& types = r.json_object().at("layer_types");
  bool valid = types.is_array() && static_cast<int>(types.size()) == m.layers;
  for (std::size_t i = 0; valid && i < types.size(); ++i)
    valid = types.at(i).is_string() &&
            (types.at(i).get<std::string>() == "sliding_attention" || types.at(i).get<std::string>() == "full_attention");
  if (!valid)
    r.fail("layer_types", "expected num_hidden_layers entries, each \"sliding_attention\" or \"full_attention\"");
  const int period = full_attention_period(types);
  if (period < 0)
    r.fail("layer_types", "a pattern clustersim does not model; it models periods of sliding layers ending in one full layer");
  if (period == 1) return;  // every layer attends the whole sequence
  m.sliding_window = window;
  m.full_attention_every = period;
}

void read_attention_variant(const Reader& r, ModelSpec& m) {
  read_mla(r, m);
  read_mtp(r, m);
  read_sliding_window(r, m);
}

}  // namespace

ModelSpec parse_hf_config(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond double (out_of_range 406)
    throw HfConfigError(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw HfConfigError(origin + ": expected a JSON object at the top level");
  const Reader r(j, origin);
  const Family family = detect_family(r);
  ModelSpec m = family == Family::Gpt2        ? read_family(r, kGpt2Fields)
                : family == Family::GptNeoX   ? read_family(r, kNeoxFields)
                : family == Family::NemotronH ? read_nemotron_h(r)
                                              : read_llama(r);
  check_shape(r, m, family);
  read_experts(r, m);
  if (m.is_hybrid() && !m.is_moe() && m.hybrid_pattern.find('E') != std::string::npos)
    r.fail("hybrid_override_pattern", "MoE layers ('E') without an expert count; expected n_routed_experts");
  read_attention_variant(r, m);
  m.id = "hf:" + origin;
  return m;
}

ModelSpec load_hf_config(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_input_file(path, why);
  if (!text) throw HfConfigError(path + ": cannot read the Hugging Face config file: " + why);
  return parse_hf_config(*text, path);
}

}  // namespace clustersim::workloads
