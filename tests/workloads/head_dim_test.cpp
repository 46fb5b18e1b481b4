// Attention heads wider than hidden / heads (ModelSpec::attention_head_dim, Hugging Face
// `head_dim`): Qwen3's 32 heads of 128 on a 2048-wide residual. The published parameter counts of
// Qwen3-30B-A3B (30.5 B total, 3.3 B activated: the Qwen3 model card) come out only when Q and the
// out-projection are heads x head_dim wide, and the GEMMs, weights and saved activations follow.
#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>

#include "tests/workloads/op_test_util.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

// Qwen/Qwen3-30B-A3B config.json: 48 layers, hidden 2048, 32 heads of head_dim 128, 4 KV heads,
// 128 experts of moe_intermediate_size 768, top-8, every layer MoE, vocab 151936, untied.
ModelSpec qwen3_30b_a3b() {
  ModelSpec m;
  m.layers = 48, m.hidden = 2048, m.heads = 32, m.kv_heads = 4, m.attention_head_dim = 128;
  m.ffn_hidden = 6144, m.seq_len = 4096, m.vocab = 151936;
  m.mlp = MlpKind::SwiGlu, m.norm = NormKind::RmsNorm, m.tied_embeddings = false;
  m.experts = 128, m.experts_per_token = 8, m.moe_ffn_hidden = 768;
  return m;
}

double op_flops(const std::vector<OpCost>& ops, std::string_view name) {
  return op_named(ops, name).fwd_flops.value;
}

}  // namespace

TEST_CASE("workloads::ModelSpec: head_dim defaults to hidden / heads and widens Q when set") {
  ModelSpec m = qwen3_30b_a3b();
  CHECK(m.head_dim() == 128);
  CHECK(m.attention_width() == doctest::Approx(4096));
  m.attention_head_dim = 0;
  CHECK(m.head_dim() == 64);
  CHECK(m.attention_width() == doctest::Approx(2048));
}

TEST_CASE("workloads::ModelSpec: Qwen3-30B-A3B's published 30.5 B parameters and 3.3 B activated") {
  const ModelSpec m = qwen3_30b_a3b();
  CHECK(m.parameters() / 1e9 == doctest::Approx(30.5).epsilon(0.01));
  // Activated per token: everything but the 120 unused experts of every layer.
  const double unused = m.layers * m.expert_parameters() * (1.0 - 8.0 / 128.0);
  CHECK((m.parameters() - unused) / 1e9 == doctest::Approx(3.3).epsilon(0.03));
  ModelSpec narrow = m;
  narrow.attention_head_dim = 0;  // what it would be with heads of hidden / heads: 0.45 B short
  CHECK(m.parameters() - narrow.parameters() == doctest::Approx(48.0 * (2048.0 * 2048 + 2048.0 * 2048 + 2 * 2048.0 * 256)));
}

TEST_CASE("workloads::layer_ops: the QKV and out-projection GEMMs are heads x head_dim wide") {
  const ModelSpec m = qwen3_30b_a3b();
  ModelSpec narrow = m;
  narrow.attention_head_dim = 0;
  OpShape sh;
  sh.seq_len = 4096;
  const auto wide_ops = layer_ops(m, sh, true), narrow_ops = layer_ops(narrow, sh, true);
  const double tokens = 4096;
  CHECK(op_flops(wide_ops, "qkv_proj") == doctest::Approx(2.0 * tokens * (4096 + 2 * 512) * 2048));
  CHECK(op_flops(wide_ops, "attention_out_proj") == doctest::Approx(2.0 * tokens * 2048 * 4096));
  CHECK(op_flops(wide_ops, "attention_out_proj") == doctest::Approx(2.0 * op_flops(narrow_ops, "attention_out_proj")));
  // The attention core scales with the head width: 32 heads of 128 do twice the work of 32 of 64.
  CHECK(op_flops(wide_ops, "flash_attention") == doctest::Approx(2.0 * op_flops(narrow_ops, "flash_attention")));
}

TEST_CASE("workloads::saved_layer_tensors: Q and the attention output are saved at heads x head_dim") {
  const ModelSpec m = qwen3_30b_a3b();
  const auto saved = saved_layer_tensors(m, 1, 1, false, Recompute::None);
  const auto bytes_of = [&](std::string_view name) {
    const auto it = std::find_if(saved.begin(), saved.end(), [&](const SavedTensor& t) { return name == t.name; });
    REQUIRE(it != saved.end());
    return it->bytes;
  };
  CHECK(bytes_of("Q") == doctest::Approx(2.0 * 4096 * 4096));
  CHECK(bytes_of("attention output (out-projection input)") == doctest::Approx(2.0 * 4096 * 4096));
  CHECK(bytes_of("K") == doctest::Approx(2.0 * 4096 * 512));
  CHECK(bytes_of("attention norm input") == doctest::Approx(2.0 * 4096 * 2048));  // the residual stays hidden wide
}
