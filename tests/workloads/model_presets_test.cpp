#include <doctest/doctest.h>

#include "workloads/model/model_presets.h"

using namespace clustersim::workloads;

namespace {
double params_of(const char* id) {
  const ModelSpec* m = find_model_preset(id);
  REQUIRE(m != nullptr);
  return m->parameters();
}
}  // namespace

TEST_CASE("workloads::model presets: every required id exists and is well formed") {
  for (const char* id : {"gpt3-125m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b",
                         "megatron-1t", "llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b",
                         "llama3-405b", "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "kimi-k2",
                         "gpt-oss-120b", "gpt-oss-20b", "nemotron-h-8b", "nemotron-h-47b", "nemotron-h-56b", "nemotron-3-nano-30b-a3b",
                         "nemotron-3-super-120b-a12b", "nemotron-3-ultra-550b-a55b"}) {
    const ModelSpec* m = find_model_preset(id);
    REQUIRE_MESSAGE(m != nullptr, id);
    CHECK(m->hidden % m->heads == 0);
    CHECK(m->heads % m->kv_heads == 0);
  }
  CHECK(all_model_presets().size() == 24);
  CHECK(find_model_preset("gpt4") == nullptr);
}

TEST_CASE("workloads::model presets: parameter counts match the published sizes within 1%") {
  CHECK(params_of("gpt3-175b") >= 174.6e9 * 0.99);
  CHECK(params_of("gpt3-175b") <= 175.2e9 * 1.01);
  CHECK(params_of("gpt3-175b") == doctest::Approx(174.6e9).epsilon(0.01));
  CHECK(params_of("llama2-7b") == doctest::Approx(6.74e9).epsilon(0.01));
  CHECK(params_of("llama2-70b") == doctest::Approx(68.98e9).epsilon(0.01));
  CHECK(params_of("llama3-8b") == doctest::Approx(8.03e9).epsilon(0.01));
  CHECK(params_of("llama3-70b") == doctest::Approx(70.6e9).epsilon(0.01));
  CHECK(params_of("llama3-405b") == doctest::Approx(405.8e9).epsilon(0.01));
  CHECK(params_of("megatron-1t") == doctest::Approx(1.008e12).epsilon(0.01));
  CHECK(params_of("gpt3-125m") == doctest::Approx(125e6).epsilon(0.05));
  CHECK(params_of("gpt3-13b") == doctest::Approx(12.85e9).epsilon(0.02));
}

// Published totals: Mixtral 8x7B 46.7 B and 8x22B 141 B (Mistral AI model cards), DeepSeek-V3
// 671 B of which 37 B active per token (arXiv:2412.19437; tighter checks with MLA in
// attention_variants_test.cpp).
TEST_CASE("workloads::model presets: mixture-of-experts totals match the published sizes") {
  CHECK(params_of("mixtral-8x7b") == doctest::Approx(46.7e9).epsilon(0.01));
  CHECK(params_of("mixtral-8x22b") == doctest::Approx(141e9).epsilon(0.01));
  CHECK(params_of("deepseek-v3") == doctest::Approx(671e9).epsilon(0.01));
  const ModelSpec* v3 = find_model_preset("deepseek-v3");
  REQUIRE(v3 != nullptr);
  CHECK(v3->moe_layers_in(0, v3->layers) == 58);
  CHECK_FALSE(v3->is_moe_layer(2));
  CHECK(v3->is_moe_layer(3));
  // Active parameters: every expert's share replaced by the top-8's.
  const double active = v3->parameters() - 58 * v3->expert_parameters() * (1.0 - 8.0 / 256.0);
  CHECK(active == doctest::Approx(37e9).epsilon(0.06));
}
