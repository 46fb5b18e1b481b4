#include <doctest/doctest.h>

#include <string>

#include "workloads/model/hf_config.h"

using namespace clustersim::workloads;

namespace {
std::string data(const char* name) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/" + name;
}

// Returns the message of the HfConfigError the load throws ("" when it does not throw).
std::string load_error(const char* name) {
  try {
    load_hf_config(data(name));
  } catch (const HfConfigError& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("workloads::load_hf_config: a Llama 2 config gives the llama2-7b shape and 6.74 B parameters") {
  const ModelSpec m = load_hf_config(data("llama2_7b_config.json"));
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 32);
  CHECK(m.ffn_hidden == 11008);
  CHECK(m.vocab == 32000);
  CHECK(m.seq_len == 4096);
  CHECK(m.mlp == MlpKind::SwiGlu);
  CHECK(m.norm == NormKind::RmsNorm);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.id.rfind("hf:", 0) == 0);
  // HF reports 6,738,415,616 parameters for Llama-2-7b-hf.
  CHECK(m.parameters() == doctest::Approx(6738415616.0).epsilon(1e-9));
}

TEST_CASE("workloads::load_hf_config: a Mistral config keeps its grouped-query KV heads") {
  const ModelSpec m = load_hf_config(data("mistral_7b_config.json"));
  CHECK(m.kv_heads == 8);
  CHECK(m.ffn_hidden == 14336);
  // Mistral-7B-v0.1: 7,241,732,096 parameters.
  CHECK(m.parameters() == doctest::Approx(7241732096.0).epsilon(1e-9));
}

TEST_CASE("workloads::load_hf_config: a GPT-2 config with n_inner null uses 4*n_embd and tied embeddings") {
  const ModelSpec m = load_hf_config(data("gpt2_config.json"));
  CHECK(m.hidden == 768);
  CHECK(m.layers == 12);
  CHECK(m.heads == 12);
  CHECK(m.ffn_hidden == 3072);
  CHECK(m.seq_len == 1024);
  CHECK(m.vocab == 50257);
  CHECK(m.tied_embeddings);
  CHECK(m.mlp == MlpKind::Gelu);
  // GPT-2 small: 124,439,808 parameters.
  CHECK(m.parameters() == doctest::Approx(124439808.0).epsilon(1e-9));
}

TEST_CASE("workloads::load_hf_config: a GPT-NeoX config is GELU and LayerNorm with rotary positions") {
  const ModelSpec m = load_hf_config(data("pythia_1b_config.json"));
  CHECK(m.hidden == 2048);
  CHECK(m.layers == 16);
  CHECK(m.heads == 8);
  CHECK(m.norm == NormKind::LayerNorm);
  CHECK(m.positions == PositionKind::Rotary);
  CHECK_FALSE(m.tied_embeddings);
  // Pythia-1b: 1,011,781,632 parameters.
  CHECK(m.parameters() == doctest::Approx(1011781632.0).epsilon(1e-9));
}

TEST_CASE("workloads::load_hf_config: a missing field names the file, the field and what was expected") {
  const std::string msg = load_error("missing_heads_config.json");
  CHECK(msg.find("missing_heads_config.json") != std::string::npos);
  CHECK(msg.find("'num_attention_heads'") != std::string::npos);
  CHECK(msg.find("expected a positive integer") != std::string::npos);
}

TEST_CASE("workloads::load_hf_config: a field of the wrong type says what it got") {
  const std::string msg = load_error("bad_layers_config.json");
  CHECK(msg.find("bad_layers_config.json") != std::string::npos);
  CHECK(msg.find("'num_hidden_layers'") != std::string::npos);
  CHECK(msg.find("\"thirty-two\"") != std::string::npos);
}

TEST_CASE("workloads::load_hf_config: unreadable or malformed files throw HfConfigError") {
  CHECK(load_error("no_such_config.json").find("cannot read the Hugging Face config file: No such file or directory") !=
        std::string::npos);
  CHECK(load_error("truncated_config.json").find("not valid JSON") != std::string::npos);
  CHECK_THROWS_AS(parse_hf_config("[1, 2]", "inline"), HfConfigError);
}

TEST_CASE("workloads::parse_hf_config: a number beyond double is an HfConfigError, not an uncaught exception") {
  // Found by fuzz/hf_config_fuzz: nlohmann::json throws out_of_range (406), not parse_error, for it.
  CHECK_THROWS_WITH_AS(parse_hf_config(R"({"hidden_size": 6666660000E09168})", "inline.json"),
                       doctest::Contains("inline.json: not valid JSON"), HfConfigError);
}

TEST_CASE("workloads::parse_hf_config: heads that do not divide the hidden size are rejected") {
  const std::string text = R"({"model_type": "llama", "hidden_size": 100, "num_hidden_layers": 2,
    "num_attention_heads": 3, "intermediate_size": 256, "vocab_size": 1000,
    "max_position_embeddings": 128})";
  CHECK_THROWS_WITH_AS(parse_hf_config(text, "inline.json"),
                       doctest::Contains("inline.json: field 'num_attention_heads'"), HfConfigError);
}
