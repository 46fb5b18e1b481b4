#include "workloads/model/hf_config.h"

#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

namespace clustersim::workloads {
namespace {

using nlohmann::json;

enum class Family { Llama, Gpt2, GptNeoX };

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

  std::string optional_string(const char* field) const {
    if (!has(field)) return {};
    const json& v = j_.at(field);
    if (!v.is_string()) fail(field, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }

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
  if (!type.empty()) return Family::Llama;  // llama, mistral, qwen2, ... share the field names
  if (r.has("n_embd")) return Family::Gpt2;
  if (r.has("rotary_pct") || r.has("use_parallel_residual")) return Family::GptNeoX;
  return Family::Llama;
}

bool is_gated_activation(const std::string& act) {
  return act == "silu" || act == "swish" || act == "swiglu";
}

ModelSpec read_llama(const Reader& r) {
  ModelSpec m;
  m.hidden = r.positive_int("hidden_size");
  m.layers = r.positive_int("num_hidden_layers");
  m.heads = r.positive_int("num_attention_heads");
  m.kv_heads = r.optional_positive_int("num_key_value_heads").value_or(m.heads);
  m.ffn_hidden = r.positive_int("intermediate_size");
  m.vocab = r.positive_int("vocab_size");
  m.seq_len = r.positive_int("max_position_embeddings");
  m.tied_embeddings = r.optional_bool("tie_word_embeddings", false);
  const std::string act = r.optional_string("hidden_act");
  if (!act.empty() && !is_gated_activation(act)) {
    r.fail("hidden_act", "expected \"silu\" (SwiGLU MLP) for a Llama-family model, got \"" + act + "\"");
  }
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.positions = PositionKind::Rotary;
  return m;
}

ModelSpec read_gpt2(const Reader& r) {
  ModelSpec m;
  m.hidden = r.positive_int("n_embd");
  m.layers = r.positive_int("n_layer");
  m.heads = r.positive_int("n_head");
  m.kv_heads = m.heads;
  m.ffn_hidden = r.optional_positive_int("n_inner").value_or(4 * m.hidden);
  m.vocab = r.positive_int("vocab_size");
  m.seq_len = r.positive_int("n_positions");
  m.tied_embeddings = r.optional_bool("tie_word_embeddings", true);
  m.mlp = MlpKind::Gelu;
  m.norm = NormKind::LayerNorm;
  m.positions = PositionKind::Learned;
  return m;
}

ModelSpec read_neox(const Reader& r) {
  ModelSpec m;
  m.hidden = r.positive_int("hidden_size");
  m.layers = r.positive_int("num_hidden_layers");
  m.heads = r.positive_int("num_attention_heads");
  m.kv_heads = m.heads;
  m.ffn_hidden = r.optional_positive_int("intermediate_size").value_or(4 * m.hidden);
  m.vocab = r.positive_int("vocab_size");
  m.seq_len = r.positive_int("max_position_embeddings");
  m.tied_embeddings = r.optional_bool("tie_word_embeddings", false);
  m.mlp = MlpKind::Gelu;
  m.norm = NormKind::LayerNorm;
  m.positions = PositionKind::Rotary;
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

}  // namespace

ModelSpec parse_hf_config(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw HfConfigError(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw HfConfigError(origin + ": expected a JSON object at the top level");
  const Reader r(j, origin);
  const Family family = detect_family(r);
  ModelSpec m = family == Family::Gpt2      ? read_gpt2(r)
                : family == Family::GptNeoX ? read_neox(r)
                                            : read_llama(r);
  check_shape(r, m, family);
  m.id = "hf:" + origin;
  return m;
}

ModelSpec load_hf_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw HfConfigError(path + ": cannot open the Hugging Face config file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_hf_config(text.str(), path);
}

}  // namespace clustersim::workloads
